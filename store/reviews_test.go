package store

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
)

func openTestStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "synapse.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestReview_CodecRoundTrip(t *testing.T) {
	for _, r := range []*ReviewRec{
		{Seq: 1, ID: "abc123", Key: 1<<63 + 5, Type: "missing-page", Status: ReviewPending, Title: "Example", Origin: "rule", CreatedNS: 1},
		{Seq: 9, ID: "zzzzzz", Key: 7, Type: "confirm", Status: "deep_researched", Resolution: "out\nput", Title: "Café",
			Rationale: "why", Page: "wiki/a.md", Source: "raw/sources/x.md", Referenced: []string{"A", "B"},
			Queries: []string{"q"}, Origin: "agent", CreatedNS: -5, ReviewedNS: 1 << 62, ClaimNS: 3},
	} {
		got, err := decodeReview(r.Seq, encodeReview(r))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, r)
		}
	}
	if _, err := decodeReview(1, []byte{reviewCodecVersion, 1, 2}); err == nil {
		t.Error("truncated record decoded without error")
	}
}

func FuzzDecodeReview(f *testing.F) {
	f.Add(encodeReview(&ReviewRec{ID: "a", Type: "t", Status: "pending", Referenced: []string{"x"}}))
	f.Add([]byte{reviewCodecVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeReview(1, b)
		if err != nil {
			return
		}
		// whatever decodes re-encodes to a record that decodes the same
		r2, err := decodeReview(1, encodeReview(r))
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("re-encode changed the record: %+v vs %+v (%v)", r, r2, err)
		}
	})
}

func TestReview_NormalizeID(t *testing.T) {
	for in, want := range map[string]string{"AB12CD": "ab12cd", " #ab12cd ": "ab12cd", "lio0": "1100", "I1": "11"} {
		if got := NormalizeReviewID(in); got != want {
			t.Errorf("NormalizeReviewID(%q) = %q, want %q", in, got, want)
		}
	}
	if reviewID(42, 0) == reviewID(42, 1) {
		t.Error("salt does not change the id")
	}
	for _, c := range reviewID(1<<64-1, 3) {
		if !slices.Contains([]rune(idAlphabet), c) {
			t.Errorf("id character %q outside the alphabet", c)
		}
	}
}

// put adds a new pending item with the given key and type.
func put(t *testing.T, tx *Tx, k uint64, typ string) *ReviewRec {
	t.Helper()
	r := &ReviewRec{Key: k, Type: typ, Status: ReviewPending, Title: fmt.Sprint("item ", k), Origin: "agent", CreatedNS: int64(k)}
	if err := tx.PutReview(r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReview_PutListCounts(t *testing.T) {
	s := openTestStore(t)
	types := []string{"missing-page", "suggestion", "confirm"}
	statuses := []string{ReviewPending, "skipped", "dismissed", "created"}
	type want struct{ typ, status string }
	all := map[uint64]want{}
	err := s.Update(func(tx *Tx) error {
		for k := uint64(1); k <= 60; k++ {
			typ := types[k%3]
			r := put(t, tx, k, typ)
			st := statuses[k%4]
			if st != ReviewPending {
				r.Status, r.ReviewedNS = st, 1
				if err := tx.PutReview(r); err != nil {
					return err
				}
			}
			all[k] = want{typ, st}
		}
		// a duplicate key is refused
		if err := tx.PutReview(&ReviewRec{Key: 5, Type: "suggestion", Status: ReviewPending}); !errs.Is(err, errs.Conflict) {
			t.Errorf("duplicate key: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.View(func(tx *Tx) error {
		for _, typ := range append([]string{""}, types...) {
			for _, class := range append([]string{ReviewClassAll, ReviewClassResolved}, statuses...) {
				var keys []uint64
				for k := uint64(1); k <= 60; k++ {
					w := all[k]
					if (typ == "" || w.typ == typ) && (class == ReviewClassAll || class == w.status ||
						class == ReviewClassResolved && w.status != ReviewPending) {
						keys = append(keys, k)
					}
				}
				for _, page := range []struct{ off, lim int }{{0, 100}, {3, 4}, {len(keys) - 1, 10}, {len(keys), 10}} {
					recs, total, err := tx.ListReviews(ReviewFilter{Type: typ, Class: class, Offset: page.off, Limit: page.lim})
					if err != nil {
						return err
					}
					if total != len(keys) {
						t.Errorf("type %q class %q: total %d, want %d", typ, class, total, len(keys))
					}
					var got []uint64
					for _, r := range recs {
						got = append(got, r.Key)
					}
					wantKeys := keys[min(page.off, len(keys)):min(page.off+page.lim, len(keys))]
					if !slices.Equal(got, wantKeys) && !(len(got) == 0 && len(wantKeys) == 0) {
						t.Errorf("type %q class %q offset %d limit %d: %v, want %v", typ, class, page.off, page.lim, got, wantKeys)
					}
				}
			}
		}
		counts := tx.ReviewStatusCounts()
		if counts[ReviewPending] != 15 || counts["skipped"] != 15 || counts["created"] != 15 {
			t.Errorf("status counts %v", counts)
		}
		var pending []uint64
		if err := tx.EachPendingReview("confirm", func(r *ReviewRec) bool { pending = append(pending, r.Key); return true }); err != nil {
			return err
		}
		if !slices.Equal(pending, []uint64{8, 20, 32, 44, 56}) {
			t.Errorf("pending confirm items %v", pending)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReview_TerminalIsNeverRewritten(t *testing.T) {
	s := openTestStore(t)
	var id string
	err := s.Update(func(tx *Tx) error {
		r := put(t, tx, 1, "suggestion")
		id = r.ID
		r.Status = "dismissed"
		return tx.PutReview(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	var before []byte
	_ = s.View(func(tx *Tx) error { before = append([]byte(nil), tx.b(bReviews).Get(u64(1))...); return nil })
	for _, change := range []func(r *ReviewRec){
		func(r *ReviewRec) { r.Status = ReviewPending },
		func(r *ReviewRec) { r.Status = "skipped" },
		func(r *ReviewRec) { r.Title = "other" },
		func(r *ReviewRec) {},
	} {
		err := s.Update(func(tx *Tx) error {
			r, err := tx.ReviewByID(id)
			if err != nil {
				return err
			}
			change(r)
			return tx.PutReview(r)
		})
		if !errs.Is(err, errs.Conflict) {
			t.Errorf("rewriting a dismissed item: %v, want conflict", err)
		}
	}
	_ = s.View(func(tx *Tx) error {
		if after := tx.b(bReviews).Get(u64(1)); string(after) != string(before) {
			t.Error("the dismissed item changed")
		}
		return nil
	})
}

func TestReview_ResetDerivedKeepsQueue(t *testing.T) {
	s := openTestStore(t)
	var id string
	if err := s.Update(func(tx *Tx) error { id = put(t, tx, 77, "confirm").ID; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *Tx) error { return tx.ResetDerived() }); err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(tx *Tx) error {
		r, err := tx.ReviewByID(strings.ToUpper(id))
		if err != nil || r == nil || r.Key != 77 {
			t.Errorf("item after ResetDerived: %+v, %v", r, err)
		}
		if n := tx.ReviewStatusCounts()[ReviewPending]; n != 1 {
			t.Errorf("pending count %d after ResetDerived", n)
		}
		return nil
	})
}

// A store file written before the queue existed is opened read-only
// without its buckets: every read answers "empty" instead of failing.
func TestReview_ReadsWithoutBuckets(t *testing.T) {
	s := openTestStore(t)
	err := s.Update(func(tx *Tx) error {
		for _, b := range [][]byte{bReviews, bReviewID, bReviewKey, bReviewOrder, bReviewCounts} {
			if err := tx.tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(tx *Tx) error {
		if r, err := tx.ReviewByID("abcdef"); r != nil || err != nil {
			t.Errorf("ReviewByID: %v %v", r, err)
		}
		if r, err := tx.ReviewByKey(1); r != nil || err != nil {
			t.Errorf("ReviewByKey: %v %v", r, err)
		}
		if recs, total, err := tx.ListReviews(ReviewFilter{Limit: 10}); len(recs) != 0 || total != 0 || err != nil {
			t.Errorf("ListReviews: %v %d %v", recs, total, err)
		}
		if c := tx.ReviewStatusCounts(); len(c) != 0 {
			t.Errorf("counts %v", c)
		}
		return tx.EachPendingReview("", func(*ReviewRec) bool { t.Error("an item"); return true })
	})
}
