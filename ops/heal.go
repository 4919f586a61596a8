package ops

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// A store whose file is found damaged is rebuilt (store/damage.go): at
// open, by OpenEnv; in use, by Op.Run, which then runs the operation
// again. Either way the review queue is put back (restoreReviewQueue), the
// rebuild is recorded for status and said on stderr, and a scan of the
// vault fills the new store.

// restoreReviewQueue puts the review queue back into a store rebuilt
// because its file was damaged, and records the rebuild (status shows
// it). What could be read of the damaged file's queue (h.Reviews) is put
// back first; then the review journal, the queue's source of truth, is
// replayed over it (review_replay.go: a salvaged queue that no journal
// recorded, one an older synapse kept, is appended to the journal first,
// so nothing of it is lost either). With a journal that replays, no item
// is lost whatever could be salvaged.
func restoreReviewQueue(e *Env, h *store.Healed) (store.HealRecord, error) {
	rec := store.HealRecord{At: h.At, Reason: h.Reason, MovedTo: h.MovedTo, ReviewsExpected: -1}
	sv := h.Reviews
	if sv == nil {
		sv = &store.Salvage{Expected: -1, Problem: "nothing could be read of it"}
	}
	rec.ReviewsExpected, rec.QueueProblem = sv.Expected, sv.Problem
	put := 0
	if err := e.Store.Update(func(tx *store.Tx) (err error) {
		put, err = tx.PutSalvagedReviews(sv.Items)
		return err
	}); err != nil {
		return rec, err
	}
	end, jerr := readEnd(e.files())
	if jerr == nil && end.exists {
		if _, jerr = e.replayQueue(false); jerr == nil {
			rec.FromJournal, rec.QueueProblem = true, ""
		}
	}
	err := e.Store.Update(func(tx *store.Tx) error {
		rec.ReviewsRestored = tx.ReviewCount()
		rec.QueueLost = !rec.FromJournal && (sv.Lost() || put < len(sv.Items))
		switch {
		case rec.QueueLost && jerr != nil:
			rec.QueueProblem = fmt.Sprintf("%s; %s could not be replayed: %s", cmp.Or(rec.QueueProblem, "the damaged queue could not be read in full"), vault.ReviewJournal, errs.Message(jerr))
		case rec.QueueLost && rec.QueueProblem == "":
			rec.QueueProblem = fmt.Sprintf("%d of %d items could be read", len(sv.Items), sv.Expected)
		}
		return tx.SetHealRecord(rec)
	})
	return rec, err
}

// afterHeal finishes a rebuild of the store after damage, if there was
// one (healed): the review queue is put back and the rebuild said. The
// caller then scans the vault into the new store.
func (e *Env) afterHeal(ctx context.Context) (healed bool, err error) {
	h := e.Store.TakeHealed()
	if h == nil {
		return false, nil
	}
	rec, err := restoreReviewQueue(e, h)
	if err != nil {
		return true, err
	}
	if e.Index.Notify != nil {
		e.Index.Notify(HealMessage(e.Vault.Root, rec))
	}
	return true, nil
}

// rebuildStore replaces the store's damaged file (found in use) and
// fills the new store: the review queue, then a scan of the vault unless
// the operation about to run again scans it itself.
func (e *Env) rebuildStore(ctx context.Context, reason string, scans bool) error {
	if err := e.Store.Rebuild(reason); err != nil {
		return err
	}
	if _, err := e.afterHeal(ctx); err != nil {
		return err
	}
	if scans {
		return nil
	}
	_, err := e.Index.Scan(ctx, index.ScanOptions{})
	return err
}

// HealMessage says what a rebuild after damage did, for stderr and logs:
// loudly when review items are lost.
func HealMessage(root string, r store.HealRecord) string {
	moved := r.MovedTo
	if rel, err := filepath.Rel(root, moved); err == nil {
		moved = rel
	}
	msg := fmt.Sprintf("the vault's store was damaged (%s): it was moved to %s and a new one is built from the vault's files", r.Reason, moved)
	if r.FromJournal {
		return msg + fmt.Sprintf("; the review queue was replayed from %s (%d items)", vault.ReviewJournal, r.ReviewsRestored)
	}
	if !r.QueueLost {
		return msg + fmt.Sprintf("; the review queue was kept (%d items)", r.ReviewsRestored)
	}
	what := fmt.Sprintf("%d items restored", r.ReviewsRestored)
	if r.ReviewsExpected >= 0 {
		what = fmt.Sprintf("%d of %d items restored", r.ReviewsRestored, r.ReviewsExpected)
	}
	return msg + fmt.Sprintf("; THE REVIEW QUEUE COULD NOT BE RECOVERED IN FULL: %s (%s); the damaged file stays at %s", what, r.QueueProblem, moved)
}

// healAge is how long status keeps saying that the store was rebuilt
// after damage.
const healAge = 30 * 24 * time.Hour
