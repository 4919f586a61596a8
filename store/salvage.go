package store

import (
	"encoding/json"
	"time"

	"github.com/synapse-wiki/synapse/errs"
)

// PutSalvagedReviews puts review items read back from a damaged store
// (Salvage.Items) into this one, each at its queue position with its id,
// key and status, as they were. An item whose key or position is already
// taken (put back by other means first) is skipped. It returns how many
// it put.
func (tx *Tx) PutSalvagedReviews(items []*ReviewRec) (int, error) {
	bRev, bID, bKey, bOrd := tx.b(bReviews), tx.b(bReviewID), tx.b(bReviewKey), tx.b(bReviewOrder)
	n := 0
	for _, r := range items {
		if r.Seq == 0 || r.ID == "" || r.Type == "" || r.Status == "" {
			continue
		}
		if bRev.Get(u64(r.Seq)) != nil || bKey.Get(u64(r.Key)) != nil || bID.Get([]byte(r.ID)) != nil {
			continue
		}
		if err := bID.Put([]byte(r.ID), u64(r.Seq)); err != nil {
			return n, err
		}
		if err := bKey.Put(u64(r.Key), u64(r.Seq)); err != nil {
			return n, err
		}
		for _, k := range orderKeys(r.Type, r.Status, r.Seq) {
			if err := bOrd.Put(k, []byte{}); err != nil {
				return n, err
			}
		}
		if err := tx.addReviewCount(r.Type, r.Status, r.DecidedBy, 1); err != nil {
			return n, err
		}
		if err := bRev.Put(u64(r.Seq), encodeReview(r)); err != nil {
			return n, err
		}
		if r.Seq > bRev.Sequence() {
			if err := bRev.SetSequence(r.Seq); err != nil {
				return n, err
			}
		}
		n++
	}
	return n, nil
}

// HealRecord is what the store remembers of the last time its file was
// found damaged and rebuilt (status shows it).
type HealRecord struct {
	At      time.Time `json:"at"`
	Reason  string    `json:"reason"`
	MovedTo string    `json:"moved_to"`
	// ReviewsRestored counts the review items put back; ReviewsExpected
	// the items the damaged store held, when its counters could be read
	// (-1 otherwise).
	ReviewsRestored int `json:"reviews_restored"`
	ReviewsExpected int `json:"reviews_expected"`
	// QueueLost is set when review items are known or likely to be lost;
	// QueueProblem says why.
	QueueLost    bool   `json:"queue_lost"`
	QueueProblem string `json:"queue_problem,omitempty"`
	// FromJournal is set when the queue was replayed from the review
	// journal (nothing of it lost, whatever the damaged file held).
	FromJournal bool `json:"from_journal,omitempty"`
}

const metaHealed = "healed"

// SetHealRecord records a rebuild after damage (kept by reindex).
func (tx *Tx) SetHealRecord(r HealRecord) error {
	data, err := json.Marshal(r)
	if err != nil {
		return errs.Wrap(errs.Internal, err, "encode the heal record: %v", err)
	}
	return tx.SetMeta(metaHealed, data)
}

// HealRecord returns the last rebuild after damage, if any.
func (tx *Tx) HealRecord() (HealRecord, bool) {
	var r HealRecord
	v := tx.b(bMeta).Get([]byte(metaHealed))
	if v == nil || json.Unmarshal(v, &r) != nil {
		return r, false
	}
	return r, true
}
