package index

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// TestReconcile_HotListKept: a reconcile after files were added, edited
// and deleted brings the recently modified files forward from the list
// it had (no walk of every record) to what a walk finds, and a full scan
// since makes the next reconcile walk again.
func TestReconcile_HotListKept(t *testing.T) {
	v := testvault.New(t)
	n := hotFiles + 20
	for i := range n {
		write(t, v, fmt.Sprintf("wiki/notes/n%03d.md", i), fmt.Sprintf("# N%d\n", i))
	}
	write(t, v, "wiki/concepts/c.md", "# C\n")
	ageAll(t, v)
	for i := range n {
		mt := time.Now().Add(-2 * time.Hour).Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(v.Abs(fmt.Sprintf("wiki/notes/n%03d.md", i)), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	ix := openIndexer(t, v)
	ctx := context.Background()
	if _, err := ix.Scan(ctx, ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	reconcile := func() {
		t.Helper()
		if _, err := ix.Reconcile(ctx, check(t, ix, -1)); err != nil {
			t.Fatal(err)
		}
	}
	hot := func() (kept, walked []string, stamp string) {
		t.Helper()
		err := ix.Store.View(func(tx *store.Tx) error {
			kept = strings.Split(string(tx.Meta(metaFreshHot)), "\n")
			var err error
			walked, err = recentFiles(tx, hotFiles)
			stamp = string(tx.Meta(metaFreshHotScan))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	reconcile()
	if kept, walked, _ := hot(); !slices.Equal(kept, walked) {
		t.Fatalf("after the first reconcile the list is %v, want %v", kept, walked)
	}
	for round := range 3 {
		// new files in both folders, an edit of a cold file, a hot file
		// deleted: folders change, so the reconcile keeps the list
		for j := range 5 {
			write(t, v, fmt.Sprintf("wiki/notes/new%d-%d.md", round, j), "# New\n")
		}
		write(t, v, fmt.Sprintf("wiki/concepts/new%d.md", round), "# New C\n")
		old := time.Now().Add(-3 * time.Hour)
		cold := v.Abs(fmt.Sprintf("wiki/notes/n%03d.md", round))
		write(t, v, fmt.Sprintf("wiki/notes/n%03d.md", round), "# edited\n")
		if err := os.Chtimes(cold, old, old); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(v.Abs(fmt.Sprintf("wiki/notes/n%03d.md", n-1-round))); err != nil {
			t.Fatal(err)
		}
		ageFolders(t, v)
		_, _, before := hot()
		reconcile()
		kept, walked, stamp := hot()
		if !slices.Equal(kept, walked) {
			t.Fatalf("round %d: the list kept is %v, a walk finds %v", round, kept, walked)
		}
		if stamp != before {
			t.Fatalf("round %d: the list's scan stamp moved from %q to %q without a full scan", round, before, stamp)
		}
	}
	// a full scan indexes without keeping the list: the next reconcile walks
	if _, err := ix.Scan(ctx, ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _, before := hot()
	write(t, v, "wiki/notes/after-scan.md", "# After\n")
	ageFolders(t, v)
	reconcile()
	kept, walked, stamp := hot()
	if !slices.Equal(kept, walked) || stamp == before {
		t.Fatalf("after a full scan: list %v (walk %v), stamp %q (was %q)", kept, walked, stamp, before)
	}
}

// ageFolders sets the mtimes of wiki/ and its folders a minute back (not
// racy), keeping the files' own.
func ageFolders(t *testing.T, v interface{ Abs(string) string }) {
	t.Helper()
	old := time.Now().Add(-time.Minute)
	for _, d := range []string{"wiki/notes", "wiki/concepts", "wiki"} {
		if err := os.Chtimes(v.Abs(d), old, old); err != nil {
			t.Fatal(err)
		}
	}
}
