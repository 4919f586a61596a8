package ops

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

// A missing page shows every page whose links match no page, with the
// lines that hold the links (numbered from the top of the file), and the
// stub that create would write — the very text create then writes.
func TestReviewShow_MissingPage(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/coffee.md", "---\ntitle: Coffee\n---\nIntro.\n\nSee [[Cold brew]] and\n[[cold brew#Ratio]].\n")
	testvault.Write(t, v, "wiki/drinks/iced.md", "---\ntitle: Iced drinks\nrelated: \"[[Cold Brew]]\"\n---\nno body link\n")
	testvault.Write(t, v, "wiki/tea.md", "---\ntitle: Tea\n---\n[[Coffee]]\n")
	e := newTestEnv(t, v)
	it := add(t, e, TypeMissingPage, "Cold brew", "referenced_pages", []string{"Tea"}, "rationale", "Asked twice.")
	got := mustCall[ShowReviewOut](t, e, opShowReview, obj{"id": it.ID})
	if got.Item.ID != it.ID || got.LinkersTotal != 2 || len(got.Linkers) != 2 {
		t.Fatalf("show %+v", got)
	}
	want := []LinkingPage{
		{PageRef: PageRef{Title: "Coffee", Path: "wiki/coffee.md"}, Lines: []LineText{{6, "See [[Cold brew]] and"}, {7, "[[cold brew#Ratio]]."}}},
		{PageRef: PageRef{Title: "Iced drinks", Path: "wiki/drinks/iced.md"}, Lines: []LineText{{3, "related: \"[[Cold Brew]]\""}}},
	}
	for i, w := range want {
		g := got.Linkers[i]
		if g.Title != w.Title || g.Path != w.Path || !slices.Equal(g.Lines, w.Lines) {
			t.Errorf("linker %d = %+v, want %+v", i, g, w)
		}
	}
	if len(got.Pages) != 1 || got.Pages[0].Title != "Tea" || !got.Pages[0].Found {
		t.Errorf("named pages %+v", got.Pages)
	}
	if !slices.Equal(got.Actions, []string{"create", "resolve", "skip", "dismiss"}) {
		t.Errorf("actions %v", got.Actions)
	}
	if got.Stub == nil || got.Stub.Title != "Cold brew" || !strings.HasPrefix(got.Stub.Path, "wiki/") ||
		!strings.Contains(got.Stub.Content, "- [[Coffee]]\n- [[Iced drinks]]") {
		t.Fatalf("stub %+v", got.Stub)
	}
	done := mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "create"})
	p := mustCall[GetPageOut](t, e, opGetPage, obj{"title": "Cold brew"})
	if p.Content != got.Stub.Content || done.Pages[0].Path != got.Stub.Path {
		t.Errorf("create wrote %s:\n%s\nthe preview said %s:\n%s", done.Pages[0].Path, p.Content, got.Stub.Path, got.Stub.Content)
	}
	after := mustCall[ShowReviewOut](t, e, opShowReview, obj{"id": it.ID})
	if len(after.Actions) != 0 || after.Stub != nil || after.Item.Status != StatusCreated {
		t.Errorf("a decided item offers %v, stub %v", after.Actions, after.Stub)
	}
}

// Each linking page quotes its own lines, whatever order the pages are
// listed in: the list is by title, the index holds them otherwise.
func TestReviewShow_LinesStayWithTheirPage(t *testing.T) {
	v := testvault.New(t)
	names := []string{"Zebra", "Mango", "Apple", "Kiwi"}
	for i, n := range names {
		body := strings.Repeat("filler\n", i) + "[[Cold brew]] from " + n + "\n"
		testvault.Write(t, v, fmt.Sprintf("wiki/%c-%d.md", 'a'+i, i), "---\ntitle: "+n+"\n---\n"+body)
	}
	e := newTestEnv(t, v)
	it := add(t, e, TypeMissingPage, "Cold brew")
	got := mustCall[ShowReviewOut](t, e, opShowReview, obj{"id": it.ID})
	if len(got.Linkers) != len(names) {
		t.Fatalf("linkers %+v", got.Linkers)
	}
	for i, l := range got.Linkers {
		if i > 0 && got.Linkers[i-1].Title > l.Title {
			t.Errorf("linkers not by title: %q before %q", got.Linkers[i-1].Title, l.Title)
		}
		if len(l.Lines) != 1 || !strings.HasSuffix(l.Lines[0].Text, "from "+l.Title) {
			t.Errorf("%s quotes %+v, not its own line", l.Title, l.Lines)
		}
	}
}

// A contradiction shows, for each page it names, the block that shares
// most words with the item; a duplicate shows the top of each page; a
// name no page answers to is listed as not found.
func TestReviewShow_NamedPages(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/a.md", "---\ntitle: Acme\n---\n# Acme\n\nA company.\n\nAcme was founded in 1998\nin Ohio.\n\nOther facts.\n")
	testvault.Write(t, v, "wiki/b.md", "---\ntitle: Acme history\n---\nIntro line.\n\nThe founding: Acme was founded in 2001.\n")
	testvault.Write(t, v, "wiki/x/acme.md", "---\ntitle: Acme\n---\nSecond Acme page.\n")
	e := newTestEnv(t, v)
	c := add(t, e, TypeContradiction, "Founding year of Acme", "page", "wiki/a.md",
		"referenced_pages", []string{"Acme history", "Nowhere"}, "rationale", "One says founded 1998, the other 2001.")
	got := mustCall[ShowReviewOut](t, e, opShowReview, obj{"id": c.ID})
	if len(got.Pages) != 3 {
		t.Fatalf("pages %+v", got.Pages)
	}
	if g := got.Pages[0]; g.Path != "wiki/a.md" || !slices.Equal(g.Lines, []LineText{{8, "Acme was founded in 1998"}, {9, "in Ohio."}}) {
		t.Errorf("page a: %+v", g)
	}
	if g := got.Pages[1]; g.Path != "wiki/b.md" || !slices.Equal(g.Lines, []LineText{{6, "The founding: Acme was founded in 2001."}}) {
		t.Errorf("page b: %+v", g)
	}
	if g := got.Pages[2]; g.Found || g.Name != "Nowhere" || g.Lines != nil {
		t.Errorf("unknown page: %+v", g)
	}
	if got.Stub != nil || slices.Contains(got.Actions, "create") {
		t.Errorf("a contradiction proposes no page: %v %+v", got.Actions, got.Stub)
	}
	d := add(t, e, TypeDuplicate, "Acme", "page", "wiki/a.md", "referenced_pages", []string{"wiki/x/acme.md"})
	got = mustCall[ShowReviewOut](t, e, opShowReview, obj{"id": d.ID})
	if len(got.Pages) != 2 || got.Pages[0].Lines[0] != (LineText{4, "# Acme"}) || got.Pages[1].Lines[0] != (LineText{4, "Second Acme page."}) {
		t.Errorf("duplicate %+v", got.Pages)
	}
	_, err := call[ShowReviewOut](t, e, opShowReview, obj{"id": "ZZZZZZ"})
	wantCode(t, err, errs.NotFound)
}

// A purpose suggestion previews the section create appends; deep-research
// is offered only when a research command is configured.
func TestReviewShow_AppendAndResearch(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	it := add(t, e, TypePurposeSuggestion, "Track prices", "rationale", "Readers ask for them.")
	got := mustCall[ShowReviewOut](t, e, opShowReview, obj{"id": it.ID})
	if got.Stub == nil || !got.Stub.Append || got.Stub.Path != "purpose.md" || got.Stub.Content != "## Track prices\n\nReaders ask for them.\n" {
		t.Errorf("stub %+v", got.Stub)
	}
	t.Setenv(ResearchCmdEnv, "cat")
	got = mustCall[ShowReviewOut](t, e, opShowReview, obj{"id": it.ID})
	if !slices.Contains(got.Actions, ActionDeepResearch) {
		t.Errorf("actions %v", got.Actions)
	}
}

// list_reviews filters by origin and by text (case-insensitive, over the
// id, title, rationale, page, source and referenced pages), paging and
// counting the matches.
func TestReview_ListByOriginAndText(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	for i := range 7 {
		origin := "agent"
		if i%2 == 1 {
			origin = "user"
		}
		add(t, e, TypeSuggestion, fmt.Sprintf("Idea %d", i), "origin", origin, "rationale", fmt.Sprintf("about Coffee %d", i%3))
	}
	cases := []struct {
		in    obj
		total int
		first string
	}{
		{obj{"origin": "user"}, 3, "Idea 1"},
		{obj{"origin": "USER", "limit": 1, "offset": 2}, 3, "Idea 5"},
		{obj{"text": "coffee 2"}, 2, "Idea 2"},
		{obj{"text": "COFFEE 0", "origin": "agent"}, 2, "Idea 0"},
		{obj{"text": "idea 6", "status": "all"}, 1, "Idea 6"},
		{obj{"text": "tea"}, 0, ""},
	}
	for _, c := range cases {
		l := mustCall[ListReviewsOut](t, e, opListReviews, c.in)
		first := ""
		if len(l.Items) > 0 {
			first = l.Items[0].Title
		}
		if l.Total != c.total || first != c.first {
			t.Errorf("%v: total %d first %q, want %d %q", c.in, l.Total, first, c.total, c.first)
		}
	}
	_, err := call[ListReviewsOut](t, e, opListReviews, obj{"origin": "robot"})
	wantCode(t, err, errs.Invalid, "rule, lint, agent, user")
}

// review show replays the journal first, like the other review verbs: a
// decision another copy of the vault made (its journal brought here, as a
// git pull does) shows at once, with who made it and no actions left.
func TestReviewShow_ReplaysTheJournal(t *testing.T) {
	here, there := testvault.New(t), testvault.New(t)
	e := newTestEnv(t, here)
	it := add(t, e, TypeConfirm, "Check the Egret dates")
	if out := mustCall[ShowReviewOut](t, e, opShowReview, obj{"id": it.ID}); len(out.Actions) == 0 {
		t.Fatalf("a pending item takes no action: %+v", out)
	}
	copyJournal(t, here, there)
	other := newTestEnv(t, there)
	mustCall[ResolveReviewOut](t, other, opResolveReview, obj{"id": it.ID, "action": "dismiss", "decided_by": "user"})
	copyJournal(t, there, here)
	out := mustCall[ShowReviewOut](t, e, opShowReview, obj{"id": it.ID})
	if out.Item.Status != StatusDismissed || out.Item.DecidedBy != OriginUser || len(out.Actions) != 0 {
		t.Errorf("after the pull: %s by %q, actions %v", out.Item.Status, out.Item.DecidedBy, out.Actions)
	}
}

func TestClipAround_ShowsTheLink(t *testing.T) {
	long := strings.Repeat("filler words here ", 40) // 720 characters
	line := long + "see [[cosmos-juniper-unwritten]] for more " + long
	got := clipAround(line, "cosmos-juniper-unwritten")
	if !strings.Contains(got, "[[cosmos-juniper-unwritten]]") || !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") {
		t.Fatalf("clipped: %q", got)
	}
	if n := len([]rune(got)); n > maxShowLine+2 {
		t.Fatalf("%d characters, more than %d", n, maxShowLine+2)
	}
	// a link near the start: cut at the end only, as before
	if got := clipAround("[[x]] "+long, "x"); got != clip("[[x]] "+long) {
		t.Fatalf("near the start: %q", got)
	}
	// a link near the end: the window ends with the line
	if got := clipAround(long+"[[tail]]", "tail"); !strings.HasSuffix(got, "[[tail]]") || !strings.HasPrefix(got, "…") {
		t.Fatalf("near the end: %q", got)
	}
	if got := clipAround("short [[x]]", "x"); got != "short [[x]]" {
		t.Fatalf("short line: %q", got)
	}
}
