package index

import (
	"context"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// TestSettle_LookupsSharedAcrossTransactions: a settle's link drain runs
// in many transactions that share their name lookups; the links it
// resolves are the ones a drain in one transaction resolves, for a
// reindex and for the first scan after an interrupted one (every page's
// links resolved again).
func TestSettle_LookupsSharedAcrossTransactions(t *testing.T) {
	v := testvault.New(t)
	r := newRandVault(t, v, 31)
	for i := 0; i < 120; i++ {
		r.add()
	}
	ref := openIndexerAt(t, v, t.TempDir()+"/ref.db")
	if _, err := ref.Scan(context.Background(), ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	want, _ := storecheck.Fingerprint(ref.Store)

	ix := openIndexerAt(t, v, t.TempDir()+"/small.db")
	ix.tune.drainBatch = 3
	before := ix.Store.Commits()
	if _, err := ix.Scan(context.Background(), ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	if n := ix.Store.Commits() - before; n < 30 {
		t.Fatalf("%d commits: the drain did not take many transactions", n)
	}
	got, _ := storecheck.Fingerprint(ix.Store)
	if diff := storecheck.DiffLines(want, got); len(diff) > 0 {
		t.Fatalf("a drain in small transactions resolved otherwise:\n%s", strings.Join(diff[:min(20, len(diff))], "\n"))
	}
	// renames between two settles: the next settle looks names up afresh
	for i := 0; i < 30; i++ {
		r.mutate()
	}
	scan(t, ix)
	scan(t, ref)
	got, _ = storecheck.Fingerprint(ix.Store)
	want, _ = storecheck.Fingerprint(ref.Store)
	if diff := storecheck.DiffLines(want, got); len(diff) > 0 {
		t.Fatalf("after changes:\n%s", strings.Join(diff[:min(20, len(diff))], "\n"))
	}
	if diffs, err := storecheck.CheckGraph(ix.Store); err != nil || len(diffs) > 0 {
		t.Fatalf("graph: %v %v", err, diffs)
	}
}

// TestDrain_ChunkedLookupsResolveAsOneByOne: the drain looks a chunk's keys
// up in sorted order before resolving its pages, relative keys once per
// folder; every stored link is what Resolve gives for it alone, for a
// reindex and after changes (vaults where the folder decides: twins).
func TestDrain_ChunkedLookupsResolveAsOneByOne(t *testing.T) {
	for _, chunk := range []int{1, 4, 1000} {
		for seed, dirs := range [][]string{randDirs, twinDirs} {
			v := testvault.New(t)
			r := newRandVaultIn(t, v, int64(40+seed), dirs, randNames[:4])
			for i := 0; i < 80; i++ {
				r.add()
			}
			ix := openIndexerAt(t, v, t.TempDir()+"/s.db")
			ix.tune.drainChunk = chunk
			if _, err := ix.Scan(context.Background(), ScanOptions{Full: true}); err != nil {
				t.Fatal(err)
			}
			checkResolvedAlone(t, ix)
			for i := 0; i < 40; i++ {
				r.mutate()
			}
			scan(t, ix)
			checkResolvedAlone(t, ix)
		}
	}
}

func checkResolvedAlone(t *testing.T, ix *Indexer) {
	t.Helper()
	n, rel := 0, 0
	err := ix.Store.View(func(tx *store.Tx) error {
		return tx.EachPage(func(p *store.PageRec) bool {
			if p.LinksPending {
				t.Errorf("%s: links still pending after the scan", p.Path)
			}
			if p.Reserved {
				return true
			}
			for _, l := range p.Links {
				r := Resolve(tx, l.Key, p.Path, l.Markdown)
				amb := 0
				if r.Candidates > 1 {
					amb = r.Candidates
				}
				if l.To != r.Doc || l.File != r.File || l.Ambiguous != amb || l.ToReserved != r.Reserved {
					t.Errorf("%s: link %q stored as to=%d file=%q amb=%d, resolves alone to %+v", p.Path, l.Key, l.To, l.File, l.Ambiguous, r)
				}
				n++
				if relativeKey(l.Key, l.Markdown) {
					rel++
				}
			}
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 || rel < 20 {
		t.Fatalf("only %d links (%d relative) checked", n, rel)
	}
}
