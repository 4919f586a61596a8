package ops

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestFileLinks_WriteLintAndSources (links to files that are no
// page): a bare [[x]] whose only match is a raw source reaches it — the
// write reports it not dangling and files no missing-page item, get_page
// says which file, and source list counts the page as citing it. An
// attachment link reaches its file by name. Links to files that do not
// exist are lint's broken_file_links (by page and line, scoped by --page,
// filed as confirm items, never missing-page ones); a missing raw source
// named by path is a missing source instead, once.
func TestFileLinks_WriteLintAndSources(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "raw/sources/x.md", "source x\n")
	testvault.Write(t, v, "raw/assets/diagram.png", "png")
	testvault.Write(t, v, "wiki/other.md", "---\ntitle: Other\n---\n![[lost.png]] and ![[lost.png]] again\n")
	e := newTestEnv(t, v)
	w := mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Reader", "content": "# Reader\n\nFrom [[x]], see ![[diagram.png]].\n" +
		"Also ![[lost.png]], [[../../raw/assets/gone.pdf|the pdf]], [[../../raw/sources/away.md|orig]] and [[Nowhere]].\n"})
	if !slices.Equal(w.Dangling, []string{"Nowhere"}) {
		t.Errorf("dangling %q, want only Nowhere", w.Dangling)
	}
	// the write says which link by name reached a file rather than a page
	// (an agent meant a page: no missing-page item is filed for it); the
	// attachment and the links by path meant files
	if want := []FileTarget{{Target: "x", Path: "raw/sources/x.md"}}; !slices.Equal(w.LinksToFiles, want) {
		t.Errorf("links_to_files %+v, want %+v", w.LinksToFiles, want)
	}
	items := mustCall[ListReviewsOut](t, e, opListReviews, obj{"status": "all"})
	if items.Total != 1 || items.Items[0].Title != "Nowhere" {
		t.Errorf("review items %+v, want the one missing page Nowhere", items.Items)
	}
	g := mustCall[GetPageOut](t, e, opGetPage, obj{"title": "Reader"})
	for _, l := range g.Links {
		if l.Target == "x" && (!l.Resolved || l.File != "raw/sources/x.md" || l.Path != "") {
			t.Errorf("get_page: [[x]] → %+v", l)
		}
	}
	// every link is listed, those to files that are no pages too, in line order
	var got []string
	for _, l := range g.Links {
		got = append(got, fmt.Sprintf("%s:%v:%s", l.Target, l.Resolved, l.File))
	}
	if want := []string{"x:true:raw/sources/x.md", "diagram.png:true:raw/assets/diagram.png", "lost.png:false:",
		"../../raw/assets/gone.pdf:false:", "../../raw/sources/away.md:false:", "Nowhere:false:"}; !sameSet(got, want) || !sort.SliceIsSorted(g.Links, func(i, j int) bool { return g.Links[i].Line < g.Links[j].Line }) {
		t.Errorf("get_page links %q, want %q in line order", got, want)
	}
	src := mustCall[ListSourcesOut](t, e, opListSources, obj{})
	states := map[string]string{}
	for _, s := range src.Sources {
		states[s.Path] = s.State
	}
	if states["raw/sources/x.md"] != StateIngested || states["raw/sources/away.md"] != StateMissing {
		t.Errorf("source states %v: x.md cited by [[x]] (ingested), away.md cited by path and gone (missing)", states)
	}

	l := mustCall[LintOut](t, e, opLint, obj{"full": true})
	if l.Counts.BrokenLinks != 1 || l.Counts.MissingSources != 1 || l.Counts.BrokenFileLinks != 2 {
		t.Fatalf("counts %+v: want 1 broken link (Nowhere), 1 missing source (away.md), 2 broken file links", l.Counts)
	}
	lost, pdf := l.BrokenFileLinks[0], l.BrokenFileLinks[1]
	if lost.Target != "lost.png" || lost.Links != 3 || lost.Path != "" || len(lost.Pages) != 2 ||
		lost.Pages[0].Title != "Other" || !slices.Equal(lost.Pages[0].Lines, []int{4, 4}) ||
		lost.Pages[1].Title != "Reader" || len(lost.Pages[1].Lines) != 1 {
		t.Errorf("lost.png: %+v", lost)
	}
	if pdf.Path != "raw/assets/gone.pdf" || pdf.Links != 1 {
		t.Errorf("gone.pdf: %+v", pdf)
	}
	scoped := mustCall[LintOut](t, e, opLint, obj{"full": true, "page": []string{"Other"}})
	if scoped.Counts.BrokenFileLinks != 1 || scoped.BrokenFileLinks[0].Links != 2 || len(scoped.BrokenFileLinks[0].Pages) != 1 {
		t.Errorf("lint --page Other: %+v %+v", scoped.Counts, scoped.BrokenFileLinks)
	}
	one := mustCall[LintOut](t, e, opLint, obj{"category": "broken_file_links", "limit": 1, "offset": 1})
	if one.Findings != 2 || len(one.BrokenFileLinks) != 1 || one.BrokenFileLinks[0].Target != pdf.Target || len(one.BrokenLinks) != 0 {
		t.Errorf("category, paged: %+v", one)
	}

	mustCall[LintOut](t, e, opLint, obj{"to_review": true})
	var confirms []string
	for _, it := range mustCall[ListReviewsOut](t, e, opListReviews, obj{"limit": 100}).Items {
		if it.Type == TypeMissingPage && it.Title != "Nowhere" {
			t.Errorf("a missing-page item for %q", it.Title)
		}
		if it.Type == TypeConfirm {
			confirms = append(confirms, it.Title)
		}
	}
	slices.Sort(confirms)
	if want := []string{"Missing file: lost.png", "Missing file: raw/assets/gone.pdf", "Missing source: raw/sources/away.md"}; !slices.Equal(confirms, want) {
		t.Errorf("confirm items %q, want %q", confirms, want)
	}

	// the attachment appears: the finding goes, without the pages changing
	testvault.Write(t, v, "wiki/lost.png", "png")
	if l := mustCall[LintOut](t, e, opLint, obj{}); l.Counts.BrokenFileLinks != 1 {
		t.Errorf("after lost.png appeared: %+v", l.BrokenFileLinks)
	}
	// the source goes: [[x]] dangles, and is a broken link now
	if err := os.Remove(v.Abs("raw/sources/x.md")); err != nil {
		t.Fatal(err)
	}
	l = mustCall[LintOut](t, e, opLint, obj{"full": true})
	var broken []string
	for _, b := range l.BrokenLinks {
		broken = append(broken, b.Target)
	}
	slices.Sort(broken)
	if strings.Join(broken, ",") != "Nowhere,x" {
		t.Errorf("broken links %q after raw/sources/x.md went", broken)
	}
	// filed as a missing page; once the source is back, lint resolves it
	mustCall[LintOut](t, e, opLint, obj{"to_review": true})
	testvault.Write(t, v, "raw/sources/x.md", "source x\n")
	if f := mustCall[LintOut](t, e, opLint, obj{"to_review": true}).Filed; f.AutoResolved != 1 {
		t.Errorf("filed %+v, want the missing page x auto-resolved", f)
	}
	for _, it := range mustCall[ListReviewsOut](t, e, opListReviews, obj{"status": "auto_resolved"}).Items {
		if it.Title == "x" && it.Resolution != "a file answers to the name: raw/sources/x.md" {
			t.Errorf("x resolved as %q", it.Resolution)
		}
	}
	// a page named x takes the link over: a later write lists no file
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "x", "content": "the page x\n"})
	if w := mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Reader 2", "content": "See [[x]].\n"}); len(w.LinksToFiles) != 0 {
		t.Errorf("links_to_files %+v once a page x exists", w.LinksToFiles)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
