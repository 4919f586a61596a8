package store

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
)

// encodeReviewV1 is a record as synapse wrote it before deciders and the
// fields' origins (and notes) were kept: today's encoding without them (six empty
// strings at the end), marked version 1.
func encodeReviewV1(r *ReviewRec) []byte {
	c := *r
	c.DecidedBy, c.TitleBy, c.RationaleBy, c.PageBy, c.SourceBy, c.Note = "", "", "", "", "", ""
	b := encodeReview(&c)
	b = b[:len(b)-6]
	b[0] = 1
	return b
}

func TestReview_DecodesVersion1(t *testing.T) {
	old := &ReviewRec{Seq: 3, ID: "abc123", Key: 9, Type: "suggestion", Status: "skipped", Resolution: "skipped",
		Title: "T", Rationale: "R", Origin: "agent", Referenced: []string{"A"}, CreatedNS: 5, ReviewedNS: 6}
	got, err := decodeReview(3, encodeReviewV1(old))
	if err != nil {
		t.Fatal(err)
	}
	want := *old
	want.TitleBy, want.RationaleBy, want.PageBy, want.SourceBy = "agent", "agent", "agent", "agent"
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("version 1 record:\n got %+v\nwant %+v", got, &want)
	}
	r := &ReviewRec{Seq: 1, ID: "x", Key: 2, Type: "confirm", Status: "auto_resolved", Title: "t", Origin: "lint",
		DecidedBy: "user", TitleBy: "lint", RationaleBy: "agent", PageBy: "user", SourceBy: "rule"}
	if got, err := decodeReview(1, encodeReview(r)); err != nil || !reflect.DeepEqual(got, r) {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	// a version 2 record (before notes): today's without the note
	v2 := encodeReview(r)
	v2 = v2[:len(v2)-1]
	v2[0] = 2
	if got, err := decodeReview(1, v2); err != nil || !reflect.DeepEqual(got, r) {
		t.Errorf("version 2 record: %+v, %v", got, err)
	}
	r.Note = "the page says so"
	if got, err := decodeReview(1, encodeReview(r)); err != nil || !reflect.DeepEqual(got, r) {
		t.Errorf("round trip with a note: %+v, %v", got, err)
	}
	if _, err := decodeReview(1, append([]byte{reviewCodecVersion + 1}, encodeReview(r)[1:]...)); err == nil {
		t.Error("a record of a later codec decoded")
	}
}

// A new item keeps an id it is given when the id is free and well formed
// (an id a journal recorded); otherwise it gets the id of its key.
func TestReview_GivenIDs(t *testing.T) {
	s := openTestStore(t)
	err := s.Update(func(tx *Tx) error {
		for _, c := range []struct {
			key    uint64
			given  string
			wantID string
		}{
			{1, "zzzzz1", "zzzzz1"},
			{2, "ZZZZZ1", reviewID(2, 0)}, // taken (normalized)
			{3, "bad!", reviewID(3, 0)},
			{4, "", reviewID(4, 0)},
			{5, reviewID(4, 0), reviewID(5, 0)}, // taken by key 4
			{6, "0I0L0O", "010100"},             // look-alikes normalized
		} {
			r := &ReviewRec{Key: c.key, ID: c.given, Type: "confirm", Status: ReviewPending}
			if err := tx.PutReview(r); err != nil {
				return err
			}
			if r.ID != c.wantID {
				t.Errorf("key %d given %q: id %q, want %q", c.key, c.given, r.ID, c.wantID)
			}
			if got, _ := tx.ReviewByID(c.wantID); got == nil || got.Key != c.key {
				t.Errorf("key %d: lookup by %q found %+v", c.key, c.wantID, got)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReview_DeciderCountsAndReset(t *testing.T) {
	s := openTestStore(t)
	err := s.Update(func(tx *Tx) error {
		for k := uint64(1); k <= 6; k++ {
			r := put(t, tx, k, "suggestion")
			if k <= 4 {
				r.Status, r.DecidedBy = "auto_resolved", []string{"rule", "user", "user", "lint"}[k-1]
				if err := tx.PutReview(r); err != nil {
					return err
				}
			}
		}
		// a count kept before deciders were recorded (a two-part key)
		return tx.b(bReviewCounts).Put(key("confirm", "skipped"), u64(2))
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(tx *Tx) error {
		got := tx.ReviewDeciderCounts()
		want := map[string]map[string]int{"auto_resolved": {"rule": 1, "user": 2, "lint": 1}, "skipped": {"": 2}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("decider counts %v, want %v", got, want)
		}
		if c := tx.ReviewStatusCounts(); c["auto_resolved"] != 4 || c[ReviewPending] != 2 || c["skipped"] != 2 {
			t.Errorf("status counts %v", c)
		}
		if n := tx.ReviewCount(); n != 8 {
			t.Errorf("ReviewCount %d", n)
		}
		return nil
	})
	if err := s.Update(func(tx *Tx) error { return tx.ResetReviews() }); err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(tx *Tx) error {
		if n := tx.ReviewCount(); n != 0 || len(tx.ReviewDeciderCounts()) != 0 {
			t.Errorf("after ResetReviews: %d items, %v", n, tx.ReviewDeciderCounts())
		}
		return nil
	})
	// positions start over
	if err := s.Update(func(tx *Tx) error {
		if r := put(t, tx, 9, "confirm"); r.Seq != 1 {
			t.Errorf("first item after a reset at position %d", r.Seq)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// recJournal records what it is asked to append, or fails.
type recJournal struct {
	lines [][]byte
	fail  error
}

func (j *recJournal) Append(tx *Tx, lines [][]byte) error {
	if j.fail != nil {
		return j.fail
	}
	j.lines = append(j.lines, lines...)
	return tx.SetMeta("journaled", []byte{byte(len(j.lines))})
}

// A transaction's review events reach the journal before it commits, in
// its own transaction; when the journal fails, nothing commits.
func TestReview_JournalBeforeCommit(t *testing.T) {
	s := openTestStore(t)
	j := &recJournal{}
	putJournaled := func(k uint64) error {
		return s.Update(func(tx *Tx) error {
			if err := tx.PutReview(&ReviewRec{Key: k, Type: "confirm", Status: ReviewPending}); err != nil {
				return err
			}
			tx.JournalReview([]byte("event\n"))
			return nil
		})
	}
	// without a journal, a change that journals an event is refused
	if err := putJournaled(1); !errs.Is(err, errs.Internal) {
		t.Errorf("no journal: %v", err)
	}
	s.SetReviewJournal(j)
	if err := putJournaled(1); err != nil || len(j.lines) != 1 {
		t.Fatalf("journaled put: %v, lines %q", err, j.lines)
	}
	j.fail = errors.New("disk full")
	if err := putJournaled(2); err == nil || err.Error() != "disk full" {
		t.Errorf("failing journal: %v", err)
	}
	_ = s.View(func(tx *Tx) error {
		for k, want := range map[uint64]bool{1: true, 2: false} {
			if r, _ := tx.ReviewByKey(k); (r != nil) != want {
				t.Errorf("item %d stored: %v, want %v", k, r != nil, want)
			}
		}
		if v := tx.Meta("journaled"); len(v) != 1 || v[0] != 1 {
			t.Errorf("the journal's own write: %v", v)
		}
		return nil
	})
	// a transaction that journals nothing does not call the journal
	j.fail = errors.New("called")
	if err := s.Update(func(tx *Tx) error { return tx.SetMeta("x", []byte("y")) }); err != nil {
		t.Errorf("a transaction without events: %v", err)
	}
}

// Event times of one store strictly increase, within a transaction and
// across them, whatever the clock says.
func TestReview_StampsIncrease(t *testing.T) {
	s := openTestStore(t)
	s.SetReviewJournal(&recJournal{})
	var stamps []int64
	for _, nows := range [][]int64{{100, 100, 50}, {40}, {1000, 999}} {
		err := s.Update(func(tx *Tx) error {
			for _, now := range nows {
				stamps = append(stamps, tx.ReviewStamp(now))
			}
			tx.JournalReview([]byte("e\n"))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if want := []int64{100, 101, 102, 103, 1000, 1001}; !slices.Equal(stamps, want) {
		t.Errorf("stamps %v, want %v", stamps, want)
	}
	_ = s.View(func(tx *Tx) error {
		if c := tx.ReviewClock(); c != 1001 {
			t.Errorf("clock %d", c)
		}
		return nil
	})
}

// ReplaceReviews builds the same queue as putting the items one by one.
func TestReview_ReplaceReviews(t *testing.T) {
	var recs []*ReviewRec
	for k := uint64(1); k <= 300; k++ {
		r := &ReviewRec{Key: k * 7919, Type: []string{"confirm", "suggestion", "missing-page"}[k%3], Status: []string{ReviewPending, "skipped", "auto_resolved"}[k%5%3],
			Title: fmt.Sprint("item ", k), ID: fmt.Sprintf("a%05d", k%250), CreatedNS: int64(k)}
		if r.Status != ReviewPending {
			r.DecidedBy = []string{"user", "rule"}[k%2]
		}
		recs = append(recs, r)
	}
	copyOf := func() []*ReviewRec {
		out := make([]*ReviewRec, len(recs))
		for i, r := range recs {
			c := *r
			out[i] = &c
		}
		return out
	}
	dump := func(s *Store) string {
		var b strings.Builder
		_ = s.View(func(tx *Tx) error {
			list, total, err := tx.ListReviews(ReviewFilter{Class: ReviewClassAll, Limit: 1000})
			fmt.Fprintln(&b, total, err)
			for _, r := range list {
				byID, _ := tx.ReviewByID(r.ID)
				byKey, _ := tx.ReviewByKey(r.Key)
				fmt.Fprintf(&b, "%+v %v %v\n", *r, byID.Seq, byKey.Seq)
			}
			for _, typ := range []string{"", "confirm"} {
				for _, class := range []string{ReviewPending, ReviewClassResolved, "skipped"} {
					l, n, _ := tx.ListReviews(ReviewFilter{Type: typ, Class: class, Limit: 1000})
					fmt.Fprintln(&b, typ, class, n, len(l))
				}
			}
			fmt.Fprintln(&b, tx.ReviewStatusCounts(), tx.ReviewDeciderCounts())
			return nil
		})
		return b.String()
	}
	one, many := openTestStore(t), openTestStore(t)
	if err := one.Update(func(tx *Tx) error {
		for _, r := range copyOf() {
			if err := tx.PutReview(r); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := many.Update(func(tx *Tx) error {
		put(t, tx, 1, "confirm") // replaced
		return tx.ReplaceReviews(copyOf())
	}); err != nil {
		t.Fatal(err)
	}
	if a, b := dump(one), dump(many); a != b {
		t.Errorf("ReplaceReviews differs from PutReview:\n%s\n---\n%s", a, b)
	}
	// the next new item comes after them
	if err := many.Update(func(tx *Tx) error {
		if r := put(t, tx, 1, "confirm"); r.Seq != 301 {
			t.Errorf("next position %d", r.Seq)
		}
		return tx.ReplaceReviews([]*ReviewRec{{Key: 5, Type: "confirm", Status: ReviewPending}, {Key: 5, Type: "confirm", Status: ReviewPending}})
	}); !errs.Is(err, errs.Internal) {
		t.Errorf("two items with one key: %v", err)
	}
}
