package search

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/internal/vaultgen"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// exhaustive scores every posting of the run's scoring terms (the
// reference topK must agree with) and returns the best n.
func (r *run) exhaustive(n int, ok func(uint32) bool) ([]candidate, error) {
	if r.impossible {
		return nil, nil
	}
	sc := newScorer(r)
	scores := map[uint32]float32{}
	held := map[uint32]int{}
	required := 0
	for i := range r.terms {
		t := &r.terms[i]
		if t.weight == 0 {
			continue
		}
		if t.required {
			required++
			if len(t.blocks) == 0 {
				return nil, nil
			}
		}
		idf := float32(t.idf * t.weight)
		err := r.tx.SearchPostingBlocks(t.id, func(ps []store.SearchPosting) {
			for i := range ps {
				d := ps[i].Doc
				if !ok(d) {
					continue
				}
				if t.required {
					held[d]++
				}
				scores[d] += sc.score(&ps[i], idf)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	var out []candidate
	for d, s := range scores {
		if s > 0 && held[d] == required {
			out = append(out, candidate{doc: d, score: float64(s)})
		}
	}
	sortCands(out)
	return out[:min(n, len(out))], nil
}

// indexInSmallBatches indexes a generated vault's pages through the search
// indexer in batches of 40, so common terms span many blocks made by
// appends and splits (not only the bulk path a reindex takes).
func indexInSmallBatches(t *testing.T, pages int) *store.Store {
	t.Helper()
	dir := t.TempDir()
	if _, err := vaultgen.Generate(dir, vaultgen.Options{Pages: pages, Seed: 3, BodyWords: 160, CorpusDir: testvault.CorpusDir()}); err != nil {
		t.Fatal(err)
	}
	var ips []index.IndexedPage
	doc := uint32(0)
	err := filepath.WalkDir(filepath.Join(dir, "wiki"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		pg := markdown.Parse(filepath.ToSlash(rel), data)
		doc += 1 + uint32(len(ips)%3) // gaps, as deletions leave
		typ := pg.Type
		if typ == "" {
			typ = vault.TypeFromPath(rel)
		}
		ips = append(ips, index.IndexedPage{Doc: doc, Parsed: pg, Rec: &store.PageRec{
			Doc: doc, Path: rel, Title: pg.Title, Type: typ, Aliases: pg.Aliases, Tags: pg.Tags, Sources: pg.Sources}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for i := 0; i < len(ips); i += 40 {
		batch := ips[i:min(i+40, len(ips))]
		if err := s.Update(func(tx *store.Tx) error { return Indexer{}.IndexPages(tx, batch) }); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestTopK checks that the pruned retrieval returns exactly what scoring
// every posting returns: the same docs in the same order with the same
// scores (docs whose scores tie within float rounding may trade places),
// over random queries of common and rare words, phrases, filters and
// exclusions, for several k.
func TestTopK(t *testing.T) {
	s := indexInSmallBatches(t, 2500)
	vocab, err := vaultgen.Vocabulary(testvault.CorpusDir())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(11))
	word := func() string {
		// half common words, half from the long tail
		if rng.Intn(2) == 0 {
			return vocab[rng.Intn(60)]
		}
		return vocab[rng.Intn(min(len(vocab), 3000))]
	}
	var blocksSeen int
	for qi := 0; qi < 400; qi++ {
		var parts []string
		for range 1 + rng.Intn(24) {
			parts = append(parts, word())
		}
		switch rng.Intn(6) {
		case 0:
			parts = append(parts, fmt.Sprintf("%q", word()+" "+word()))
		case 1:
			parts = append(parts, "-"+word())
		case 2:
			parts = append(parts, "type:"+[]string{"concept", "entity", "note"}[rng.Intn(3)])
		}
		query := strings.Join(parts, " ")
		q, err := ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		n := []int{1, 5, 10, 100}[rng.Intn(4)]
		s.View(func(tx *store.Tx) error {
			p := DefaultParams
			if rng.Intn(3) == 0 {
				p.MaxTerms = 0
			}
			r := newRun(tx, q, p)
			for _, t := range r.terms {
				blocksSeen = max(blocksSeen, len(t.blocks))
			}
			allowed, excluded, err := r.filters()
			if err != nil {
				t.Fatal(err)
			}
			ok := func(d uint32) bool {
				return (allowed == nil || allowed.has(d)) && (excluded == nil || !excluded.has(d))
			}
			got, err := r.topK(n, ok)
			if err != nil {
				t.Fatal(err)
			}
			want, err := r.exhaustive(n, ok)
			if err != nil {
				t.Fatal(err)
			}
			if !sameTop(got, want) {
				t.Fatalf("query %q k=%d:\n got %v\nwant %v", query, n, got, want)
			}
			for _, c := range got {
				if c.score <= 0 {
					t.Fatalf("query %q: doc %d with score %v", query, c.doc, c.score)
				}
			}
			return nil
		})
	}
	if blocksSeen < 10 {
		t.Fatalf("common terms span at most %d blocks: the test does not exercise block skipping", blocksSeen)
	}
}

// sameTop compares two rankings, allowing docs whose scores agree within
// float rounding to trade places (also across the cut at k).
func sameTop(got, want []candidate) bool {
	if len(got) != len(want) {
		return false
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-5*math.Max(a, b) }
	for i := range got {
		if !near(got[i].score, want[i].score) {
			return false
		}
	}
	// the same docs, except among scores tied at the cut
	cut := 0.0
	if len(want) > 0 {
		cut = want[len(want)-1].score
	}
	var g, w []uint32
	for i := range got {
		if !near(got[i].score, cut) {
			g = append(g, got[i].doc)
		}
		if !near(want[i].score, cut) {
			w = append(w, want[i].doc)
		}
	}
	sort.Slice(g, func(i, j int) bool { return g[i] < g[j] })
	sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
	return fmt.Sprint(g) == fmt.Sprint(w)
}
