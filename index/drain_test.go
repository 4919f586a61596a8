package index

import (
	"context"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
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

	d := drainBatch
	drainBatch = 3
	t.Cleanup(func() { drainBatch = d })
	ix := openIndexerAt(t, v, t.TempDir()+"/small.db")
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
