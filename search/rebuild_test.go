package search_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
)

// TestSearch_RebuildsAStaleIndex: a search index another analyzer version
// built answers unavailable; the next scan (incremental, the files
// unchanged but one) rebuilds the search index alone, says so through
// Notify, and search answers again — the edited page with its new text.
func TestSearch_RebuildsAStaleIndex(t *testing.T) {
	w := newTestWiki(t, basicWiki)
	s := w.ix.Store
	if err := s.Update(func(tx *store.Tx) error { return tx.SetSearchVersion("0-older") }); err != nil {
		t.Fatal(err)
	}
	if _, err := w.search("engine", 5); errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "another version") {
		t.Fatalf("stale index: err = %v, want unavailable naming another version", err)
	}
	testvault.Write(t, w.v, "wiki/concepts/analytical-engine.md", "---\ntitle: Analytical Engine\ntype: concept\n---\nNow about jacquard looms.\n")
	var notes []string
	var phases []string
	w.ix.Notify = func(s string) { notes = append(notes, s) }
	w.ix.Progress = func(phase string, done, total int) {
		if phase == "search" && !slices.Contains(phases, phase) {
			phases = append(phases, phase)
		}
	}
	rep, err := w.ix.Scan(context.Background(), index.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ChangedCount != 1 || rep.NewCount+rep.DeletedCount != 0 || rep.Unchanged != rep.Scanned-1 {
		t.Errorf("the rebuild scan re-read the vault as changed: %+v", rep)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "the search index was built by another version of synapse; rebuilding it") {
		t.Errorf("notes = %q", notes)
	}
	if !slices.Equal(phases, []string{"search"}) {
		t.Errorf("progress phases = %v, want the search phase", phases)
	}
	if got := w.titles("jacquard"); !slices.Equal(got, []string{"Analytical Engine"}) {
		t.Errorf("after the rebuild, jacquard → %v", got)
	}
	if got := w.titles("Countess of Lovelace"); len(got) == 0 || got[0] != "Ada Lovelace" {
		t.Errorf("after the rebuild, an unchanged page: %v", got)
	}
	s.View(func(tx *store.Tx) error {
		if v, st := tx.SearchVersion(), tx.SearchStats(); v != search.AnalyzerVersion || int(st.Docs) != tx.PageCount() {
			t.Errorf("rebuilt index: version %q, %d docs of %d pages", v, st.Docs, tx.PageCount())
		}
		return nil
	})
	// the next scan has nothing to rebuild
	notes = nil
	if _, err := w.ix.Scan(context.Background(), index.ScanOptions{}); err != nil || len(notes) != 0 {
		t.Errorf("second scan: %v, notes %q", err, notes)
	}
}

// TestSearch_RebuildGoesOn: a rebuild that stopped half way (the index
// emptied, a page of it filled) answers unavailable with how far it got,
// and the next scan finishes it.
func TestSearch_RebuildGoesOn(t *testing.T) {
	w := newTestWiki(t, basicWiki)
	s := w.ix.Store
	err := s.Update(func(tx *store.Tx) error {
		if err := (search.Indexer{}).ResetPages(tx); err != nil {
			return err
		}
		rec, err := tx.Page(tx.DocByPath("wiki/entities/ada-lovelace.md"))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(w.v.Abs(rec.Path))
		if err != nil {
			return err
		}
		return search.Indexer{}.IndexPages(tx, []index.IndexedPage{{Doc: rec.Doc, Rec: rec, Parsed: markdown.Parse(rec.Path, data)}})
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.search("engine", 5)
	if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "being rebuilt") || !strings.Contains(err.Error(), "1 of 6 pages") {
		t.Fatalf("half rebuilt: err = %v, want unavailable with its progress", err)
	}
	w.scan()
	if got := sorted(w.titles("engine")); !slices.Equal(got, []string{"Ada Lovelace", "Analytical Engine", "Charles Babbage"}) {
		t.Errorf("after the rebuild went on: engine → %v", got)
	}
}
