package store

import (
	"encoding/binary"

	"github.com/synapse-wiki/synapse/errs"
)

// The review queue is a cache of the review journal, a file of the vault
// (package ops writes and replays it). Every change to the queue is
// appended to the journal before the transaction that makes it commits:
// a command collects its events as lines in its transaction
// (Tx.JournalReview), and Update hands them to the Store's ReviewJournal
// after the transaction's function returned and before bbolt commits. The
// journal is fsync'd when Append returns, so a change the command answers
// for is on disk twice; a crash between the two leaves the journal ahead
// of the store, which the next open notices and replays.
//
// Meta keys of the journal (package ops encodes the mark):
//
//	"review_clock"           → u64 the latest event time handed out (Unix ns)
//	"review_journal"         → the mark: what the store knows of the journal it matches

// ReviewJournal appends review events to the journal file.
type ReviewJournal interface {
	// Append writes lines (each ending in '\n') at the end of the journal
	// and returns once they are on stable storage. It runs inside the
	// write transaction that made the changes (tx), which it may use to
	// record what the journal now is (SetMeta); an error rolls the
	// transaction back.
	Append(tx *Tx, lines [][]byte) error
}

// SetReviewJournal sets the journal the store's transactions append their
// review events to. A transaction that journals an event on a Store
// without a journal fails (the change would be lost on the next replay).
func (s *Store) SetReviewJournal(j ReviewJournal) { s.journal = j }

// reviewTx is a write transaction's review events, in the order they were
// made, and its event clock.
type reviewTx struct {
	lines [][]byte
	clock int64 // the latest time handed out; 0 = not read yet
}

// JournalReview adds an event (one line of the journal, ending in '\n') to
// the transaction: it is appended to the journal before the transaction
// commits, and not at all if it rolls back.
func (tx *Tx) JournalReview(line []byte) {
	tx.rev.lines = append(tx.rev.lines, line)
}

// ReviewStamp returns the time of a new review event: now, or one
// nanosecond after the latest event time the store handed out when that is
// not before now. The event times of one store are thus strictly
// increasing whatever the clock does, so the journal orders the events of
// one machine as they were made.
func (tx *Tx) ReviewStamp(now int64) int64 {
	if tx.rev.clock == 0 {
		tx.rev.clock = tx.ReviewClock()
	}
	if now <= tx.rev.clock {
		now = tx.rev.clock + 1
	}
	tx.rev.clock = now
	return now
}

// ReviewClock returns the latest review event time the store handed out
// or replayed (Unix ns; 0 = none).
func (tx *Tx) ReviewClock() int64 {
	if v := tx.b(bMeta).Get([]byte(metaReviewClock)); len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

// SetReviewClock records the latest event time a replay found, so that
// new events come after it.
func (tx *Tx) SetReviewClock(ns int64) error {
	tx.rev.clock = ns
	return tx.b(bMeta).Put([]byte(metaReviewClock), u64(uint64(ns)))
}

const metaReviewClock = "review_clock"

// flushReviews appends the transaction's review events to the journal and
// records the clock; Update calls it before committing.
func (tx *Tx) flushReviews() error {
	if len(tx.rev.lines) == 0 {
		return nil
	}
	if tx.s == nil || tx.s.journal == nil {
		return errs.E(errs.Internal, "the review queue changed without a journal to record it")
	}
	if err := tx.s.journal.Append(tx, tx.rev.lines); err != nil {
		return err
	}
	tx.rev.lines = nil
	if tx.rev.clock == 0 {
		return nil
	}
	return tx.SetReviewClock(tx.rev.clock)
}
