package index

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// eventually polls cond until it holds (a liveness bound, not a timing
// assertion: the watcher's latency is measured by benchmarks).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func pageTitle(ix *Indexer, path string) string {
	var title string
	ix.Store.View(func(tx *store.Tx) error {
		if p, _ := tx.Page(tx.DocByPath(path)); p != nil {
			title = p.Title
		}
		return nil
	})
	return title
}

func TestWatch_FollowsTheFiles(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/before.md", "---\ntitle: Before\n---\n")
	ix := openIndexer(t, v)
	w, err := ix.Watch(context.Background(), WatchOptions{Reconcile: true, Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	<-w.Ready()
	if pageTitle(ix, "wiki/before.md") != "Before" {
		t.Fatal("start-up reconciliation did not index the existing page")
	}

	// written in place
	testvault.Write(t, v, "wiki/a.md", "---\ntitle: One\n---\n")
	eventually(t, "a new page", func() bool { return pageTitle(ix, "wiki/a.md") == "One" })
	testvault.Write(t, v, "wiki/a.md", "---\ntitle: Two\n---\n")
	eventually(t, "an edit in place", func() bool { return pageTitle(ix, "wiki/a.md") == "Two" })

	// saved by rename, as editors do
	tmp := v.Abs("wiki/.a.md.swp")
	os.WriteFile(tmp, []byte("---\ntitle: Three\n---\n"), 0o644)
	if err := os.Rename(tmp, v.Abs("wiki/a.md")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a rename-save", func() bool { return pageTitle(ix, "wiki/a.md") == "Three" })

	// deleted
	os.Remove(v.Abs("wiki/a.md"))
	eventually(t, "a delete", func() bool { return pageTitle(ix, "wiki/a.md") == "" })

	// a new folder, a file created with it, and one added later
	os.MkdirAll(v.Abs("wiki/new/deeper"), 0o755)
	testvault.Write(t, v, "wiki/new/deeper/b.md", "---\ntitle: Bee\n---\n")
	eventually(t, "a page in a new folder", func() bool { return pageTitle(ix, "wiki/new/deeper/b.md") == "Bee" })
	testvault.Write(t, v, "wiki/new/deeper/c.md", "---\ntitle: Sea\n---\n")
	eventually(t, "a later page in the new folder", func() bool { return pageTitle(ix, "wiki/new/deeper/c.md") == "Sea" })

	// a folder moved away takes its pages with it
	os.Rename(v.Abs("wiki/new"), filepath.Join(t.TempDir(), "moved"))
	eventually(t, "a moved folder", func() bool {
		return pageTitle(ix, "wiki/new/deeper/b.md") == "" && pageTitle(ix, "wiki/new/deeper/c.md") == ""
	})

	// sources too
	testvault.Write(t, v, "raw/sources/s.txt", "a source\n")
	eventually(t, "a new source", func() bool {
		found := false
		ix.Store.View(func(tx *store.Tx) error { _, found, _ = tx.File("raw/sources/s.txt"); return nil })
		return found
	})
}

func TestWatch_RescanRequestsCoalesce(t *testing.T) {
	v := testvault.WithCorpus(t)
	ix := openIndexer(t, v)
	w, err := ix.Watch(context.Background(), WatchOptions{Reconcile: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	<-w.Ready()
	w.mu.Lock()
	before := w.scans
	w.mu.Unlock()
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := w.Rescan(context.Background())
			if err != nil || rep == nil || rep.Scanned != 178 { // 173 pages, 3 reserved, schema.md, purpose.md
				t.Errorf("rescan: %+v %v", rep, err)
			}
		}()
	}
	wg.Wait()
	w.mu.Lock()
	n := w.scans - before
	w.mu.Unlock()
	if n >= 20 || n < 1 {
		t.Errorf("20 concurrent requests ran %d scans; want them coalesced", n)
	}
}

// A folder that cannot be watched is reported, not skipped in silence.
func TestWatch_ReportsFoldersItCannotWatch(t *testing.T) {
	v := testvault.New(t)
	ix := openIndexer(t, v)
	var mu sync.Mutex
	var failed []string
	w, err := ix.Watch(context.Background(), WatchOptions{OnWatchError: func(dir string, err error) {
		mu.Lock()
		failed = append(failed, dir)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	<-w.Ready()
	w.fsw.Close() // every Add fails from now on
	os.MkdirAll(v.Abs("wiki/unwatchable/below"), 0o755)
	w.addTree(v.Abs("wiki/unwatchable"))
	mu.Lock()
	defer mu.Unlock()
	if len(failed) != 2 || failed[0] != v.Abs("wiki/unwatchable") {
		t.Fatalf("reported %q", failed)
	}
}

// TestWatch_FollowsAttachments: an attachment added to raw/assets/ (and
// removed again) while serve watches is seen, and the links naming it
// follow: the watcher watches raw/, not only raw/sources/.
func TestWatch_FollowsAttachments(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/a.md", "![[diagram.png]] [[notes]]\n")
	ix := openIndexer(t, v)
	w, err := ix.Watch(context.Background(), WatchOptions{Reconcile: true, Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	<-w.Ready()
	at := func(target string) string {
		var to string
		ix.Store.View(func(tx *store.Tx) error {
			p, _ := tx.Page(tx.DocByPath("wiki/a.md"))
			for _, l := range append(p.Links, p.FileLinks...) {
				if l.Target == target {
					to = l.File
				}
			}
			return nil
		})
		return to
	}
	testvault.Write(t, v, "raw/assets/diagram.png", "png")
	eventually(t, "an attachment in raw/assets/", func() bool { return at("diagram.png") == "raw/assets/diagram.png" })
	testvault.Write(t, v, "raw/notes.md", "raw notes\n")
	eventually(t, "a file at the top of raw/", func() bool { return at("notes") == "raw/notes.md" })
	os.Remove(v.Abs("raw/assets/diagram.png"))
	eventually(t, "the attachment removed", func() bool { return at("diagram.png") == "" })
}
