package search_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/search"
)

// Every query shape is bounded: what a search reads besides
// the index is the text of the hits it returns (their snippets), plus
// for a phrase the text of at most PhraseDepth best candidates or
// PhraseBudget bytes of it; a long pasted query is ranked by its
// DefaultParams.MaxTerms rarest words, and a word nearly every page holds
// only when the query has nothing rarer.

// countingWiki is a testWiki whose page reads are counted.
func (w *testWiki) countingSearch(q string, k int) (hits []search.Hit, reads, bytes int) {
	w.t.Helper()
	hits, err := search.Search(w.ix.Store, q, search.Options{K: k, ReadFile: func(p string) ([]byte, error) {
		b, err := os.ReadFile(w.v.Abs(p))
		reads++
		bytes += len(b)
		return b, err
	}})
	if err != nil {
		w.t.Fatalf("search %q: %v", q, err)
	}
	return hits, reads, bytes
}

func TestSearch_ReadsOnlyHits(t *testing.T) {
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("wiki/notes/n%03d.md", i)] = fmt.Sprintf("---\ntitle: Note %d\n---\n%s\n",
			i, strings.Repeat("the common words of every page ", 1+i%7))
	}
	w := newTestWiki(t, files)
	for _, k := range []int{1, 5, 20} {
		hits, reads, _ := w.countingSearch("common words", k)
		if len(hits) != k || reads != k {
			t.Errorf("k=%d: %d hits, %d pages read; want %d and %d (snippets only for the hits)", k, len(hits), reads, k, k)
		}
		for _, h := range hits {
			if h.Snippet == "" {
				t.Errorf("k=%d: hit %s without a snippet", k, h.Path)
			}
		}
	}
}

func TestSearch_PhraseChecksBounded(t *testing.T) {
	// 300 long pages hold both words of the phrase, never side by side;
	// a check of every candidate would read all of them
	files := map[string]string{}
	filler := "alpha gamma beta delta " + strings.Repeat("lorem ipsum dolor sit amet ", 330) // ~9 KB
	for i := range 300 {
		files[fmt.Sprintf("wiki/notes/n%03d.md", i)] = fmt.Sprintf("---\ntitle: Note %d\n---\n%s\n", i, filler)
	}
	// the one page that has the phrase ranks first by its words too
	files["wiki/notes/match.md"] = "---\ntitle: Match\n---\nalpha beta and alpha beta\n"
	w := newTestWiki(t, files)
	hits, reads, bytes := w.countingSearch(`"alpha beta"`, 5)
	if len(hits) != 1 || hits[0].Title != "Match" {
		t.Errorf("hits %v, want Match alone", hits)
	}
	if reads > search.PhraseDepth || bytes > search.PhraseBudget+len(filler)+100 {
		t.Errorf("phrase check read %d pages, %d bytes; want at most %d pages and about %d bytes", reads, bytes, search.PhraseDepth, search.PhraseBudget)
	}
	if reads >= 300 {
		t.Errorf("phrase check read every candidate (%d pages)", reads)
	}
	// a phrase no page holds: the same bound, no hit
	hits, reads, bytes = w.countingSearch(`"delta alpha beta"`, 5)
	if len(hits) != 0 || reads > search.PhraseDepth || bytes > search.PhraseBudget+len(filler)+100 {
		t.Errorf(`"delta alpha beta": %d hits after reading %d pages, %d bytes`, len(hits), reads, bytes)
	}
}

func TestSearch_LongQueryCapped(t *testing.T) {
	// words of falling frequency: word i is on the pages j < 200-i
	words := make([]string, 200)
	for i := range words {
		words[i] = fmt.Sprintf("w%03dx", i)
	}
	files := map[string]string{}
	for j := range 200 {
		files[fmt.Sprintf("wiki/notes/p%03d.md", j)] = fmt.Sprintf("---\ntitle: Page %d\n---\n%s\n", j, strings.Join(words[:200-j], " "))
	}
	w := newTestWiki(t, files)
	query := strings.Join(words, " ") // a 200-word paste
	terms, err := search.ScoredTerms(w.ix.Store, query)
	if err != nil {
		t.Fatal(err)
	}
	max := search.DefaultParams.MaxTerms
	if len(terms) != max {
		t.Fatalf("%d terms scored, want %d (the cap)", len(terms), max)
	}
	// the rarest are kept: w199x (one page) … w184x
	for i := 200 - max; i < 200; i++ {
		if !slices.Contains(terms, words[i]) {
			t.Errorf("the rare word %s is not scored: %v", words[i], terms)
		}
	}
	hits, _, _ := w.countingSearch(query, 3)
	if len(hits) == 0 || hits[0].Title != "Page 0" {
		t.Errorf("the page holding every word of the paste is not first: %v", hits)
	}
	// a word every page holds is not ranked beside a rare one (its
	// postings are not walked), but is when nothing else is asked
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"w000x w199x", []string{"w199x"}},
		{"w000x w190x", []string{"w190x"}},
		{"w000x", []string{"w000x"}},
		{"w000x w001x", []string{"w000x", "w001x"}},
		{`"w000x w001x" w199x`, []string{"w000x", "w001x", "w199x"}},
	} {
		got, err := search.ScoredTerms(w.ix.Store, c.query)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%q is ranked by %v, want %v", c.query, got, c.want)
		}
	}
}
