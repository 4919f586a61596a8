package store

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// searchModel is what the index should hold: doc → term → tf.
type searchModel map[uint32]map[string][SearchFields]uint32

func (m searchModel) batch(docs []uint32) *SearchBatch {
	b := &SearchBatch{}
	idx := map[string]uint32{}
	for _, d := range docs {
		sd := SearchDoc{Doc: d}
		terms := make([]string, 0, len(m[d]))
		for t := range m[d] {
			terms = append(terms, t)
		}
		slices.Sort(terms)
		for _, t := range terms {
			i, ok := idx[t]
			if !ok {
				i = uint32(len(b.Terms))
				idx[t] = i
				b.Terms = append(b.Terms, t)
			}
			tf := m[d][t]
			sd.Terms = append(sd.Terms, SearchTF{Term: i, TF: tf})
			for f := range tf {
				sd.Len[f] += tf[f]
			}
		}
		if len(terms) > 0 {
			sd.Names = []SearchName{{Kind: 1, Terms: []uint32{idx[terms[0]]}}}
		}
		b.Docs = append(b.Docs, sd)
	}
	return b
}

// check compares every term's postings, the stats and the forward records
// with the model.
func (m searchModel) check(t *testing.T, s *Store, vocab []string, step string) {
	t.Helper()
	type pst struct {
		doc uint32
		tf  [SearchFields]uint32
	}
	err := s.View(func(tx *Tx) error {
		want := map[string][]pst{}
		var docs uint32
		var lens [SearchFields]uint64
		for d, terms := range m {
			docs++
			for term, tf := range terms {
				want[term] = append(want[term], pst{d, tf})
				for f := range tf {
					lens[f] += uint64(tf[f])
				}
			}
		}
		for _, term := range vocab {
			w := want[term]
			slices.SortFunc(w, func(a, b pst) int { return cmpU32(a.doc, b.doc) })
			st, ok := tx.LookupSearchTerm(term)
			if ok != (len(w) > 0) {
				t.Fatalf("%s: term %q found=%v, want %d postings", step, term, ok, len(w))
			}
			if !ok {
				continue
			}
			if int(st.DF) != len(w) {
				t.Fatalf("%s: term %q df %d, want %d", step, term, st.DF, len(w))
			}
			got := make([]pst, 0, len(w))
			if err := tx.SearchPostings(st.ID, func(doc uint32, tf [SearchFields]uint32) {
				got = append(got, pst{doc, tf})
			}); err != nil {
				return err
			}
			if !slices.Equal(got, w) {
				t.Fatalf("%s: term %q postings\n got %v\nwant %v", step, term, got, w)
			}
			got = got[:0]
			if err := tx.SearchPostingBlocks(st.ID, func(ps []SearchPosting) {
				for _, p := range ps {
					got = append(got, pst{p.Doc, [SearchFields]uint32{uint32(p.TF[0]), uint32(p.TF[1]), uint32(p.TF[2])}})
				}
			}); err != nil {
				return err
			}
			if !slices.Equal(got, w) {
				t.Fatalf("%s: term %q block postings\n got %v\nwant %v", step, term, got, w)
			}
			// block headers: doc ranges, counts and exact score bounds
			blocks, err := tx.SearchBlocks(st.ID, nil)
			if err != nil {
				return err
			}
			got = got[:0]
			prevLast := uint32(0)
			for bi, blk := range blocks {
				ps, err := blk.Decode(nil)
				if err != nil {
					return err
				}
				if len(ps) == 0 || int(blk.Count) != len(ps) || blk.First > ps[0].Doc || blk.Last != ps[len(ps)-1].Doc || (bi > 0 && blk.First <= prevLast) {
					t.Fatalf("%s: term %q block %d: header %+v for postings %v (previous last %d)", step, term, bi, blk, ps, prevLast)
				}
				prevLast = blk.Last
				wantTF := [SearchFields]uint16{}
				wantLen := [SearchFields]uint8{255, 255, 255}
				for _, p := range ps {
					got = append(got, pst{p.Doc, [SearchFields]uint32{uint32(p.TF[0]), uint32(p.TF[1]), uint32(p.TF[2])}})
					var l [SearchFields]uint32
					for _, tf := range m[p.Doc] {
						for f := range tf {
							l[f] += tf[f]
						}
					}
					for f := range p.TF {
						if p.TF[f] > 0 {
							wantTF[f] = max(wantTF[f], p.TF[f])
							wantLen[f] = min(wantLen[f], QuantizeLength(l[f]))
						}
					}
				}
				if blk.MaxTF != wantTF || blk.MinLen != wantLen {
					t.Fatalf("%s: term %q block %d bound tf %v len %v, want tf %v len %v", step, term, bi, blk.MaxTF, blk.MinLen, wantTF, wantLen)
				}
			}
			if !slices.Equal(got, w) {
				t.Fatalf("%s: term %q SearchBlocks postings\n got %v\nwant %v", step, term, got, w)
			}
		}
		st := tx.SearchStats()
		if st.Docs != docs || st.Len != lens {
			t.Fatalf("%s: stats %+v, want docs %d lens %v", step, st, docs, lens)
		}
		norms := tx.SearchNorms()
		for d, terms := range m {
			ids, l, ok, err := tx.SearchDocTerms(d)
			if err != nil || !ok || len(ids) != len(terms) || !slices.IsSorted(ids) {
				t.Fatalf("%s: doc %d forward record %v ok=%v err=%v, want %d terms", step, d, ids, ok, err, len(terms))
			}
			if n := norms.Get(d); n != [SearchFields]uint8{QuantizeLength(l[0]), QuantizeLength(l[1]), QuantizeLength(l[2])} {
				t.Fatalf("%s: doc %d norms %v for lengths %v", step, d, n, l)
			}
			names := 0
			if err := tx.EachSearchName(d, func(kind uint8, ts []uint32) {
				names++
				if kind != 1 || len(ts) != 1 {
					t.Fatalf("%s: doc %d name kind %d terms %v", step, d, kind, ts)
				}
			}); err != nil {
				return err
			}
			if names != 1 {
				t.Fatalf("%s: doc %d has %d names, want 1", step, d, names)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSearchIndex_RandomUpdates drives the postings store through random
// bulk loads, appends, replacements and removals, checking it against a
// model after every step; the small vocabulary makes common terms span
// many blocks, so blocks are appended to, merged, split and emptied.
func TestSearchIndex_RandomUpdates(t *testing.T) {
	s := openTestStore(t)
	// staged blocks move in many small transactions
	s.flushBytes = 2000
	defer s.StageSearch()()
	r := rand.New(rand.NewSource(7))
	vocab := make([]string, 60)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("t%02d", i)
	}
	randomDoc := func() map[string][SearchFields]uint32 {
		terms := map[string][SearchFields]uint32{}
		n := 1 + r.Intn(25)
		for range n {
			// skewed: low-numbered terms are common
			term := vocab[min(r.Intn(len(vocab)), r.Intn(len(vocab)))]
			tf := terms[term]
			tf[r.Intn(SearchFields)] += uint32(1 + r.Intn(3))
			if r.Intn(50) == 0 {
				tf[2] += 40 // the escaped encoding
			}
			terms[term] = tf
		}
		return terms
	}
	m := searchModel{}
	next := uint32(0)
	live := func() []uint32 {
		var out []uint32
		for d := range m {
			out = append(out, d)
		}
		slices.Sort(out)
		return out
	}
	for step := 0; step < 60; step++ {
		var name string
		var err error
		switch op := r.Intn(10); {
		case step == 0 || op == 0: // a bulk load of new docs
			var docs []uint32
			for range 300 + r.Intn(200) {
				next++
				m[next] = randomDoc()
				docs = append(docs, next)
			}
			name = fmt.Sprintf("step %d bulk %d", step, len(docs))
			err = s.Update(func(tx *Tx) error { return tx.PutSearchDocs(m.batch(docs)) })
			if err == nil {
				// its blocks are staged (searchstage.go): moved into place in
				// small transactions, or by one killed after its first, or left
				// for the next write to move
				switch r.Intn(3) {
				case 0:
					name += " flushed"
					err = s.FlushSearchStage(context.Background(), nil)
				case 1:
					name += " flush killed"
					err = s.Update(func(tx *Tx) error { _, _, err := tx.flushStage(s.stageFlush()); return err })
				default:
					name += " staged"
					if r.Intn(2) == 0 {
						// as a new process finds it: staged by another
						name += " (by another)"
						s.stageTerms = nil
					}
				}
			}
		case op < 4: // a few new docs
			var docs []uint32
			for range 1 + r.Intn(5) {
				next++
				m[next] = randomDoc()
				docs = append(docs, next)
			}
			name = fmt.Sprintf("step %d add %v", step, docs)
			err = s.Update(func(tx *Tx) error { return tx.PutSearchDocs(m.batch(docs)) })
		case op < 7: // replace some docs (and add one)
			l := live()
			var docs []uint32
			for range 1 + r.Intn(20) {
				d := l[r.Intn(len(l))]
				if !slices.Contains(docs, d) {
					m[d] = randomDoc()
					docs = append(docs, d)
				}
			}
			next++
			m[next] = randomDoc()
			docs = append(docs, next)
			name = fmt.Sprintf("step %d replace %d", step, len(docs))
			err = s.Update(func(tx *Tx) error { return tx.PutSearchDocs(m.batch(docs)) })
		default: // remove some docs, and one unknown
			l := live()
			docs := []uint32{next + 1000}
			for range 1 + r.Intn(40) {
				d := l[r.Intn(len(l))]
				delete(m, d)
				docs = append(docs, d)
			}
			name = fmt.Sprintf("step %d remove %d", step, len(docs))
			err = s.Update(func(tx *Tx) error { return tx.RemoveSearchDocs(docs) })
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var staged bool
		s.View(func(tx *Tx) error { staged = tx.SearchStaged(); return nil })
		if staged {
			if !strings.Contains(name, "staged") && !strings.Contains(name, "killed") && !strings.Contains(name, "add") {
				t.Fatalf("%s: blocks still staged", name)
			}
			continue // an index in the making: checked once in place
		}
		m.check(t, s, vocab, name)
	}
	// removing everything leaves no postings and no documents
	err := s.Update(func(tx *Tx) error { return tx.RemoveSearchDocs(live()) })
	if err != nil {
		t.Fatal(err)
	}
	m = searchModel{}
	m.check(t, s, vocab, "remove all")
	s.View(func(tx *Tx) error {
		if st := tx.SearchIndexSize(); st.Blocks != 0 || st.Docs != 0 {
			t.Errorf("after removing every doc: %+v", st)
		}
		return nil
	})
}

// TestSearchIndex_TermPrefix lists dictionary terms by prefix, skipping
// terms that lost their last document.
func TestSearchIndex_TermPrefix(t *testing.T) {
	s := openTestStore(t)
	m := searchModel{
		1: {"猫は": {0, 0, 1}, "猫が": {0, 0, 2}, "犬": {1, 0, 0}},
		2: {"猫は": {0, 0, 1}},
	}
	if err := s.Update(func(tx *Tx) error { return tx.PutSearchDocs(m.batch([]uint32{1, 2})) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *Tx) error { return tx.RemoveSearchDocs([]uint32{1}) }); err != nil {
		t.Fatal(err)
	}
	s.View(func(tx *Tx) error {
		got := tx.SearchTermsWithPrefix("猫", 10)
		if len(got) != 1 || got[0].Term != "猫は" || got[0].DF != 1 {
			t.Errorf("prefix 猫 = %+v, want only 猫は with df 1", got)
		}
		if _, ok := tx.LookupSearchTerm("犬"); ok {
			t.Error("a term without documents is still found")
		}
		return nil
	})
}

func TestQuantizeLength(t *testing.T) {
	prev := uint8(0)
	for _, n := range []uint32{0, 1, 47, 48, 49, 100, 1000, 10000, 100000, 1 << 30} {
		q := QuantizeLength(n)
		if q < prev {
			t.Errorf("QuantizeLength(%d) = %d < %d: not monotonic", n, q, prev)
		}
		prev = q
		if n < 48 && uint32(DequantizeLength(q)) != n {
			t.Errorf("small length %d not exact: %v", n, DequantizeLength(q))
		}
		if n >= 48 && n < 100000 {
			if d := float64(DequantizeLength(q)); d < float64(n)*0.95 || d > float64(n)*1.05 {
				t.Errorf("length %d decodes to %v, more than 5%% off", n, d)
			}
		}
	}
}

// TestSearchIndex_MissingBuckets: a store written by a synapse without
// search has no search buckets; a read-only reader sees that instead of
// failing.
func TestSearchIndex_MissingBuckets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *Tx) error { return tx.tx.DeleteBucket(bSearchPost) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ro.View(func(tx *Tx) error {
		if tx.SearchReady() {
			t.Error("SearchReady with a bucket missing")
		}
		return nil
	})
	ro.Close()
	// a read-write open creates it again
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.View(func(tx *Tx) error {
		if !tx.SearchReady() {
			t.Error("not ready after a read-write open")
		}
		return nil
	})
}
