package search

import (
	"testing"

	"github.com/synapse-wiki/synapse/store"
)

// TestTopK_Bounded: top-k retrieval does not walk the postings of common
// words in full. Over a generated vault of 2,500 pages indexed
// in small batches, the best 5 for common words and a pasted paragraph decode only part of their terms' postings, and a rare
// word beside common ones is answered from little more than its own
// postings and the chunks of the others that hold its docs. (At the depth
// Search re-ranks to, 100 docs, a vault this small has nothing to prune:
// BenchmarkQuerySet reports decoded-% on a generated vault of any size.)
func TestTopK_Bounded(t *testing.T) {
	s := indexInSmallBatches(t, 2500)
	for _, c := range []struct {
		query string
		most  float64 // the most of the postings decoded
	}{
		{"obsidian vault file note", 0.9},
		{"With Obsidian your data is simply stored as files in a folder called a vault. This means there are many ways to sync your data, and these are a few commonly used sync methods.", 0.9},
		{"dataviewjs obsidian vault file", 0.6},
		{"symlinks obsidian the file", 0.7},
		{"gradient obsidian the file note", 0.7},
	} {
		q, err := ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		s.View(func(tx *store.Tx) error {
			r := newRun(tx, q, DefaultParams)
			if _, err := r.rank(5); err != nil {
				t.Fatal(err)
			}
			w := r.work
			frac := float64(w.DecodedPostings) / float64(max(w.Postings, 1))
			t.Logf("%-40.40q k=%3d: %5d of %5d chunks, %6d of %6d postings decoded (%.0f%%)", c.query, 5, w.DecodedChunks, w.Chunks, w.DecodedPostings, w.Postings, 100*frac)
			if frac > c.most {
				t.Errorf("%q k=5 decoded %.0f%% of its postings, more than %.0f%%", c.query, 100*frac, 100*c.most)
			}
			return nil
		})
	}
}
