package ops

import (
	"os"
	"reflect"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// A missing-page item resolves when a written page answers its link by
// any of Obsidian's rules, not only by title: a file name, a path or a
// path suffix, an alias.
func TestReview_MissingPageResolvedByAnyName(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Hub",
		"content": "[[work-folders]], [[concepts/deep-dive|dive]], [[wiki/concepts/full-path]], [[Other Name]], [[Still Missing]].\n"})
	if n := len(itemsByTitle(t, e)); n != 5 {
		t.Fatalf("%d items filed, want 5", n)
	}
	for _, w := range []obj{
		{"title": "Work Folders", "content": "By file name.\n"},                                             // wiki/concepts/work-folders.md
		{"title": "Deep Dive", "content": "By path suffix.\n"},                                              // wiki/concepts/deep-dive.md
		{"title": "Full Path", "content": "By vault path.\n"},                                               // wiki/concepts/full-path.md
		{"title": "Named", "content": "By alias.\n", "frontmatter": obj{"aliases": []string{"other name"}}}, // an alias
	} {
		mustCall[WritePageOut](t, e, opWritePage, w)
	}
	got := itemsByTitle(t, e)
	// the resolution says which name of the page answers the link
	for title, page := range map[string]string{"work-folders": "work-folders.md (it answers [[work-folders]] by its file name)",
		"concepts/deep-dive":      "deep-dive.md (it answers [[concepts/deep-dive]] by its path)",
		"wiki/concepts/full-path": "full-path.md (it answers [[wiki/concepts/full-path]] by its path)",
		"Other Name":              "named.md (it answers [[Other Name]] by its alias)"} {
		it := got[title]
		if it.Status != StatusAutoResolved || it.DecidedBy != OriginRule || it.Resolution != "page written: wiki/concepts/"+page {
			t.Errorf("%s: %s by %q (%s)", title, it.Status, it.DecidedBy, it.Resolution)
		}
	}
	if it := got["Still Missing"]; it.Status != StatusPending {
		t.Errorf("Still Missing is %s", it.Status)
	}
}

// Who decided is recorded on every item, by hand (user, agent) or by a
// producer (rule, lint), without a status of its own, and counted by
// status.
func TestReview_DecidedBy(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	a := add(t, e, TypeConfirm, "By default")
	b := add(t, e, TypeConfirm, "By a person")
	c := add(t, e, TypeConfirm, "In bulk")
	d := add(t, e, TypeMissingPage, "Written")
	f := add(t, e, TypeMissingPage, "Appeared")
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": a.ID, "action": "resolve"})
	mustCall[ResolveReviewOut](t, e, opPatchReview, obj{"id": b.ID, "status": "auto_resolved", "decided_by": "user"})
	mustCall[BulkOut](t, e, opBulk, obj{"ids": []string{c.ID}, "action": "mark-resolved"}) // the UI's form: a person
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Written", "content": "Here.\n"})
	// a page that appeared without synapse: lint finds it answers
	if err := os.WriteFile(e.Vault.Abs("wiki/appeared.md"), []byte("# Appeared\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustCall[LintOut](t, e, opLint, obj{"to_review": true})
	for _, w := range []struct {
		id, by, resolution string
	}{
		{a.ID, OriginAgent, "marked resolved"},
		{b.ID, OriginUser, "marked resolved"},
		{c.ID, OriginUser, "marked resolved"},
		{d.ID, OriginRule, "page written: wiki/concepts/written.md (it answers [[Written]] by its title)"},
		{f.ID, OriginLint, "page exists: wiki/appeared.md"},
	} {
		if it := item(t, e, w.id); it.Status != StatusAutoResolved || it.DecidedBy != w.by || it.Resolution != w.resolution {
			t.Errorf("%s: %s by %q (%s), want by %q (%s)", it.Title, it.Status, it.DecidedBy, it.Resolution, w.by, w.resolution)
		}
	}
	st := mustCall[StatusOut](t, e, opStatus, obj{})
	want := map[string]int{OriginAgent: 1, OriginUser: 2, OriginRule: 1, OriginLint: 1}
	if got := st.ReviewsDecidedBy[StatusAutoResolved]; !reflect.DeepEqual(got, want) || st.Reviews[StatusAutoResolved] != 5 {
		t.Errorf("status: %d auto_resolved, by %v", st.Reviews[StatusAutoResolved], got)
	}
}

// A refresh by lint fills what an item lacks but never replaces the
// rationale an agent or a person wrote; a person's replaces an agent's.
func TestReview_RefreshKeepsWhatPeopleWrote(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	it := add(t, e, TypeMissingPage, "Ghost", "rationale", "the agent's reason")
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Haunted", "content": "See [[Ghost]].\n"})
	mustCall[LintOut](t, e, opLint, obj{"to_review": true})
	got := item(t, e, it.ID)
	if got.Rationale != "the agent's reason" || got.Origin != OriginAgent || len(got.ReferencedPages) == 0 || got.Page == "" {
		t.Errorf("after write_page's and lint's refreshes: %+v", got)
	}
	add(t, e, TypeMissingPage, "Ghost", "rationale", "the person's reason", "origin", "user")
	add(t, e, TypeMissingPage, "Ghost", "rationale", "the agent tries again")
	mustCall[LintOut](t, e, opLint, obj{"to_review": true})
	if got := item(t, e, it.ID); got.Rationale != "the person's reason" {
		t.Errorf("rationale %q", got.Rationale)
	}
}

// A missing-page item resolves however the page that answers it comes to
// be: a page moved or renamed to the name (decided by rule, as a write),
// an existing page given the name as an alias by a write, or a file put
// there by hand that lint finds (by its path or an alias; decided by
// lint).
func TestReview_MissingPageResolvedByMoveAliasOrLint(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Guard", "content": "Old.\n"})
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Person", "content": "Someone.\n"})
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Hub",
		"content": "[[Old Guard]], [[Nickname]], [[archive/relic]], [[Moniker]], [[Still Missing]].\n"})
	if n := len(itemsByTitle(t, e)); n != 5 {
		t.Fatalf("%d items filed, want 5", n)
	}
	moved := mustCall[MovePageOut](t, e, opMovePage, obj{"title": "Guard", "to": "Old Guard"})
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Person", "content": "Someone.\n", "frontmatter": obj{"aliases": []string{"Nickname"}}})
	testvault.Write(t, e.Vault, "wiki/archive/relic.md", "# Relic\n")
	testvault.Write(t, e.Vault, "wiki/other.md", "---\ntitle: Other\naliases: [Moniker]\n---\nBy hand.\n")
	mustCall[LintOut](t, e, opLint, obj{"to_review": true})
	got := itemsByTitle(t, e)
	for _, w := range []struct{ title, by, resolution string }{
		{"Old Guard", OriginRule, "page written: " + moved.Path + " (it answers [[Old Guard]] by its title)"},
		{"Nickname", OriginRule, "page written: wiki/concepts/person.md (it answers [[Nickname]] by its alias)"},
		{"archive/relic", OriginLint, "page exists: wiki/archive/relic.md"},
		{"Moniker", OriginLint, "page exists: wiki/other.md"},
	} {
		if it := got[w.title]; it.Status != StatusAutoResolved || it.DecidedBy != w.by || it.Resolution != w.resolution {
			t.Errorf("%s: %s by %q (%s), want by %q (%s)", w.title, it.Status, it.DecidedBy, it.Resolution, w.by, w.resolution)
		}
	}
	if it := got["Still Missing"]; it.Status != StatusPending {
		t.Errorf("Still Missing is %s", it.Status)
	}
}

// itemsByTitle is the whole queue by item title.
func itemsByTitle(t *testing.T, e *Env) map[string]ReviewItem {
	t.Helper()
	out := map[string]ReviewItem{}
	for _, it := range allItems(t, e) {
		out[it.Title] = it
	}
	return out
}

// TestAutoResolve_KeepsTheWritersLog: a missing-page item a write closes
// (an alias given to an existing page) carries the write's --log line as
// its note, and its resolution names the alias.
func TestAutoResolve_KeepsTheWritersLog(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Hub", "content": "[[cipher-bronze]]\n"})
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Cipher Bronze", "content": "The page.\n", "path": "wiki/datasets/Cipher Bronze Café.md"})
	w := mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Cipher Bronze", "aliases": []string{"cipher-bronze"}, "log": "the link's slug names this page"})
	if len(w.AutoResolved) != 1 {
		t.Fatalf("auto_resolved %v", w.AutoResolved)
	}
	it := item(t, e, w.AutoResolved[0])
	if it.Note != "the link's slug names this page" || it.Resolution != "page written: wiki/datasets/Cipher Bronze Café.md (it answers [[cipher-bronze]] by its alias)" {
		t.Errorf("note %q, resolution %q", it.Note, it.Resolution)
	}
}
