package index

import (
	"context"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestScan_FirstScanIsARebuild: the first scan of a never-scanned store
// (a new vault, the first index under serve) takes the reindex pipeline —
// links resolved in one drain, the graph built once from the records, the
// progress of each phase counted — and ends in the store a reindex
// builds; later scans bring the index up to date incrementally.
func TestScan_FirstScanIsARebuild(t *testing.T) {
	v := testvault.New(t)
	r := newRandVault(t, v, 17)
	for i := 0; i < 40; i++ {
		r.add()
	}
	ix := openIndexer(t, v)
	var phases []string
	rebuild := false
	ix.Progress = func(phase string, done, total int) {
		if a, ok := ix.Activity(); ok && a.Rebuild {
			rebuild = true
		}
		if total > 0 && (len(phases) == 0 || phases[len(phases)-1] != phase) {
			phases = append(phases, phase)
		}
	}
	scan(t, ix)
	if !rebuild || strings.Join(phases, ",") != "index,links,graph" {
		t.Fatalf("first scan: rebuild %v, counted phases %v; want a rebuild through index,links,graph", rebuild, phases)
	}
	if _, ok := ix.Activity(); ok {
		t.Fatal("activity reported after the scan ended")
	}
	got, _ := storecheck.Fingerprint(ix.Store)
	fresh := openIndexerAt(t, v, t.TempDir()+"/fresh.db")
	if _, err := fresh.Scan(context.Background(), ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	want, _ := storecheck.Fingerprint(fresh.Store)
	if d := storecheck.DiffLines(want, got); len(d) > 0 {
		t.Fatalf("first scan differs from a reindex:\n%s", strings.Join(d[:min(20, len(d))], "\n"))
	}
	// the next scan is incremental
	rebuild, phases = false, nil
	for i := 0; i < 5; i++ {
		r.mutate()
	}
	scan(t, ix)
	if rebuild {
		t.Fatal("a scan of an indexed store rebuilt it")
	}
	if diffs, err := storecheck.CheckGraph(ix.Store); err != nil || len(diffs) > 0 {
		t.Fatalf("graph: %v %v", err, diffs)
	}
}
