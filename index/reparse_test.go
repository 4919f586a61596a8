package index

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// staleParse marks ix's store as parsed by an older ParseVersion.
func staleParse(t testing.TB, ix *Indexer) {
	t.Helper()
	if err := ix.Store.Update(func(tx *store.Tx) error { return tx.SetMeta(metaParseVersion, []byte("1")) }); err != nil {
		t.Fatal(err)
	}
}

// TestScan_ReparseInPlace: the one-time re-parse of a store parsed by an
// older ParseVersion replaces records in place: while it reads the files,
// the store still answers with every page, its links and backlinks
// (tools answer from the persisted index meanwhile). Its progress is
// reported under "reparse", it is announced once, the re-read pages are
// counted (not reported as new or changed) and the result equals a rebuild.
func TestScan_ReparseInPlace(t *testing.T) {
	v := testvault.New(t)
	const n = 40
	for i := 0; i < n; i++ {
		testvault.Write(t, v, fmt.Sprintf("wiki/p%02d.md", i), fmt.Sprintf("# P%d\n[[p%02d]] [[nowhere]]\n", i, (i+1)%n))
	}
	testvault.Write(t, v, "raw/sources/s.md", "source\n")
	testvault.Write(t, v, "wiki/p00.md", "# P0\n[[p01]] [[nowhere]] [[s]]\n")
	ix := openIndexer(t, v)
	ix.Now = func() time.Time { return time.Now().Add(time.Hour) }
	scan(t, ix)
	// as a store of ParseVersion 3 left it: sources not indexed by name
	if err := ix.Store.Update(func(tx *store.Tx) error { return tx.DeleteFileName("raw/sources/s.md") }); err != nil {
		t.Fatal(err)
	}
	staleParse(t, ix)

	var mu sync.Mutex
	var problems []string
	checked := 0
	ix.readFile = func(p string) ([]byte, error) {
		err := ix.Store.View(func(tx *store.Tx) error {
			mu.Lock()
			defer mu.Unlock()
			checked++
			if c := tx.PageCount(); c != n {
				problems = append(problems, fmt.Sprintf("reading %s: %d pages in the index", p, c))
			}
			if r := Resolve(tx, "p07", "wiki/p06.md", false); r.Doc == 0 {
				problems = append(problems, fmt.Sprintf("reading %s: [[p07]] resolves to nothing", p))
			} else if len(tx.Backlinks(r.Doc)) != 1 {
				problems = append(problems, fmt.Sprintf("reading %s: p07 has %d backlinks", p, len(tx.Backlinks(r.Doc))))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return readFileOS(p)
	}
	var phases []string
	ix.Progress = func(phase string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		phases = append(phases, phase)
	}
	var notes []string
	ix.Notify = func(msg string) { notes = append(notes, msg) }
	rep := scan(t, ix)
	ix.readFile, ix.Progress, ix.Notify = nil, nil, nil
	if checked < n {
		t.Fatalf("only %d reads observed; the re-parse did not read every page", checked)
	}
	if len(problems) > 0 {
		t.Errorf("the index was not answering during the re-parse:\n%s", strings.Join(problems[:min(5, len(problems))], "\n"))
	}
	if rep.Reparsed != n+3 || rep.NewCount+rep.ChangedCount != 0 {
		t.Errorf("report: reparsed %d, new %d, changed %d; want %d re-parsed (pages and reserved files), none new or changed", rep.Reparsed, rep.NewCount, rep.ChangedCount, n+3)
	}
	if !strings.Contains(strings.Join(phases, " "), "reparse") {
		t.Errorf("no reparse progress: %q", phases)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "older") {
		t.Errorf("notes %q, want one saying the pages were parsed by an older synapse", notes)
	}
	if again := scan(t, ix); again.Reparsed+again.NewCount+again.ChangedCount != 0 {
		t.Errorf("a second scan re-parsed again: %+v", again)
	}
	if to, _ := reached(t, ix, "wiki/p00.md", "s"); to != "raw/sources/s.md" {
		t.Errorf("after the re-parse [[s]] → %q", to)
	}
	got, _ := storecheck.Fingerprint(ix.Store)
	fresh := openIndexerAt(t, v, t.TempDir()+"/fresh.db")
	if _, err := fresh.Scan(context.Background(), ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	want, _ := storecheck.Fingerprint(fresh.Store)
	if d := storecheck.DiffLines(want, got); len(d) > 0 {
		t.Fatalf("after the re-parse the store differs from a rebuild:\n%s", strings.Join(d[:min(20, len(d))], "\n"))
	}
}

// TestScan_ReparseResumes: a re-parse that is interrupted keeps what it
// committed and the next scan goes on from there: it re-reads only the
// pages after the last committed batch.
func TestScan_ReparseResumes(t *testing.T) {
	v := testvault.New(t)
	const n = 30
	for i := 0; i < n; i++ {
		testvault.Write(t, v, fmt.Sprintf("wiki/p%02d.md", i), fmt.Sprintf("# P%d\n[[p%02d]]\n", i, (i+1)%n))
	}
	ix := openIndexer(t, v)
	ix.Now = func() time.Time { return time.Now().Add(time.Hour) }
	scan(t, ix)
	staleParse(t, ix)
	saved := reparseBatch
	reparseBatch = 10
	defer func() { reparseBatch = saved }()
	ctx, cancel := context.WithCancel(context.Background())
	batches := 0
	ix.Progress = func(phase string, done, total int) {
		if phase == "reparse" && done > 0 {
			if batches++; batches == 2 {
				cancel()
			}
		}
	}
	if _, err := ix.Scan(ctx, ScanOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("the interrupted re-parse returned %v", err)
	}
	ix.Progress = nil
	reads := countingReads(ix)
	rep := scan(t, ix)
	if rep.Reparsed != len(*reads) || len(*reads) == 0 || len(*reads) > n+3-20 {
		t.Errorf("the resumed re-parse read %d files and re-parsed %d; want the %d after the two committed batches", len(*reads), rep.Reparsed, n+3-20)
	}
	if again := scan(t, ix); again.Reparsed != 0 {
		t.Errorf("a third scan re-parsed %d pages", again.Reparsed)
	}
	if diffs, err := storecheck.CheckGraph(ix.Store); err != nil || len(diffs) > 0 {
		t.Fatalf("graph: %v %v", err, diffs)
	}
}
