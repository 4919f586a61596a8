package store

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// TestSearchStage_SameIndex runs one sequence of bulk loads, small
// additions, edits and removals on two stores, one staging its bulk
// writes and one writing them in place (as before staging), with the
// stage interrupted every way it can be: a flush killed after its first
// transaction and then a bulk batch, a stage found by a new process, an
// edit and a removal while staged. Once flushed, every search bucket must
// hold the same keys and values in both.
func TestSearchStage_SameIndex(t *testing.T) {
	staging, direct := openTestStore(t), openTestStore(t)
	staging.flushBytes, direct.flushBytes = 3000, 3000
	defer staging.StageSearch()()
	r := rand.New(rand.NewSource(11))
	m := searchModel{}
	next := uint32(0)
	vocab := 0
	newDocs := func(n int) []uint32 {
		var docs []uint32
		for range n {
			next++
			terms := map[string][SearchFields]uint32{}
			for range 3 + r.Intn(20) {
				// common words, and words no batch before held
				term := fmt.Sprintf("c%02d", r.Intn(40))
				if r.Intn(3) == 0 {
					vocab++
					term = fmt.Sprintf("n%05d", vocab-r.Intn(min(vocab, 50)))
				}
				tf := terms[term]
				tf[r.Intn(SearchFields)] += uint32(1 + r.Intn(3))
				terms[term] = tf
			}
			m[next] = terms
			docs = append(docs, next)
		}
		return docs
	}
	put := func(docs []uint32) {
		t.Helper()
		for _, s := range []*Store{staging, direct} {
			err := s.Update(func(tx *Tx) error { return tx.PutSearchDocs(m.batch(docs)) })
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	staged := func() (yes bool) {
		staging.View(func(tx *Tx) error { yes = tx.SearchStaged(); return nil })
		return yes
	}
	put(newDocs(300))
	put(newDocs(300))
	if !staged() {
		t.Fatal("two bulk batches left nothing staged")
	}
	direct.View(func(tx *Tx) error {
		if tx.SearchStaged() {
			t.Error("bulk batches were staged without StageSearch")
		}
		return nil
	})
	// a flush killed after its first transaction, then a bulk batch
	if err := staging.Update(func(tx *Tx) error { _, _, err := tx.flushStage(staging.stageFlush()); return err }); err != nil {
		t.Fatal(err)
	}
	put(newDocs(300))
	if staged() {
		t.Error("a bulk batch after a killed flush did not finish it")
	}
	put(newDocs(300))
	put(newDocs(3)) // small, while staged: staged too
	// a stage left by a killed process, found by a new one
	staging.stageTerms = nil
	put(newDocs(260))
	if staged() {
		t.Error("a batch beside a stage it does not know did not flush it")
	}
	// an edit while staged
	put(newDocs(300))
	edited := []uint32{5, 400, next}
	for _, d := range edited {
		m[d] = map[string][SearchFields]uint32{"c01": {1, 0, 0}, fmt.Sprintf("e%d", d): {0, 0, 2}}
	}
	put(edited)
	// a removal while staged
	put(newDocs(300))
	for _, s := range []*Store{staging, direct} {
		if err := s.Update(func(tx *Tx) error { return tx.RemoveSearchDocs([]uint32{7, 900}) }); err != nil {
			t.Fatal(err)
		}
	}
	// and a bulk flushed in small transactions
	put(newDocs(300))
	put(newDocs(300))
	if err := staging.FlushSearchStage(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if staged() {
		t.Fatal("still staged after a flush")
	}
	delete(m, 7)
	delete(m, 900)
	for _, s := range []*Store{staging, direct} {
		s.View(func(tx *Tx) error {
			for _, name := range [][]byte{bSearchMeta, bSearchTerms, bSearchPost, bSearchFwd, bSearchNorms} {
				var keys int
				tx.b(name).ForEach(func(k, v []byte) error {
					keys++
					return nil
				})
				if keys == 0 && string(name) != string(bSearchMeta) {
					t.Errorf("%s is empty", name)
				}
			}
			return nil
		})
	}
	staging.View(func(stx *Tx) error {
		return direct.View(func(dtx *Tx) error {
			for _, name := range [][]byte{bSearchMeta, bSearchTerms, bSearchFwd, bSearchNorms} {
				sc, dc := stx.b(name).Cursor(), dtx.b(name).Cursor()
				sk, sv := sc.First()
				dk, dv := dc.First()
				for sk != nil || dk != nil {
					if !bytes.Equal(sk, dk) || !bytes.Equal(sv, dv) {
						t.Fatalf("%s: staged %x → %x, direct %x → %x", name, sk, sv, dk, dv)
					}
					sk, sv = sc.Next()
					dk, dv = dc.Next()
				}
			}
			// the same postings (a small batch staged after a bulk one is a
			// block of its own, where in place it joins the term's last block)
			for id := uint32(1); id <= getU32(stx.b(bSearchMeta).Get([]byte("next_term"))); id++ {
				var sp, dp []string
				stx.SearchPostings(id, func(doc uint32, tf [SearchFields]uint32) { sp = append(sp, fmt.Sprint(doc, tf)) })
				dtx.SearchPostings(id, func(doc uint32, tf [SearchFields]uint32) { dp = append(dp, fmt.Sprint(doc, tf)) })
				if !slices.Equal(sp, dp) {
					t.Fatalf("term %d: staged %v, direct %v", id, sp, dp)
				}
			}
			return nil
		})
	})
	m.check(t, staging, allTerms(m), "staged")
}

// allTerms lists every term the model holds.
func allTerms(m searchModel) []string {
	seen := map[string]bool{}
	var out []string
	for _, terms := range m {
		for t := range terms {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}
