package store

import (
	"path/filepath"
	"reflect"
	"testing"
)

// TestPageCodec_FileLinks: a page record keeps the files its links reach
// and its file links across encoding; a version 2 record (before them)
// still decodes, with none.
func TestPageCodec_FileLinks(t *testing.T) {
	p := &PageRec{ID: "abc", Path: "wiki/a.md", Title: "A", Type: "note",
		Links: []LinkRec{
			{Target: "x", Key: "x", Line: 3, File: "raw/sources/x.md"},
			{Target: "index", Key: "index", Line: 4, To: 7, ToReserved: true},
		},
		FileLinks: []LinkRec{
			{Target: "diagram.png", Key: "diagram.png", Embed: true, Line: 5, File: "raw/assets/diagram.png", Ambiguous: 2},
			{Target: "../../raw/sources/gone.md", Key: "../../raw/sources/gone", Markdown: true, Line: 6},
		}}
	got, err := decodePage(encodePage(p))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, p)
	}
	// version 2: one link, no file field, no file links section
	old := &PageRec{ID: "abc", Path: "wiki/a.md", Title: "A", Type: "note", Links: []LinkRec{{Target: "b", Key: "b", Line: 1, To: 2}}}
	v3 := encodePage(old)
	v2 := append([]byte{2}, v3[1:len(v3)-2]...)
	got, err = decodePage(v2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, old) {
		t.Fatalf("version 2:\n got %+v\nwant %+v", got, old)
	}
}

// TestFileNames: files that are no page are found by name (".md"
// dropped, case folded) and by path, and forgotten.
func TestFileNames(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Update(func(tx *Tx) error {
		for _, p := range []string{"raw/sources/X.md", "raw/sources/sub/x.md", "raw/assets/Diagram.PNG"} {
			if err := tx.PutFileName(p); err != nil {
				return err
			}
		}
		paths := func(c []NameCandidate) []string {
			var out []string
			for _, x := range c {
				out = append(out, x.Path)
			}
			return out
		}
		if got := paths(tx.FilesNamed("x")); !reflect.DeepEqual(got, []string{"raw/sources/X.md", "raw/sources/sub/x.md"}) {
			t.Errorf("named x: %q", got)
		}
		if got := paths(tx.FilesNamed("diagram.png")); !reflect.DeepEqual(got, []string{"raw/assets/Diagram.PNG"}) {
			t.Errorf("named diagram.png: %q", got)
		}
		if got := paths(tx.FilesAt("raw/sources/x")); !reflect.DeepEqual(got, []string{"raw/sources/X.md"}) {
			t.Errorf("at raw/sources/x: %q", got)
		}
		if err := tx.DeleteFileName("raw/sources/X.md"); err != nil {
			return err
		}
		if tx.HasFileName("raw/sources/X.md") || len(tx.FilesAt("raw/sources/x")) != 0 || len(tx.FilesNamed("x")) != 1 {
			t.Error("a forgotten file is still found")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
