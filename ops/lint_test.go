package ops

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
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
	out := mustCall[LintOut](t, e, opLint, obj{"full": true})
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
	// (the corpus embeds images it does not hold: broken file links, more
	// than the default limit lists)
	first := mustCall[LintOut](t, e, opLint, obj{"to_review": true, "limit": 1000})
	if first.Filed.Added != first.Findings || first.Findings == 0 {
		t.Fatalf("first run: %d findings, filed %+v", first.Findings, first.Filed)
	}
	total := mustCall[ListReviewsOut](t, e, opListReviews, obj{"status": "all"}).Total
	second := mustCall[LintOut](t, e, opLint, obj{"to_review": true, "limit": 1000})
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
	third := mustCall[LintOut](t, e, opLint, obj{"to_review": true, "limit": 1000})
	if third.Filed.AlreadyTerminal != 1 || third.Filed.Added != 0 {
		t.Errorf("third run filed %+v", third.Filed)
	}
	if got := item(t, e, missing.Items[0].ID); got.Status != StatusDismissed {
		t.Errorf("lint re-opened a dismissed item: %+v", got)
	}
}

// scopedVault has findings on two pages, so a scope can be told apart.
func scopedVault(t *testing.T) *Env {
	v := testvault.New(t)
	w := func(rel, body string) { testvault.Write(t, v, rel, body) }
	w("raw/sources/here.md", "a source\n")
	w("wiki/p.md", "---\ntitle: P\nsources: [raw/sources/gone-p.md, raw/sources/here.md]\n---\n[[Nowhere]] [[Nowhere]] [[Also missing]] [[Q]]\n")
	w("wiki/q.md", "---\ntitle: Q\n---\n[[Elsewhere]] [[P]] [[Nowhere]]\n[[../raw/sources/gone-link.md|original]]\n")
	w("wiki/r.md", "---\ntitle: R\nsources: [raw/sources/gone-r.md]\n---\nno links\n")
	w("wiki/dup/r.md", "---\ntitle: R\n---\n[[P]]\n")
	w("wiki/broken.md", "---\ntitle: [unclosed\nrelated: \"[[P]]\"\n---\nbody [[Q]]\n")
	return newTestEnv(t, v)
}

func TestLint_PageScope(t *testing.T) {
	e := scopedVault(t)
	all := mustCall[LintOut](t, e, opLint, obj{"full": true})
	if all.Counts.BrokenLinks != 3 || all.Counts.MissingSources != 3 || all.Counts.DuplicateTitles != 1 || all.Counts.FrontmatterErrors != 1 {
		t.Fatalf("vault counts %+v", all.Counts)
	}
	p := mustCall[LintOut](t, e, opLint, obj{"full": true, "page": []string{"P"}})
	if p.Page == nil || p.Page.Path != "wiki/p.md" {
		t.Fatalf("page %+v", p.Page)
	}
	var broken []string
	for _, b := range p.BrokenLinks {
		if len(b.Pages) != 1 || b.Pages[0].Path != "wiki/p.md" {
			t.Errorf("%s: pages %+v, want only P", b.Target, b.Pages)
		}
		broken = append(broken, b.Target+"="+strconv.Itoa(b.Links))
	}
	if strings.Join(broken, ",") != "Nowhere=2,Also missing=1" {
		t.Errorf("P's broken links %v (Q's Elsewhere is not P's)", broken)
	}
	if len(p.MissingSources) != 1 || p.MissingSources[0].Source != "raw/sources/gone-p.md" {
		t.Errorf("P's missing sources %+v", p.MissingSources)
	}
	if p.Counts.Orphans != 0 || p.Counts.NoOutlinks != 0 || p.Counts.DuplicateTitles != 0 || p.Counts.FrontmatterErrors != 0 || p.Findings != 3 {
		t.Errorf("P counts %+v, findings %d", p.Counts, p.Findings)
	}
	r := mustCall[LintOut](t, e, opLint, obj{"full": true, "page": []string{"wiki/r.md"}})
	if r.Counts != (LintCounts{Orphans: 1, NoOutlinks: 1, MissingSources: 1, DuplicateTitles: 1}) {
		t.Errorf("R counts %+v", r.Counts)
	}
	if len(r.DuplicateTitles) != 1 || len(r.DuplicateTitles[0].Pages) != 2 {
		t.Errorf("R duplicate %+v", r.DuplicateTitles)
	}
	b := mustCall[LintOut](t, e, opLint, obj{"full": true, "page": []string{"broken"}})
	if len(b.FrontmatterErrors) != 1 || b.FrontmatterErrors[0].Path != "wiki/broken.md" || b.FrontmatterErrors[0].Error == "" || b.FrontmatterErrors[0].Line != 2 {
		t.Fatalf("frontmatter errors %+v", b.FrontmatterErrors)
	}
	if _, err := call[LintOut](t, e, opLint, obj{"page": []string{"No such page"}}); errs.CodeOf(err) != errs.NotFound {
		t.Errorf("unknown page: %v", err)
	}

	// graph missing takes the same scope
	gm := mustCall[MissingOut](t, e, opMissing, obj{"page": "Q"})
	if gm.Total != 2 || gm.Targets[0].Target != "Elsewhere" || gm.Targets[1].Target != "Nowhere" || gm.Targets[1].Links != 1 || gm.Page.Title != "Q" {
		t.Errorf("graph missing --page Q: %+v", gm)
	}
	full := mustCall[MissingOut](t, e, opMissing, obj{})
	if full.Total != 3 || full.Targets[0].Target != "Nowhere" || full.Targets[0].Links != 3 || len(full.Targets[0].Pages) != 2 {
		t.Errorf("graph missing: %+v", full)
	}
	paged := mustCall[MissingOut](t, e, opMissing, obj{"limit": 1, "offset": 1})
	if paged.Total != 3 || len(paged.Targets) != 1 || paged.Targets[0].Target == "Nowhere" {
		t.Errorf("graph missing paged: %+v", paged)
	}
}

func TestLint_PagingCategoriesAndFiling(t *testing.T) {
	e := scopedVault(t)
	one := mustCall[LintOut](t, e, opLint, obj{"limit": 1})
	if len(one.BrokenLinks) != 1 || len(one.MissingSources) != 1 || one.Counts.BrokenLinks != 3 || one.Counts.MissingSources != 3 {
		t.Errorf("limit 1: %d broken of %d, %d sources of %d", len(one.BrokenLinks), one.Counts.BrokenLinks, len(one.MissingSources), one.Counts.MissingSources)
	}
	next := mustCall[LintOut](t, e, opLint, obj{"limit": 1, "offset": 1})
	if next.BrokenLinks[0].Target == one.BrokenLinks[0].Target || next.MissingSources[0].Source == one.MissingSources[0].Source {
		t.Errorf("offset 1 repeats the first findings")
	}
	cat := mustCall[LintOut](t, e, opLint, obj{"category": "missing_sources"})
	if cat.Findings != 3 || len(cat.BrokenLinks) != 0 || len(cat.MissingSources) != 3 || cat.Counts.BrokenLinks != 3 {
		t.Errorf("category: findings %d, %d broken listed, counts %+v", cat.Findings, len(cat.BrokenLinks), cat.Counts)
	}
	if _, err := call[LintOut](t, e, opLint, obj{"category": "typos"}); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("unknown category: %v", err)
	}
	// filing files what is listed, and says how much it left
	f := mustCall[LintOut](t, e, opLint, obj{"to_review": true, "category": "broken_links", "limit": 2})
	if f.Filed.Added != 2 || f.Filed.NotListed != 1 {
		t.Errorf("bounded filing %+v", f.Filed)
	}
	if n := mustCall[ListReviewsOut](t, e, opListReviews, obj{"status": "all"}).Total; n != 2 {
		t.Errorf("queue holds %d items, want 2", n)
	}
	f = mustCall[LintOut](t, e, opLint, obj{"to_review": true, "page": []string{"Q"}})
	if f.Filed.Added+f.Filed.Refreshed != f.Findings || f.Filed.NotListed != 0 {
		t.Errorf("page filing %+v of %d findings", f.Filed, f.Findings)
	}
	for _, it := range mustCall[ListReviewsOut](t, e, opListReviews, obj{"type": "missing-page"}).Items {
		if strings.Contains(it.Rationale, "[["+it.Title+"]]") {
			t.Errorf("item %q links to its own title: %q", it.Title, it.Rationale)
		}
	}
}

func TestLint_FailOnFindings(t *testing.T) {
	e := scopedVault(t)
	out := mustCall[LintOut](t, e, opLint, obj{"fail_on_findings": true})
	if !out.Failed || !strings.Contains(out.Failure(), "--fail-on-findings") {
		t.Errorf("failed %v, failure %q", out.Failed, out.Failure())
	}
	if mustCall[LintOut](t, e, opLint, obj{}).Failure() != "" {
		t.Error("a lint without the flag fails")
	}
	// a page without findings passes
	clean := mustCall[LintOut](t, e, opLint, obj{"fail_on_findings": true, "page": []string{"wiki/dup/r.md"}, "category": "broken_links"})
	if clean.Failed || clean.Findings != 0 {
		t.Errorf("clean scope: %+v", clean)
	}
}

// TestLint_ReadOnly: lint is a read; only to_review is refused where
// writes are (a read-only HTTP server).
func TestLint_ReadOnly(t *testing.T) {
	e := scopedVault(t)
	e.ReadOnly = true
	if out := mustCall[LintOut](t, e, opLint, obj{}); out.Findings == 0 {
		t.Error("no findings on a read-only env")
	}
	_, err := call[LintOut](t, e, opLint, obj{"to_review": true})
	if errs.CodeOf(err) != errs.Forbidden || !strings.Contains(err.Error(), "--to-review") {
		t.Errorf("to_review on a read-only env: %v", err)
	}
	if opLint.AccessText() != "read; write with --to-review" || opLint.Access != Read {
		t.Errorf("lint access %q", opLint.AccessText())
	}
}

// TestLint_MissingSourcesAgreeWithSourceList: lint's missing source files
// are exactly `source list --state missing`, link citations and a
// citation differing from the file only in case included.
func TestLint_MissingSourcesAgreeWithSourceList(t *testing.T) {
	e := scopedVault(t)
	testvault.Write(t, e.Vault, "raw/sources/Case.md", "x\n")
	testvault.Write(t, e.Vault, "wiki/case.md", "---\nsources: [raw/sources/case.md]\n---\n[[P]]\n")
	l := mustCall[LintOut](t, e, opLint, obj{"full": true})
	s := mustCall[ListSourcesOut](t, e, opListSources, obj{"state": "missing"})
	var got, want []string
	for _, m := range l.MissingSources {
		got = append(got, m.Source)
	}
	for _, m := range s.Sources {
		want = append(want, m.Path)
	}
	if l.Counts.MissingSources != s.Total || !slices.Equal(got, want) {
		t.Errorf("lint missing %v (%d), source list %v (%d)", got, l.Counts.MissingSources, want, s.Total)
	}
	if !slices.Contains(got, "raw/sources/gone-link.md") {
		t.Errorf("a link into raw/sources/ is a citation: %v", got)
	}
	c := mustCall[LintOut](t, e, opLint, obj{"full": true, "page": []string{"wiki/case.md"}})
	if c.Counts.MissingSources != 0 {
		t.Errorf("case-only mismatch reported missing: %+v", c.MissingSources)
	}
}

// TestTable_WriteWith: a read that an input turns into a write names a
// bool field of its input, and Writes follows that field.
func TestTable_WriteWith(t *testing.T) {
	for _, op := range Table() {
		if op.WriteWith == "" {
			continue
		}
		if _, ok := op.writeField(); !ok || op.Access != Read {
			t.Errorf("%s: WriteWith %q is no bool input of a read", op.Name, op.WriteWith)
		}
		if op.WritesRaw([]byte(`{}`)) || !op.WritesRaw([]byte(`{"`+op.WriteWith+`":true}`)) {
			t.Errorf("%s: Writes does not follow %s", op.Name, op.WriteWith)
		}
	}
}

// TestLinks_FrontmatterLinkInBacklinksAndGraph: a wikilink in a
// frontmatter value is a link from that page: backlinks, the
// graph, dangling targets and missing-page reviews, with its file line.
func TestLinks_FrontmatterLinkInBacklinksAndGraph(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/target.md", "---\ntitle: Target\n---\nNo links.\n")
	testvault.Write(t, v, "wiki/src.md", "---\ntitle: Src\nrelated: [\"[[Target]]\"]\nsources: [[Gone page]]\n---\nbody without links\n")
	e := newTestEnv(t, v)
	bl := mustCall[BacklinksOut](t, e, opBacklinks, obj{"title": "Target"})
	if bl.Total != 1 || bl.Backlinks[0].Title != "Src" {
		t.Errorf("backlinks of Target %+v", bl.Backlinks)
	}
	nb := mustCall[NeighborhoodOut](t, e, opNeighbors, obj{"title": "Target"})
	if len(nb.Nodes) != 1 || nb.Nodes[0].Title != "Src" || len(nb.Edges) != 1 {
		t.Errorf("graph around Target %+v", nb)
	}
	p := mustCall[GetPageOut](t, e, opGetPage, obj{"title": "Src"})
	var lines []string
	for _, l := range p.Links {
		lines = append(lines, l.Target+"@"+strconv.Itoa(l.Line))
	}
	if strings.Join(lines, ",") != "Target@3,Gone page@4" {
		t.Errorf("links of Src %v", lines)
	}
	gm := mustCall[MissingOut](t, e, opMissing, obj{})
	if gm.Total != 1 || gm.Targets[0].Target != "Gone page" {
		t.Errorf("missing %+v", gm.Targets)
	}
	// write_page reports a frontmatter link that dangles and files it
	w := mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Writer", "content": "body\n", "frontmatter": obj{"related": "[[Nope]]"}})
	if !slices.Equal(w.Dangling, []string{"Nope"}) {
		t.Errorf("write_page dangling %v", w.Dangling)
	}
	// lint --to-review files the missing page
	mustCall[LintOut](t, e, opLint, obj{"to_review": true, "category": "broken_links"})
	l := mustCall[ListReviewsOut](t, e, opListReviews, obj{"type": "missing-page"})
	if l.Total != 2 || l.Items[0].Title != "Nope" || l.Items[1].Title != "Gone page" {
		t.Errorf("missing-page items %+v", l.Items)
	}
}

// TestGraph_BacklinksAndOrphansPaged: backlinks and orphans are paged
// with totals.
func TestGraph_BacklinksAndOrphansPaged(t *testing.T) {
	e := newTestEnv(t, testvault.WithCorpus(t))
	all := mustCall[BacklinksOut](t, e, opBacklinks, obj{"title": "Internal links"})
	two := mustCall[BacklinksOut](t, e, opBacklinks, obj{"title": "Internal links", "limit": 2, "offset": 1})
	if all.Total != 13 || two.Total != 13 || len(two.Backlinks) != 2 || two.Backlinks[0] != all.Backlinks[1] {
		t.Errorf("backlinks: %d of %d; paged %d of %d", len(all.Backlinks), all.Total, len(two.Backlinks), two.Total)
	}
	o := mustCall[PagesOut](t, e, opOrphans, obj{})
	o1 := mustCall[PagesOut](t, e, opOrphans, obj{"limit": 1, "offset": 7})
	if o.Total != 8 || len(o.Pages) != 8 || o1.Total != 8 || len(o1.Pages) != 1 || o1.Pages[0] != o.Pages[7] {
		t.Errorf("orphans %+v, paged %+v", o, o1)
	}
}

// TestLint_SeveralPages: page given several times checks each page (a
// page named twice once): the counts are the sum of each page's, the
// lists hold each page's findings, pages names them all.
func TestLint_SeveralPages(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Alpha", "content": "[[Nowhere]] [[Beta]]\n"})
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Beta", "content": "[[Elsewhere]] [[Gamma]]\n"})
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Gamma", "content": "Nothing.\n"})
	one := func(title string) *LintOut { return mustCall[LintOut](t, e, opLint, obj{"page": []string{title}}) }
	a, b := one("Alpha"), one("wiki/concepts/beta.md")
	both := mustCall[LintOut](t, e, opLint, obj{"page": []string{"Alpha", "Beta", "wiki/concepts/alpha.md"}})
	if len(both.Pages) != 2 || both.Pages[0].Title != "Alpha" || both.Pages[1].Title != "Beta" || both.Page == nil || both.Page.Title != "Alpha" {
		t.Fatalf("pages %+v (page %+v)", both.Pages, both.Page)
	}
	if both.Findings != a.Findings+b.Findings || both.Counts.BrokenLinks != 2 || both.Counts.Orphans != a.Counts.Orphans+b.Counts.Orphans {
		t.Errorf("findings %d (%+v), one by one %d + %d", both.Findings, both.Counts, a.Findings, b.Findings)
	}
	if len(both.BrokenLinks) != 2 || both.BrokenLinks[0].Target != "Nowhere" || both.BrokenLinks[1].Target != "Elsewhere" ||
		len(both.BrokenLinks[1].Pages) != 1 || both.BrokenLinks[1].Pages[0].Title != "Beta" {
		t.Errorf("broken links %+v", both.BrokenLinks)
	}
	if one := mustCall[LintOut](t, e, opLint, obj{"page": []string{"Gamma"}}); one.Pages != nil || one.Page == nil {
		t.Errorf("one page: pages %+v, page %+v", one.Pages, one.Page)
	}
	many := make([]string, MaxLintPages+1)
	for i := range many {
		many[i] = "Alpha"
	}
	if _, err := call[LintOut](t, e, opLint, obj{"page": many}); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("%d pages: %v", len(many), err)
	}
}
