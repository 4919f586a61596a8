package index

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// reached returns where the link of a page with the given target leads:
// the page's path, the file's path, or "" (dangling page link, or a file
// link to a file that does not exist), and whether it is a file link.
func reached(t testing.TB, ix *Indexer, from, target string) (string, bool) {
	t.Helper()
	var to string
	var fileLink bool
	err := ix.Store.View(func(tx *store.Tx) error {
		p, err := tx.Page(tx.DocByPath(from))
		if err != nil || p == nil {
			t.Fatalf("page %s: %v", from, err)
		}
		for _, l := range p.Links {
			if l.Target == target {
				to = l.File
				if l.To != 0 {
					to = "<gone>"
					if q, _ := tx.Page(l.To); q != nil {
						to = q.Path
					}
				}
				return nil
			}
		}
		for _, l := range p.FileLinks {
			if l.Target == target {
				to, fileLink = l.File, true
				return nil
			}
		}
		t.Fatalf("%s has no link to %q", from, target)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return to, fileLink
}

func citedBy(t testing.TB, ix *Indexer, from string) []string {
	t.Helper()
	var keys []string
	_ = ix.Store.View(func(tx *store.Tx) error {
		p, _ := tx.Page(tx.DocByPath(from))
		keys = p.SourceKeys
		for _, k := range keys {
			if !slices.Contains(tx.CitingPages(k), p.Doc) {
				t.Errorf("%s cites %s, but the cites index does not say so", from, k)
			}
		}
		return nil
	})
	return keys
}

func danglingKeys(t testing.TB, ix *Indexer) string {
	t.Helper()
	var d []string
	_ = ix.Store.View(func(tx *store.Tx) error {
		for _, x := range tx.Dangling() {
			d = append(d, x.Key)
		}
		return nil
	})
	return strings.Join(d, ",")
}

// TestResolve_FileNames (docs/vault.md#links): a link reaches a
// file that is no page by name, as Obsidian resolves any file of the
// vault: a bare [[x]] whose only match is raw/sources/x.md reaches it (not
// dangling, and citing the source), an attachment by its file name, with
// the folder tie-break among several; pages win over files of the same
// name. As files and pages come and go the links follow without the
// linking page being read again, and the store equals a rebuild.
func TestResolve_FileNames(t *testing.T) {
	v := testvault.New(t)
	w := func(rel, body string) { testvault.Write(t, v, rel, body) }
	w("raw/sources/x.md", "source x\n")
	w("raw/sources/deep/y.md", "source y\n")
	w("raw/assets/diagram.png", "png")
	w("wiki/img/local.png", "png")
	w("wiki/src.md", "[[x]] [[y|label]] ![[diagram.png]] [[local.png]] [[nothere]] ![[gone.png]] [[../../raw/sources/z.md|orig]] [[paper.pdf]]\n"+
		"The vault's [[schema]] and [[../../purpose.md|purpose]]; [[../../notes/elsewhere.md]] is not tracked.\n")
	ix := openIndexer(t, v)
	ix.Now = func() time.Time { return time.Now().Add(time.Hour) }
	scan(t, ix)
	_ = ix.Store.View(func(tx *store.Tx) error {
		p, _ := tx.Page(tx.DocByPath("wiki/src.md"))
		for _, l := range append(p.Links, p.FileLinks...) {
			if strings.Contains(l.Target, "elsewhere") {
				t.Errorf("a link to an untracked folder is kept: %+v", l)
			}
		}
		return nil
	})
	reads := countingReads(ix)
	type want struct {
		target, to string
		file       bool
	}
	steps := []struct {
		name     string
		do       func()
		want     []want
		cites    string
		dangling string
	}{
		{"start", func() {}, []want{
			{"x", "raw/sources/x.md", false}, {"y", "raw/sources/deep/y.md", false},
			{"diagram.png", "raw/assets/diagram.png", true}, {"local.png", "wiki/img/local.png", true},
			{"nothere", "", false}, {"gone.png", "", true}, {"../../raw/sources/z.md", "", true}, {"paper.pdf", "", true},
			{"schema", "schema.md", false}, {"../../purpose.md", "purpose.md", true},
		}, "raw/sources/x.md,raw/sources/deep/y.md,raw/sources/z.md", "nothere"},
		{"a page named x wins", func() { w("wiki/x.md", "# X\n") },
			[]want{{"x", "wiki/x.md", false}}, "raw/sources/deep/y.md,raw/sources/z.md", "nothere"},
		{"the page goes: back to the source", func() { rm(t, v, "wiki/x.md") },
			[]want{{"x", "raw/sources/x.md", false}}, "raw/sources/x.md,raw/sources/deep/y.md,raw/sources/z.md", "nothere"},
		{"the source goes: dangling", func() { rm(t, v, "raw/sources/x.md") },
			[]want{{"x", "", false}}, "raw/sources/deep/y.md,raw/sources/z.md", "nothere,x"},
		{"the source comes back", func() { w("raw/sources/x.md", "source x again\n") },
			[]want{{"x", "raw/sources/x.md", false}}, "raw/sources/x.md,raw/sources/deep/y.md,raw/sources/z.md", "nothere"},
		{"an attachment appears", func() { w("raw/assets/gone.png", "png") },
			[]want{{"gone.png", "raw/assets/gone.png", true}}, "", "nothere"},
		{"the explicitly linked source appears", func() { w("raw/sources/z.md", "z\n") },
			[]want{{"../../raw/sources/z.md", "raw/sources/z.md", true}}, "", "nothere"},
		{"an attachment of the same name in the page's folder wins", func() { w("wiki/diagram.png", "png") },
			[]want{{"diagram.png", "wiki/diagram.png", true}}, "", "nothere"},
		{"a deeper one does not", func() { rm(t, v, "wiki/diagram.png"); w("raw/assets/sub/diagram.png", "png") },
			[]want{{"diagram.png", "raw/assets/diagram.png", true}}, "", "nothere"},
		{"the shorter one goes", func() { rm(t, v, "raw/assets/diagram.png") },
			[]want{{"diagram.png", "raw/assets/sub/diagram.png", true}}, "", "nothere"},
		{"schema.md and purpose.md go", func() { rm(t, v, "schema.md"); rm(t, v, "purpose.md") },
			[]want{{"schema", "", false}, {"../../purpose.md", "", true}}, "", "nothere,schema"},
		{"and come back", func() { w("schema.md", "# Schema\n"); w("purpose.md", "# Purpose\n") },
			[]want{{"schema", "schema.md", false}, {"../../purpose.md", "purpose.md", true}}, "", "nothere"},
		{"a source named like the pdf", func() { w("raw/sources/paper.pdf", "%PDF") },
			[]want{{"paper.pdf", "raw/sources/paper.pdf", true}}, "raw/sources/x.md,raw/sources/deep/y.md,raw/sources/z.md,raw/sources/paper.pdf", "nothere"},
	}
	for _, s := range steps {
		s.do()
		*reads = nil
		scan(t, ix)
		for _, wt := range s.want {
			if got, file := reached(t, ix, "wiki/src.md", wt.target); got != wt.to || file != wt.file {
				t.Errorf("%s: [[%s]] → %q (file link %v), want %q (%v)", s.name, wt.target, got, file, wt.to, wt.file)
			}
		}
		if s.cites != "" {
			if got := strings.Join(citedBy(t, ix, "wiki/src.md"), ","); got != s.cites {
				t.Errorf("%s: src.md cites %s, want %s", s.name, got, s.cites)
			}
		}
		if got := danglingKeys(t, ix); got != s.dangling {
			t.Errorf("%s: dangling %q, want %q", s.name, got, s.dangling)
		}
		for _, p := range *reads {
			if p == v.Abs("wiki/src.md") {
				t.Errorf("%s: the scan read %s", s.name, p)
			}
		}
		if diffs, err := storecheck.CheckGraph(ix.Store); err != nil || len(diffs) > 0 {
			t.Errorf("%s: graph: %v %v", s.name, err, diffs)
		}
	}
	got, _ := storecheck.Fingerprint(ix.Store)
	fresh := openIndexerAt(t, v, t.TempDir()+"/fresh.db")
	if _, err := fresh.Scan(context.Background(), ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	wantFP, _ := storecheck.Fingerprint(fresh.Store)
	if d := storecheck.DiffLines(wantFP, got); len(d) > 0 {
		t.Fatalf("incremental store differs from a rebuild:\n%s", strings.Join(d[:min(20, len(d))], "\n"))
	}
}
