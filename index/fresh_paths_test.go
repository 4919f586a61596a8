package index

import (
	"context"
	"slices"
	"testing"
)

// TestCheckPaths: the paths a file monitor reports are compared with the
// records — an edit, a new page, a deleted one, a folder moved away, a
// folder moved in with files below it, an attachment, a path that did
// not change — and only
// what really changed is stale; a reconcile indexes it.
func TestCheckPaths(t *testing.T) {
	v, ix := freshVault(t, 0)
	write(t, v, "wiki/entities/babbage.md", "---\ntitle: Babbage\n---\nHe designed the [[Engine]].\n")
	ageAll(t, v)
	if _, err := ix.Scan(context.Background(), ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	write(t, v, "wiki/concepts/engine.md", "---\ntitle: Engine\n---\nThe analytical engine, edited by hand.\n")
	write(t, v, "wiki/concepts/loom.md", "---\ntitle: Loom\n---\nA new page.\n")
	rm(t, v, "raw/sources/paper.md")
	mv(t, v, "wiki/entities", "wiki/people")
	write(t, v, "wiki/new/deep/page.md", "# Deep\n")
	write(t, v, "wiki/notes.txt", "an attachment")
	reported := []string{"raw/sources/paper.md", "wiki/concepts/engine.md", "wiki/concepts/loom.md",
		"wiki/entities", "wiki/new", "wiki/notes.txt", "wiki/people", "wiki/unchanged.md"}
	st, err := ix.CheckPaths(context.Background(), reported)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"raw/sources/paper.md", "wiki/concepts/engine.md", "wiki/concepts/loom.md",
		"wiki/entities/ada.md", "wiki/entities/babbage.md", "wiki/new/deep/page.md", "wiki/notes.txt",
		"wiki/people/ada.md", "wiki/people/babbage.md"}
	if st.Mode != CheckMonitor || !slices.Equal(st.Paths, want) || st.New != 5 || st.Changed != 1 || st.Deleted != 3 {
		t.Fatalf("CheckPaths: mode %s, %d new, %d changed, %d deleted: %v\nwant %v", st.Mode, st.New, st.Changed, st.Deleted, st.Paths, want)
	}
	if _, err := ix.Reconcile(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if st, err := ix.CheckPaths(context.Background(), reported); err != nil || st.Count() != 0 || st.NeedsWrite() {
		t.Fatalf("after the reconcile: %+v, %v", st, err)
	}
	if st := check(t, ix, 0); st.Count() != 0 {
		t.Fatalf("a full check after the reconcile finds %v", st.Paths)
	}
}
