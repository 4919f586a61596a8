package ops

import (
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// A move keeps the moved page's history: page history at its new name
// lists the revisions from before the move and then the move (from
// where); the old id keeps no history of its own; a revision from before
// the move can be restored at the new path. Each page whose links the
// move rewrote gets a revision, and one synapse never wrote keeps its
// bytes from before the move too. recent lists the move and the
// rewrites.
func TestMove_HistoryFollowsThePage(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/finch.md", "Sings near [[Shrike]].\n") // never written through synapse
	e := newTestEnv(t, v)
	first := mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Shrike", "content": "# Shrike\n\nOne.\n"})
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Shrike", "content": "# Shrike\n\nTwo.\n"})
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Wren", "content": "Eaten by [[Shrike]].\n"})
	finch := readFile(t, v, "wiki/finch.md")

	out := mustCall[MovePageOut](t, e, opMovePage, obj{"title": "Shrike", "to": "Butcherbird", "path": "wiki/birds/butcherbird.md"})
	// (the only note: the page's "# Shrike" heading follows the new title)
	if out.Revision != 3 || len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "follows the new title") || out.Commit != "" || len(out.Changed) != 2 {
		t.Fatalf("move: revision %d, notes %v, commit %q, changed %+v", out.Revision, out.Notes, out.Commit, out.Changed)
	}
	h := historyOf(t, e, "Butcherbird")
	if got := strings.Join(revOps(h), " "); got != "3:move:synapse 2:write:synapse 1:create:synapse" {
		t.Fatalf("the moved page's history: %s", got)
	}
	if top := h.Revisions[0]; top.MovedFrom != first.Path || top.Path != "wiki/birds/butcherbird.md" || top.Title != "Butcherbird" || h.Current != 3 {
		t.Fatalf("the move's revision %+v (current %d)", top, h.Current)
	}
	if h.Revisions[2].Path != first.Path || h.Revisions[2].Title != "Shrike" {
		t.Errorf("the first revision %+v", h.Revisions[2])
	}
	if !e.History.Has(first.ID) || first.ID != out.ID {
		t.Errorf("the page changed id in the move: %s (was %s)", out.ID, first.ID)
	}

	wren := historyOf(t, e, "Wren")
	if got := strings.Join(revOps(wren), " "); got != "2:relink:synapse 1:create:synapse" || wren.Current != 2 {
		t.Errorf("a rewritten page's history: %s (current %d)", got, wren.Current)
	}
	fh := historyOf(t, e, "finch")
	if got := strings.Join(revOps(fh), " "); got != "2:relink:synapse 1:edit:file" || fh.Current != 2 {
		t.Errorf("a rewritten page synapse never wrote: %s (current %d)", got, fh.Current)
	}
	p, err := e.History.Read(fh.ID)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := p.Content(1); err != nil || string(data) != finch {
		t.Errorf("its bytes before the move: %q, %v", data, err)
	}
	if !strings.Contains(readFile(t, v, "wiki/finch.md"), "[[butcherbird]]") { // by file name, as it was
		t.Errorf("finch.md was not rewritten: %q", readFile(t, v, "wiki/finch.md"))
	}

	got := actions(recentT(t, e, &RecentIn{}))
	for _, want := range []string{"page:moved:Butcherbird", "page:links rewritten:Wren", "page:links rewritten:finch", "page:created:Shrike"} {
		if !strings.Contains(" "+got+" ", " "+want+" ") {
			t.Errorf("recent lacks %s: %s", want, got)
		}
	}
	mp, err := e.History.Read(out.ID)
	if err != nil {
		t.Fatal(err)
	}
	rev1, err := mp.Content(1)
	if err != nil || !strings.Contains(string(rev1), "One.") {
		t.Fatalf("revision 1: %q, %v", rev1, err)
	}
	if _, err := restore(t, e, "Butcherbird", 1, ""); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, v, "wiki/birds/butcherbird.md"); got != string(rev1) {
		t.Errorf("revision 1 restored at the new path: %q, want %q", got, rev1)
	}
}
