package ops

import (
	"reflect"
	"slices"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// twinVault holds en/ and ru/ twins with the same file names, a page
// named kan in two folders of different depth, and pages linking to them
// from inside and outside the twins' folders.
func twinVault(t *testing.T) *Env {
	t.Helper()
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/en/transformer.md", "---\ntitle: Transformer\n---\nEnglish.\n")
	testvault.Write(t, v, "wiki/ru/transformer.md", "---\ntitle: Трансформер\n---\nRussian.\n")
	// in ru/: the folder decides, nothing is guessed
	testvault.Write(t, v, "wiki/ru/attention.md", "---\ntitle: Внимание\n---\nSee [[transformer]].\n")
	// in ru/sub/: neither twin is in its folder, name order picks en/
	testvault.Write(t, v, "wiki/ru/sub/heads.md", "---\ntitle: Головы\n---\n[[transformer]] and [[transformer|again]], [[kan]].\n")
	testvault.Write(t, v, "wiki/ru/sub/more.md", "---\ntitle: Ещё\n---\n[[transformer]].\n")
	testvault.Write(t, v, "wiki/a/kan.md", "---\ntitle: kan\n---\nShort.\n")
	testvault.Write(t, v, "wiki/deep/er/kan.md", "---\ntitle: kan\n---\nLong.\n")
	// linked by path: never ambiguous
	testvault.Write(t, v, "wiki/by-path.md", "---\ntitle: By path\n---\n[[ru/transformer]] [[deep/er/kan]] [[Внимание]] [[Головы]] [[Ещё]].\n")
	return newTestEnv(t, v)
}

// TestLint_AmbiguousLinks: a link matching several pages where the
// linking page's folder does not decide is a finding, grouped by target
// and page chosen, with the rule that chose it and the other pages; the
// links the folder decides, or that name a path, are not.
func TestLint_AmbiguousLinks(t *testing.T) {
	e := twinVault(t)
	for _, c := range []struct {
		name   string
		params obj
		full   bool
	}{{"summary", obj{}, false}, {"full", obj{"full": true}, true}, {"category", obj{"category": LintAmbiguousLinks}, true}} {
		t.Run(c.name, func(t *testing.T) {
			out := mustCall[LintOut](t, e, opLint, c.params)
			if out.Counts.AmbiguousLinks != 2 || len(out.AmbiguousLinks) != 2 || out.Full != c.full {
				t.Fatalf("counts %+v, full %v, listed %+v", out.Counts, out.Full, out.AmbiguousLinks)
			}
			tr, kan := out.AmbiguousLinks[0], out.AmbiguousLinks[1]
			if tr.Target != "transformer" || tr.Chosen != "wiki/en/transformer.md" || tr.ChosenBy != "name order" ||
				!reflect.DeepEqual(tr.Others, []string{"wiki/ru/transformer.md"}) || tr.Links != 3 || tr.PagesTotal != 2 {
				t.Errorf("transformer: %+v", tr)
			}
			if kan.Target != "kan" || kan.Chosen != "wiki/a/kan.md" || kan.ChosenBy != "shortest path" ||
				!reflect.DeepEqual(kan.Others, []string{"wiki/deep/er/kan.md"}) || kan.Links != 1 || kan.PagesTotal != 1 {
				t.Errorf("kan: %+v", kan)
			}
			var linking []string
			for _, p := range tr.Pages {
				linking = append(linking, p.Path)
			}
			if want := []string{"wiki/ru/sub/heads.md", "wiki/ru/sub/more.md"}; c.full && !slices.Equal(linking, want) {
				t.Errorf("linking pages %v, want %v", linking, want)
			} else if !c.full && len(linking) != 0 {
				t.Errorf("a summary lists the linking pages: %v", linking)
			}
		})
	}
	scoped := mustCall[LintOut](t, e, opLint, obj{"page": []string{"wiki/ru/attention.md"}})
	if scoped.Counts.AmbiguousLinks != 0 {
		t.Errorf("a link its folder decides is reported: %+v", scoped.AmbiguousLinks)
	}
	scoped = mustCall[LintOut](t, e, opLint, obj{"page": []string{"wiki/ru/sub/more.md"}, "full": true})
	if scoped.Counts.AmbiguousLinks != 1 || scoped.AmbiguousLinks[0].Links != 1 || scoped.AmbiguousLinks[0].PagesTotal != 1 {
		t.Errorf("--page ru/sub/more: %+v", scoped.AmbiguousLinks)
	}

	filed := mustCall[LintOut](t, e, opLint, obj{"category": LintAmbiguousLinks, "to_review": true}).Filed
	if filed.Added != 2 {
		t.Fatalf("filed %+v", filed)
	}
	items := mustCall[ListReviewsOut](t, e, opListReviews, obj{}).Items
	var titles []string
	for _, it := range items {
		titles = append(titles, it.Title)
	}
	if !slices.Contains(titles, "Ambiguous link: transformer → wiki/en/transformer.md") {
		t.Errorf("review items %v", titles)
	}
}

// TestGraph_AmbiguousTitle: every graph verb given a title that several
// pages answer to says which others it matched, as get_page does.
func TestGraph_AmbiguousTitle(t *testing.T) {
	e := twinVault(t)
	want := []string{"wiki/deep/er/kan.md"}
	paths := func(refs []PageRef) []string {
		var out []string
		for _, r := range refs {
			out = append(out, r.Path)
		}
		return out
	}
	n := mustCall[NeighborhoodOut](t, e, opNeighbors, obj{"title": "kan"})
	b := mustCall[BacklinksOut](t, e, opBacklinks, obj{"title": "kan"})
	m := mustCall[MissingOut](t, e, opMissing, obj{"page": "kan"})
	g := mustCall[GetPageOut](t, e, opGetPage, obj{"title": "kan"})
	for name, got := range map[string][]PageRef{"neighbors": n.AlsoMatched, "backlinks": b.AlsoMatched, "missing": m.AlsoMatched, "page get": g.AlsoMatched} {
		if !slices.Equal(paths(got), want) {
			t.Errorf("%s kan: also matched %v, want %v", name, paths(got), want)
		}
	}
	if n.Center.Path != "wiki/a/kan.md" || b.Page.Path != "wiki/a/kan.md" {
		t.Errorf("kan: centre %s, backlinks of %s", n.Center.Path, b.Page.Path)
	}
	one := mustCall[BacklinksOut](t, e, opBacklinks, obj{"title": "deep/er/kan"})
	if len(one.AlsoMatched) != 0 || one.Page.Path != "wiki/deep/er/kan.md" {
		t.Errorf("by path: %+v", one)
	}
}

// TestGraph_NeighborsLimit: a neighbourhood lists --limit nodes (25 by
// default) and total counts them all.
func TestGraph_NeighborsLimit(t *testing.T) {
	v := testvault.New(t)
	body := ""
	for i := range 30 {
		name := "spoke-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		testvault.Write(t, v, "wiki/"+name+".md", "---\ntitle: "+name+"\n---\nBack to [[hub]].\n")
		body += "[[" + name + "]] "
	}
	testvault.Write(t, v, "wiki/hub.md", "---\ntitle: hub\n---\n"+body+"\n")
	e := newTestEnv(t, v)
	for _, c := range []struct {
		params obj
		nodes  int
		trunc  bool
	}{{obj{"title": "hub"}, 25, true}, {obj{"title": "hub", "limit": 5}, 5, true}, {obj{"title": "hub", "limit": 100}, 30, false}} {
		out := mustCall[NeighborhoodOut](t, e, opNeighbors, c.params)
		if len(out.Nodes) != c.nodes || out.Total != 30 || out.Truncated != c.trunc {
			t.Errorf("%v: %d nodes of %d, truncated %v", c.params, len(out.Nodes), out.Total, out.Truncated)
		}
	}
}

// TestLint_CategoriesWhole: every declared category has a count and a
// list in the report, under its own name.
func TestLint_CategoriesWhole(t *testing.T) {
	out := &LintOut{}
	out.emptyLists()
	for _, c := range LintCategoryList() {
		if l := out.listOf(c.Name); !l.IsValid() || l.Kind() != reflect.Slice {
			t.Errorf("%s: no list in LintOut", c.Name)
		}
		if _, ok := fieldByJSON(reflect.ValueOf(LintCounts{}), c.Name); !ok {
			t.Errorf("%s: no count in LintCounts", c.Name)
		}
	}
	if n := reflect.TypeOf(LintCounts{}).NumField(); n != len(LintCategories) {
		t.Errorf("LintCounts has %d fields for %d categories", n, len(LintCategories))
	}
}
