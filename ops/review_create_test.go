package ops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestReview_CreateWhatTheItemProposes (create "writes a stub
// page per proposed title"): create writes a stub for a missing-page item
// and for a suggestion whose title proposes a page ("Create page: X");
// for every other item — lint's "Orphan page: X", "No outgoing links: X",
// "Missing source: …", "Missing file: …", a duplicate, a contradiction, a
// confirm, any other suggestion — the title is no page title, so create is
// invalid, naming the actions that apply, and nothing is written: no
// "Orphan page: X" page, the item stays pending.
func TestReview_CreateWhatTheItemProposes(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/lonely.md", "---\ntitle: Lonely\nsources: [raw/sources/gone.md]\n---\nLinks to [[Lonely]] and ![[lost.png]] only.\n")
	testvault.Write(t, v, "wiki/a/twin.md", "---\ntitle: Twin\n---\n[[Lonely]]\n")
	testvault.Write(t, v, "wiki/b/twin.md", "---\ntitle: Twin\n---\n[[Lonely]]\n")
	e := newTestEnv(t, v)
	mustCall[LintOut](t, e, opLint, obj{"to_review": true})
	add(t, e, TypeContradiction, "Twin pages disagree on the date")
	add(t, e, TypeConfirm, "Check the Lonely figures")
	add(t, e, TypeSuggestion, "Split Lonely in two")
	pages := func() int { return mustCall[ListPagesOut](t, e, opListPages, obj{}).Total }
	before := pages()
	refused := 0
	for _, it := range mustCall[ListReviewsOut](t, e, opListReviews, obj{"limit": 100}).Items {
		_, err := call[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "create"})
		wantCode(t, err, errs.Invalid, it.Type, "proposes no page", "skip, dismiss, resolve")
		if got := item(t, e, it.ID); got.Status != StatusPending {
			t.Errorf("%s %q is %s after a refused create", it.Type, it.Title, got.Status)
		}
		refused++
	}
	if refused < 8 {
		t.Fatalf("only %d items to refuse (lint should file orphans, no outlinks, missing source and file, duplicate)", refused)
	}
	if n := pages(); n != before {
		t.Errorf("a refused create wrote pages: %d → %d", before, n)
	}
	filepath.WalkDir(v.Abs("wiki"), func(p string, d os.DirEntry, err error) error {
		if strings.Contains(strings.ToLower(d.Name()), "orphan") || strings.Contains(d.Name(), "missing") {
			t.Errorf("create wrote %s", p)
		}
		return nil
	})

	// a suggestion that proposes a page gets its stub, titled as proposed
	it := add(t, e, TypeSuggestion, "Create page: Pour over", "rationale", "Three sources describe it.")
	out := mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "create"})
	if out.Status != StatusCreated || len(out.Pages) != 1 || out.Pages[0].Title != "Pour over" {
		t.Fatalf("create on %q: %+v", it.Title, out)
	}
	g := mustCall[GetPageOut](t, e, opGetPage, obj{"title": "Pour over"})
	if !strings.HasPrefix(g.Content, "# Pour over\n") || !strings.Contains(g.Content, "Three sources describe it.") {
		t.Errorf("stub:\n%s", g.Content)
	}
	// and a missing-page item still does
	mp := add(t, e, TypeMissingPage, "Missing page: Cold brew")
	if out := mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": mp.ID, "action": "create"}); out.Status != StatusCreated {
		t.Errorf("missing-page create: %+v", out)
	}
}
