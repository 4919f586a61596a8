package store

import (
	"path/filepath"
	"reflect"
	"testing"
)

func openCatalogTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "s.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func putCatalogPage(t *testing.T, s *Store, p *PageRec) *PageRec {
	t.Helper()
	err := s.Update(func(tx *Tx) error {
		doc := tx.DocByPath(p.Path)
		var old *PageRec
		if doc != 0 {
			var err error
			if old, err = tx.Page(doc); err != nil {
				return err
			}
			p.Doc, p.ID = old.Doc, old.ID
		} else {
			var err error
			if p.Doc, p.ID, err = tx.NewPage(p.Path); err != nil {
				return err
			}
		}
		return tx.PutPage(p, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCatalog_VersionAndOrder(t *testing.T) {
	s := openCatalogTestStore(t)
	version := func() (v uint32) {
		_ = s.View(func(tx *Tx) error { v = tx.CatalogVersion(); return nil })
		return v
	}
	v0 := version()
	putCatalogPage(t, s, &PageRec{Path: "wiki/concepts/b.md", Title: "beta", Type: "concept"})
	putCatalogPage(t, s, &PageRec{Path: "wiki/concepts/a.md", Title: "Alpha", Type: "concept"})
	putCatalogPage(t, s, &PageRec{Path: "wiki/x/alpha.md", Title: "alpha", Type: "concept"})
	putCatalogPage(t, s, &PageRec{Path: "wiki/p/z.md", Title: "Zed", Type: "person"})
	putCatalogPage(t, s, &PageRec{Path: "wiki/p/y.md", Title: "Yak", Type: "animal"})
	putCatalogPage(t, s, &PageRec{Path: "wiki/entities/e.md", Title: "Eve", Type: "entity"})
	putCatalogPage(t, s, &PageRec{Path: "wiki/index.md", Title: "index", Type: "index", Reserved: true})
	v1 := version()
	if v1 != v0+6 {
		t.Fatalf("version %d → %d after 6 new pages and a reserved one", v0, v1)
	}
	// a content-only change (same type, title and path) leaves it alone
	putCatalogPage(t, s, &PageRec{Path: "wiki/concepts/b.md", Title: "beta", Type: "concept", Size: 99, Tags: []string{"t"}})
	if version() != v1 {
		t.Fatal("a content change bumped the catalogue version")
	}
	// a case-only title change is a change
	putCatalogPage(t, s, &PageRec{Path: "wiki/concepts/b.md", Title: "Beta", Type: "concept"})
	if version() != v1+1 {
		t.Fatal("a title change did not bump the catalogue version")
	}
	type row struct{ typ, title, path string }
	var got []row
	_ = s.View(func(tx *Tx) error {
		tx.EachCatalog(func(typ, title, path string) bool {
			got = append(got, row{typ, title, path})
			return true
		})
		return nil
	})
	// every type alike: by type, then folded title, then path
	want := []row{
		{"animal", "Yak", "wiki/p/y.md"},
		{"concept", "Alpha", "wiki/concepts/a.md"},
		{"concept", "alpha", "wiki/x/alpha.md"},
		{"concept", "Beta", "wiki/concepts/b.md"},
		{"entity", "Eve", "wiki/entities/e.md"},
		{"person", "Zed", "wiki/p/z.md"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("catalogue:\n%v\nwant:\n%v", got, want)
	}
	// deleting a page removes its entry and bumps the version
	err := s.Update(func(tx *Tx) error {
		p, err := tx.Page(tx.DocByPath("wiki/p/z.md"))
		if err != nil {
			return err
		}
		return tx.DeletePage(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	_ = s.View(func(tx *Tx) error {
		tx.EachCatalog(func(string, string, string) bool { n++; return true })
		return nil
	})
	if n != 5 || version() != v1+2 {
		t.Fatalf("after delete: %d entries, version %d", n, version())
	}
	// a store indexed before the catalogue existed is detected and rebuilt
	_ = s.Update(func(tx *Tx) error {
		if err := tx.tx.DeleteBucket(bCatalog); err != nil {
			return err
		}
		_, err := tx.tx.CreateBucket(bCatalog)
		return err
	})
	// …and a page written since (the write path's own page) does not hide it
	putCatalogPage(t, s, &PageRec{Path: "wiki/concepts/new.md", Title: "New", Type: "concept"})
	_ = s.View(func(tx *Tx) error {
		if !tx.CatalogMissing() {
			t.Fatal("a catalogue missing pages is not reported")
		}
		return nil
	})
	if err := s.Update(func(tx *Tx) error { return tx.RebuildCatalog() }); err != nil {
		t.Fatal(err)
	}
	var again []row
	_ = s.View(func(tx *Tx) error {
		tx.EachCatalog(func(typ, title, path string) bool {
			again = append(again, row{typ, title, path})
			return true
		})
		return nil
	})
	want = append(want[:4:4], row{"concept", "New", "wiki/concepts/new.md"}, want[4])
	if !reflect.DeepEqual(again, want) {
		t.Fatalf("rebuilt catalogue:\n%v", again)
	}
	_ = s.View(func(tx *Tx) error {
		if tx.CatalogMissing() {
			t.Fatal("still missing after a rebuild")
		}
		return nil
	})
}

func TestCatalog_IndexStamp(t *testing.T) {
	s := openCatalogTestStore(t)
	_ = s.View(func(tx *Tx) error {
		if _, ok := tx.IndexStamp(); ok {
			t.Fatal("a new store has a stamp")
		}
		return nil
	})
	want := IndexStamp{Version: 7, Size: 1 << 33, MtimeNS: -5}
	if err := s.Update(func(tx *Tx) error { return tx.SetIndexStamp(want) }); err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(tx *Tx) error {
		if got, ok := tx.IndexStamp(); !ok || got != want {
			t.Fatalf("stamp %+v %v", got, ok)
		}
		return nil
	})
}

// TestCatalog_Folders: the pages of a type per folder are counted as pages
// come, move and go, so a new page's folder is chosen without walking the
// type's pages.
func TestCatalog_Folders(t *testing.T) {
	s := openCatalogTestStore(t)
	putCatalogPage(t, s, &PageRec{Path: "wiki/people/a.md", Title: "A", Type: "person"})
	putCatalogPage(t, s, &PageRec{Path: "wiki/people/b.md", Title: "B", Type: "person"})
	putCatalogPage(t, s, &PageRec{Path: "wiki/c.md", Title: "C", Type: "person"})
	putCatalogPage(t, s, &PageRec{Path: "wiki/people/d.md", Title: "D", Type: "topic"})
	// b becomes a topic
	putCatalogPage(t, s, &PageRec{Path: "wiki/people/b.md", Title: "B", Type: "topic"})
	err := s.Update(func(tx *Tx) error {
		p, err := tx.Page(tx.DocByPath("wiki/c.md"))
		if err != nil {
			return err
		}
		return tx.DeletePage(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(tx *Tx) error {
		if got := tx.CatalogFolders("person"); !reflect.DeepEqual(got, map[string]int{"wiki/people": 1}) {
			t.Errorf("person folders %v", got)
		}
		if got := tx.CatalogFolders("topic"); !reflect.DeepEqual(got, map[string]int{"wiki/people": 2}) {
			t.Errorf("topic folders %v", got)
		}
		if got := tx.CatalogFolders("none"); len(got) != 0 {
			t.Errorf("unknown type folders %v", got)
		}
		if tx.CatalogMissing() {
			t.Error("counts do not add up")
		}
		return nil
	})
}

// TestCatalog_DeclaredNotes: only notes whose frontmatter says note are
// counted per folder for placing a new note (every untyped page is a note
// too); the counts follow a page that gains or drops the declaration, moves
// or goes, and the flag survives the record's encoding.
func TestCatalog_DeclaredNotes(t *testing.T) {
	s := openCatalogTestStore(t)
	for _, n := range []string{"a", "b", "c"} {
		putCatalogPage(t, s, &PageRec{Path: "wiki/Plugins/" + n + ".md", Title: n, Type: "note"})
	}
	putCatalogPage(t, s, &PageRec{Path: "wiki/notes/x.md", Title: "X", Type: "note", TypeDeclared: true})
	putCatalogPage(t, s, &PageRec{Path: "wiki/notes/y.md", Title: "Y", Type: "note", TypeDeclared: true})
	putCatalogPage(t, s, &PageRec{Path: "wiki/Plugins/a.md", Title: "a", Type: "note", TypeDeclared: true}) // a gains it
	putCatalogPage(t, s, &PageRec{Path: "wiki/notes/y.md", Title: "Y", Type: "note"})                       // y drops it
	putCatalogPage(t, s, &PageRec{Path: "wiki/people/p.md", Title: "P", Type: "person", TypeDeclared: true})
	_ = s.View(func(tx *Tx) error {
		if got := tx.CatalogDeclaredNotes(); !reflect.DeepEqual(got, map[string]int{"wiki/Plugins": 1, "wiki/notes": 1}) {
			t.Errorf("declared notes %v", got)
		}
		if got := tx.CatalogFolders("note"); !reflect.DeepEqual(got, map[string]int{"wiki/Plugins": 3, "wiki/notes": 2}) {
			t.Errorf("note folders %v", got)
		}
		p, err := tx.Page(tx.DocByPath("wiki/Plugins/a.md"))
		if err != nil || !p.TypeDeclared {
			t.Errorf("TypeDeclared not kept: %+v %v", p, err)
		}
		return nil
	})
	err := s.Update(func(tx *Tx) error {
		p, err := tx.Page(tx.DocByPath("wiki/notes/x.md"))
		if err != nil {
			return err
		}
		if err := tx.DeletePage(p); err != nil {
			return err
		}
		return tx.RebuildCatalog()
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(tx *Tx) error {
		if got := tx.CatalogDeclaredNotes(); !reflect.DeepEqual(got, map[string]int{"wiki/Plugins": 1}) {
			t.Errorf("declared notes after a delete and a rebuild %v", got)
		}
		if tx.CatalogMissing() {
			t.Error("counts do not add up")
		}
		return nil
	})
}
