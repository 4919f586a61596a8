package ops

import (
	"reflect"
	"slices"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

func refTitles(refs []PageRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Title+"="+r.Path)
	}
	return out
}

func TestLint_Findings(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/a.md", "---\ntitle: Alpha\nsources: [raw/sources/gone.md, raw/sources/here.md]\n---\nSee [[Beta]] and [[Nowhere]].\n")
	testvault.Write(t, v, "wiki/b.md", "---\ntitle: Beta\n---\nNo links here, only [[Beta|myself]].\n")
	testvault.Write(t, v, "wiki/sub/alpha.md", "---\ntitle: alpha\n---\nLinks to [[b]].\n")
	testvault.Write(t, v, "raw/sources/here.md", "a source\n")
	e := newTestEnv(t, v)
	out := mustCall[LintOut](t, e, opLint, obj{})
	if len(out.BrokenLinks) != 1 || out.BrokenLinks[0].Target != "Nowhere" {
		t.Errorf("broken links %+v", out.BrokenLinks)
	}
	// [[Alpha]] links nowhere, so both Alpha pages are orphans
	if got, want := refTitles(out.Orphans), []string{"alpha=wiki/sub/alpha.md", "Alpha=wiki/a.md"}; !reflect.DeepEqual(got, want) && !reflect.DeepEqual(got, []string{want[1], want[0]}) {
		t.Errorf("orphans %v", got)
	}
	if got := refTitles(out.NoOutlinks); !reflect.DeepEqual(got, []string{"Beta=wiki/b.md"}) {
		t.Errorf("no outlinks %v (a self-link is not an outlink)", got)
	}
	if len(out.MissingSources) != 1 || out.MissingSources[0].Source != "raw/sources/gone.md" || refTitles(out.MissingSources[0].Pages)[0] != "Alpha=wiki/a.md" {
		t.Errorf("missing sources %+v", out.MissingSources)
	}
	if len(out.DuplicateTitles) != 1 || len(out.DuplicateTitles[0].Pages) != 2 {
		t.Errorf("duplicate titles %+v", out.DuplicateTitles)
	}
	if out.Findings != 6 || out.Filed != nil {
		t.Errorf("findings %d, filed %+v", out.Findings, out.Filed)
	}
	if l := mustCall[ListReviewsOut](t, e, opListReviews, obj{"status": "all"}); l.Total != 0 {
		t.Errorf("lint without to_review filed %d items", l.Total)
	}

	filed := mustCall[LintOut](t, e, opLint, obj{"to_review": true}).Filed
	if *filed != (LintFiled{Added: 6}) {
		t.Errorf("first filing %+v", filed)
	}
	byType := map[string][]string{}
	for _, it := range mustCall[ListReviewsOut](t, e, opListReviews, obj{}).Items {
		if it.Origin != OriginLint {
			t.Errorf("origin %q", it.Origin)
		}
		byType[it.Type] = append(byType[it.Type], it.Title)
	}
	want := map[string][]string{
		TypeMissingPage: {"Nowhere"},
		TypeSuggestion:  {"Orphan page: Alpha (wiki/a.md)", "Orphan page: alpha (wiki/sub/alpha.md)", "No outgoing links: Beta"},
		TypeConfirm:     {"Missing source: raw/sources/gone.md"},
		TypeDuplicate:   {out.DuplicateTitles[0].Title},
	}
	for typ, titles := range want {
		slices.Sort(titles)
		slices.Sort(byType[typ])
		if !slices.Equal(byType[typ], titles) {
			t.Errorf("%s items %v, want %v", typ, byType[typ], titles)
		}
	}

	// a missing page written outside synapse: the next lint resolves it
	// (lint rescans first: no explicit scan here)
	testvault.Write(t, v, "wiki/nowhere.md", "Now it exists, see [[Beta]].\n")
	again := mustCall[LintOut](t, e, opLint, obj{"to_review": true})
	if len(again.BrokenLinks) != 0 || *again.Filed != (LintFiled{Refreshed: 5, AutoResolved: 1}) {
		t.Errorf("second filing: broken %v, filed %+v", again.BrokenLinks, again.Filed)
	}
	l := mustCall[ListReviewsOut](t, e, opListReviews, obj{"status": "auto_resolved"})
	if l.Total != 1 || l.Items[0].Title != "Nowhere" || l.Items[0].Resolution != "page exists: wiki/nowhere.md" {
		t.Errorf("auto-resolved %+v", l.Items)
	}
}

// Running lint --to-review twice on the Obsidian Help corpus files the
// dangling "Example" link once and does not grow the queue; a decision on
// it stands through later runs.
func TestLint_CorpusIdempotent(t *testing.T) {
	e := newTestEnv(t, testvault.WithCorpus(t))
	first := mustCall[LintOut](t, e, opLint, obj{"to_review": true})
	if first.Filed.Added != first.Findings || first.Findings == 0 {
		t.Fatalf("first run: %d findings, filed %+v", first.Findings, first.Filed)
	}
	total := mustCall[ListReviewsOut](t, e, opListReviews, obj{"status": "all"}).Total
	second := mustCall[LintOut](t, e, opLint, obj{"to_review": true})
	if second.Filed.Added != 0 || second.Filed.Refreshed != first.Findings {
		t.Errorf("second run filed %+v", second.Filed)
	}
	if n := mustCall[ListReviewsOut](t, e, opListReviews, obj{"status": "all"}).Total; n != total {
		t.Errorf("queue grew from %d to %d", total, n)
	}
	missing := mustCall[ListReviewsOut](t, e, opListReviews, obj{"type": "missing-page"})
	if missing.Total != 1 || missing.Items[0].Title != "Example" {
		t.Fatalf("missing-page items %+v", missing.Items)
	}
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": missing.Items[0].ID, "action": "dismiss"})
	third := mustCall[LintOut](t, e, opLint, obj{"to_review": true})
	if third.Filed.AlreadyTerminal != 1 || third.Filed.Added != 0 {
		t.Errorf("third run filed %+v", third.Filed)
	}
	if got := item(t, e, missing.Items[0].ID); got.Status != StatusDismissed {
		t.Errorf("lint re-opened a dismissed item: %+v", got)
	}
}
