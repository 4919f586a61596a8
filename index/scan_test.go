package index

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

func openIndexer(t testing.TB, v *vault.Vault) *Indexer {
	t.Helper()
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &Indexer{Vault: v, Store: s}
}

// countingReads makes ix count the files it reads.
func countingReads(ix *Indexer) *[]string {
	var reads []string
	var mu sync.Mutex
	ix.readFile = func(p string) ([]byte, error) {
		mu.Lock()
		reads = append(reads, p)
		mu.Unlock()
		return os.ReadFile(p)
	}
	return &reads
}

func TestScan_UnchangedRescanReadsNothing(t *testing.T) {
	v := testvault.WithCorpus(t)
	testvault.Write(t, v, "raw/sources/a.md", "source a\n")
	ix := openIndexer(t, v)
	ix.Now = func() time.Time { return time.Now().Add(time.Hour) }
	reads := countingReads(ix)
	rep, err := ix.Scan(context.Background(), ScanOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.NewCount != 179 || len(*reads) != 177 {
		t.Fatalf("cold scan: %d new, %d reads; want 179 new (173 pages, 3 reserved, 1 source, schema.md and purpose.md) and 177 reads (never the last two: they are tracked by size and mtime)", rep.NewCount, len(*reads))
	}
	*reads = nil
	rep, err = ix.Scan(context.Background(), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(*reads) != 0 {
		t.Errorf("unchanged rescan read %d files: %v", len(*reads), (*reads)[:min(5, len(*reads))])
	}
	if rep.NewCount+rep.ChangedCount+rep.DeletedCount != 0 || rep.Unchanged != 179 || rep.Scanned != 179 {
		t.Errorf("unchanged rescan report: %+v", rep)
	}
}

func TestScan_EditOnePage(t *testing.T) {
	v := testvault.WithCorpus(t)
	ix := openIndexer(t, v)
	ix.Now = func() time.Time { return time.Now().Add(time.Hour) }
	reads := countingReads(ix)
	if _, err := ix.Scan(context.Background(), ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	before, err := storecheck.Fingerprint(ix.Store)
	if err != nil {
		t.Fatal(err)
	}
	path := "wiki/Getting started/Create a vault.md"
	data, err := os.ReadFile(v.Abs(path))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "# ", "# Edited heading\n\nNew words and a link to [[Internal links]].\n\n# ", 1)
	testvault.Write(t, v, path, edited)
	*reads = nil
	rep, err := ix.Scan(context.Background(), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(*reads) != 1 || !strings.HasSuffix((*reads)[0], "Create a vault.md") {
		t.Errorf("rescan read %v, want only the edited page", *reads)
	}
	if rep.ChangedCount != 1 || rep.Changed[0] != path || rep.NewCount+rep.DeletedCount != 0 {
		t.Errorf("report: %+v", rep)
	}
	after, _ := storecheck.Fingerprint(ix.Store)
	if before == after {
		t.Fatal("store unchanged after an edit")
	}
	// only the edited page's own lines, its new link target's lines, graph
	// weights around them and the counters differ
	for _, line := range storecheck.DiffLines(before, after) {
		l := line[2:]
		if !strings.Contains(l, "Create a vault") && !strings.Contains(l, "Internal links") &&
			!strings.HasPrefix(l, "counts ") && !strings.HasPrefix(l, "node ") {
			t.Errorf("unexpected change: %s", line)
		}
	}
	if diffs, err := storecheck.CheckGraph(ix.Store); err != nil || len(diffs) > 0 {
		t.Fatalf("graph after edit: %v %v", err, diffs)
	}
}

// TestScan_RacyEdit: a second write that keeps the size and lands on the
// same mtime as the recorded one is still seen, because a record hashed
// within the racy window is re-hashed.
func TestScan_RacyEdit(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/p.md", "alpha\n")
	ix := openIndexer(t, v)
	scan(t, ix)
	st, _ := os.Stat(v.Abs("wiki/p.md"))
	testvault.Write(t, v, "wiki/p.md", "gamma\n")
	os.Chtimes(v.Abs("wiki/p.md"), st.ModTime(), st.ModTime())
	rep := scan(t, ix)
	if rep.ChangedCount != 1 {
		t.Fatalf("same-size same-mtime edit missed: %+v", rep)
	}
}

// TestScan_IncrementalMatchesRebuild applies a long random sequence of
// edits, adds, deletes and renames, rescanning after each, and checks the
// incrementally maintained store against a from-scratch rebuild and the
// graph against a naive recomputation.
func TestScan_IncrementalMatchesRebuild(t *testing.T) {
	// -seeds N runs N more seeds of each kind (go test ./index -run
	// IncrementalMatchesRebuild -seeds 300)
	for i := 0; i < *moreSeeds; i++ {
		seed := int64(1000 + i)
		t.Run(fmt.Sprint("more/seed", seed), func(t *testing.T) { incrementalMatchesRebuild(t, seed, randDirs, randNames) })
		t.Run(fmt.Sprint("more/twins/seed", seed), func(t *testing.T) {
			incrementalMatchesRebuild(t, seed, twinDirs, randNames[:3])
		})
	}
	for _, seed := range []int64{7, 11, 23, 42} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { incrementalMatchesRebuild(t, seed, randDirs, randNames) })
	}
	// twin names in en/ and ru/: links decided by the folder tie-break
	for _, seed := range []int64{3, 8, 13, 21} {
		t.Run(fmt.Sprint("twins/seed", seed), func(t *testing.T) {
			incrementalMatchesRebuild(t, seed, twinDirs, randNames[:3])
		})
	}
	// a large lag bound makes degree shifts lag often: the weights must
	// stay exact with respect to the degrees they account for
	for _, seed := range []int64{5, 99} {
		t.Run(fmt.Sprint("lagging/seed", seed), func(t *testing.T) { incrementalMatchesRebuildLag(t, seed, randDirs, randNames, 0.3) })
	}
}

var moreSeeds = flag.Int("seeds", 0, "random seeds beyond the fixed ones for the incremental-vs-rebuild tests")

func incrementalMatchesRebuild(t *testing.T, seed int64, dirs, names []string) {
	incrementalMatchesRebuildLag(t, seed, dirs, names, store.GraphEpsilon)
}

// incrementalMatchesRebuildLag is incrementalMatchesRebuild with the
// scans' weights allowed to lag a degree change by graphEpsilon.
func incrementalMatchesRebuildLag(t *testing.T, seed int64, dirs, names []string, graphEpsilon float64) {
	v := testvault.New(t)
	ix := openIndexer(t, v)
	ix.tune.graphEpsilon = graphEpsilon
	ix.Now = func() time.Time { return time.Now().Add(time.Hour) }
	r := newRandVaultIn(t, v, seed, dirs, names)
	for step := 0; step < 60; step++ {
		r.mutate()
		if _, err := ix.Scan(context.Background(), ScanOptions{}); err != nil {
			t.Fatal(err)
		}
		if diffs, err := storecheck.CheckGraphLag(ix.Store, graphEpsilon); err != nil || len(diffs) > 0 {
			t.Fatalf("step %d (%s): graph differs from recomputation: %v %v", step, r.last, err, diffs)
		}
	}
	got, err := storecheck.Fingerprint(ix.Store)
	if err != nil {
		t.Fatal(err)
	}
	fresh := openIndexerAt(t, v, t.TempDir()+"/fresh.db")
	if _, err := fresh.Scan(context.Background(), ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	want, _ := storecheck.Fingerprint(fresh.Store)
	if graphEpsilon != store.GraphEpsilon || strings.Contains(t.Name(), "/more/") {
		// lagging degrees: weights legitimately differ from a rebuild's
		// (CheckGraphLag above proved them exact for their degrees); the
		// fixed seeds keep the lag below the fingerprint's rounding, any
		// seed need not
		w := regexp.MustCompile(` w=[-0-9.]+`)
		got, want = w.ReplaceAllString(got, ""), w.ReplaceAllString(want, "")
	}
	if d := storecheck.DiffLines(want, got); len(d) > 0 {
		t.Fatalf("incremental store differs from a rebuild:\n%s", strings.Join(d[:min(20, len(d))], "\n"))
	}
}

func openIndexerAt(t testing.TB, v *vault.Vault, dbPath string) *Indexer {
	t.Helper()
	s, err := store.Open(dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &Indexer{Vault: v, Store: s, Now: func() time.Time { return time.Now().Add(time.Hour) }}
}

// TestScan_InterruptedFullScan: a full scan stopped after it resolved the
// links but before it rebuilt the graph from the records leaves resolved
// links and no edges; incremental scans that follow (with renames and
// deletes, whose linkers the missing edges cannot point to) still end in
// the store a rebuild makes.
func TestScan_InterruptedFullScan(t *testing.T) {
	for seed := int64(1); seed <= 8+int64(*moreSeeds); seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { interruptedFullScan(t, seed) })
	}
}

func interruptedFullScan(t *testing.T, seed int64) {
	v := testvault.New(t)
	ix := openIndexer(t, v)
	ix.Now = func() time.Time { return time.Now().Add(time.Hour) }
	r := newRandVault(t, v, seed)
	for i := 0; i < 30; i++ {
		r.add()
	}
	if _, err := ix.Scan(context.Background(), ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	// a full scan cancelled once its links are resolved
	ctx, cancel := context.WithCancel(context.Background())
	ix.Progress = func(phase string, done, total int) {
		if phase == "links" {
			cancel()
		}
	}
	_, err := ix.Scan(ctx, ScanOptions{Full: true})
	ix.Progress = nil
	if err == nil {
		t.Fatal("the full scan was not interrupted")
	}
	// one incremental scan with many changes: the first after the
	// interruption is the one that runs without edges
	for step := 0; step < 25; step++ {
		r.mutate()
	}
	if _, err := ix.Scan(context.Background(), ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ := storecheck.Fingerprint(ix.Store)
	fresh := openIndexerAt(t, v, t.TempDir()+"/fresh.db")
	if _, err := fresh.Scan(context.Background(), ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	want, _ := storecheck.Fingerprint(fresh.Store)
	if d := storecheck.DiffLines(want, got); len(d) > 0 {
		t.Fatalf("after an interrupted full scan the store differs from a rebuild:\n%s", strings.Join(d[:min(20, len(d))], "\n"))
	}
	if diffs, err := storecheck.CheckGraph(ix.Store); err != nil || len(diffs) > 0 {
		t.Fatalf("graph: %v %v", err, diffs)
	}
}
