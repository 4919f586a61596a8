package search_test

import (
	"fmt"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/search"
)

func TestTmpTune(t *testing.T) {
	long := t.TempDir()
	writeLongCorpus(t, testvault.CorpusDir(), long)
	for _, dir := range []string{testvault.CorpusDir(), long} {
		c := loadEval(t, dir)
		items := pastedItems(c, 30)
		for _, mt := range []int{0, 8, 12, 16, 20, 24} {
			p := search.DefaultParams
			p.MaxTerms = mt
			r := synapseRanker(t, c.store, p)
			t.Logf("%-10s pasted %s   headings %s", fmt.Sprint(mt), score(items, r, nil), score(c.headings, r, nil))
		}
	}
}
