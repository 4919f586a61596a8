package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
)

func storeWithReviews(t *testing.T, path string, n int) {
	t.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Update(func(tx *Tx) error {
		for i := 0; i < n; i++ {
			if err := tx.PutReview(&ReviewRec{Key: uint64(i + 1), Type: "suggestion", Status: ReviewPending, Title: "t"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func countReviews(t *testing.T, s *Store) int {
	t.Helper()
	n := 0
	if err := s.View(func(tx *Tx) error {
		_, n, _ = tx.ListReviews(ReviewFilter{Limit: 1})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOpen_EmptyFileIsDamageNotANewStore: a store file cut to 0 bytes is
// not taken for a new store (bbolt would make it one, and the review
// queue would be gone without a word): a read-only open says it is
// damaged; a read-write one moves it aside, makes a new store and says
// that the queue could not be read back.
func TestOpen_EmptyFileIsDamageNotANewStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "synapse.db")
	storeWithReviews(t, path, 2)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, ErrDamaged) || errs.CodeOf(err) != errs.Unavailable {
		t.Fatalf("read-only open: %v", err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.TakeHealed()
	if h == nil || !strings.Contains(h.Reason, "0 bytes") || !h.Reviews.Lost() {
		t.Fatalf("healed %+v", h)
	}
	if st, err := os.Stat(h.MovedTo); err != nil || st.Size() != 0 {
		t.Errorf("moved aside: %v", err)
	}
	if s.TakeHealed() != nil {
		t.Error("TakeHealed twice")
	}
}

// TestRebuild_SalvagesTheQueue: a store found damaged in use is replaced
// in place (the same Store, now on a new file) and what its queue held is
// read back; put into the new store, every item keeps its id, position
// and status, and new items come after them.
func TestRebuild_SalvagesTheQueue(t *testing.T) {
	path := filepath.Join(t.TempDir(), "synapse.db")
	storeWithReviews(t, path, 3)
	s, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var before []*ReviewRec
	_ = s.View(func(tx *Tx) error { before, _, _ = tx.ListReviews(ReviewFilter{Limit: 10}); return nil })
	if err := s.Rebuild("a test"); err != nil {
		t.Fatal(err)
	}
	h := s.TakeHealed()
	if h == nil || h.Reviews.Lost() || len(h.Reviews.Items) != 3 || s.ReadOnly() {
		t.Fatalf("healed %+v, read-only %v", h, s.ReadOnly())
	}
	if n := countReviews(t, s); n != 0 {
		t.Fatalf("the new store holds %d items before they are put back", n)
	}
	err = s.Update(func(tx *Tx) error {
		if n, err := tx.PutSalvagedReviews(h.Reviews.Items); err != nil || n != 3 {
			t.Errorf("put back %d: %v", n, err)
		}
		return tx.PutReview(&ReviewRec{Key: 99, Type: "suggestion", Status: ReviewPending, Title: "new"})
	})
	if err != nil {
		t.Fatal(err)
	}
	var after []*ReviewRec
	_ = s.View(func(tx *Tx) error { after, _, _ = tx.ListReviews(ReviewFilter{Limit: 10}); return nil })
	if len(after) != 4 || after[3].Seq != 4 || after[3].Title != "new" {
		t.Fatalf("after: %d items", len(after))
	}
	for i, r := range before {
		if after[i].ID != r.ID || after[i].Seq != r.Seq || after[i].Status != r.Status {
			t.Errorf("item %d: %+v, was %+v", i, after[i], r)
		}
	}
}

// TestGuard_PanicsTold: a panic raised in bbolt (the file) is damage; one
// raised anywhere else is a bug, reported as an internal error with a
// short message, never as damage (which would move a good store aside).
func TestGuard_PanicsTold(t *testing.T) {
	err := guard("x.db", func() error { panic("boom") })
	if errs.CodeOf(err) != errs.Internal || errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a panic of synapse's own: %v", err)
	}
	var m map[string]int
	err = guard("x.db", func() error { m["a"] = 1; return nil })
	if errors.Is(err, ErrDamaged) {
		t.Errorf("a nil map write: %v", err)
	}
	stack := []byte("goroutine 1 [running]:\nruntime/debug.Stack()\n\tx.go:1\npanic({0x1, 0x2})\n\tpanic.go:1\n" +
		"runtime.goPanicIndex(0x1, 0x2)\n\tpanic.go:2\ngo.etcd.io/bbolt.(*Cursor).search(0x3)\n\tcursor.go:1\n")
	if !raisedIn(stack, "go.etcd.io/bbolt") {
		t.Error("an index panic in bbolt is not seen as bbolt's")
	}
	if raisedIn([]byte("goroutine 1:\npanic({})\n\tp.go:1\ngithub.com/x/y.f()\n\tf.go:1\n"), "go.etcd.io/bbolt") {
		t.Error("a panic elsewhere is taken for bbolt's")
	}
}
