package ops

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

func contextOf(t *testing.T, e *Env, params obj) (*ContextOut, int) {
	t.Helper()
	out := mustCall[ContextOut](t, e, opContext, params)
	data, err := MarshalJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, len(data) - 1
}

// TestContext_Page: on the Obsidian Help vault, the context of a hub page
// fits its budget at every size, gives the page (cut at a line end when it
// must be), then neighbours by graph weight with summaries and the lines
// that link them, and counts what it left out; the same call gives the
// same answer.
func TestContext_Page(t *testing.T) {
	v := testvault.WithCorpus(t)
	e, _ := openEnv(t, v)
	var total int
	_ = e.Store.View(func(tx *store.Tx) error {
		a, _ := tx.Adj(tx.DocByPath("wiki/User interface/Settings.md"))
		total = len(a.Edges)
		return nil
	})
	for _, budget := range []int{1024, 4096, 8192, 32768, 65536} {
		out, size := contextOf(t, e, obj{"title": "Settings", "budget": budget})
		if size > budget {
			t.Errorf("budget %d: the answer is %d bytes", budget, size)
		}
		if len(out.Pages) != 1 || out.Pages[0].Path != "wiki/User interface/Settings.md" || out.Pages[0].Content == "" {
			t.Fatalf("budget %d: pages %+v", budget, out.Pages)
		}
		if got := len(out.Neighbors) + out.Omitted.Neighbors; got != total {
			t.Errorf("budget %d: %d neighbours given and %d left out, of %d", budget, len(out.Neighbors), out.Omitted.Neighbors, total)
		}
		if (out.Omitted.Neighbors > 0 || out.Omitted.Bytes > 0) != strings.HasPrefix(out.Note, "left out:") {
			t.Errorf("budget %d: omitted %+v, note %q", budget, out.Omitted, out.Note)
		}
		if c := out.Pages[0]; c.Cut > 0 && !strings.HasSuffix(c.Content, "\n") {
			t.Errorf("budget %d: the page is cut mid-line: %q", budget, c.Content[max(0, len(c.Content)-40):])
		}
		if again, _ := contextOf(t, e, obj{"title": "Settings", "budget": budget}); !reflect.DeepEqual(again, out) {
			t.Errorf("budget %d: a second call differs", budget)
		}
	}
	out, _ := contextOf(t, e, obj{"title": "Settings"})
	if out.Budget != 8192 || len(out.Neighbors) < 5 {
		t.Fatalf("default budget %d, %d neighbours", out.Budget, len(out.Neighbors))
	}
	var weights []float32
	_ = e.Store.View(func(tx *store.Tx) error {
		a, _ := tx.Adj(tx.DocByPath("wiki/User interface/Settings.md"))
		w := map[string]float32{}
		for _, ed := range a.Edges {
			p, _ := tx.Page(ed.To)
			w[p.Path] = ed.Weight
		}
		for _, n := range out.Neighbors {
			weights = append(weights, w[n.Path])
		}
		return nil
	})
	for i := 1; i < len(weights); i++ {
		if weights[i] > weights[i-1] {
			t.Fatalf("neighbours not by weight: %v", weights)
		}
	}
	n := out.Neighbors[0]
	if n.Summary == "" || len(n.Links) == 0 {
		t.Errorf("first neighbour %+v", n)
	}
	for _, l := range n.Links {
		if !strings.HasPrefix(l, "in: ") && !strings.HasPrefix(l, "out: ") || !strings.Contains(l, "[[") {
			t.Errorf("link line %q", l)
		}
	}
}

// TestContext_Query: a query gives the best hits in full as far as the
// budget goes and the pages around them; title and query are one or the
// other.
func TestContext_Query(t *testing.T) {
	v := testvault.WithCorpus(t)
	e := newTestEnv(t, v)
	out, size := contextOf(t, e, obj{"query": "sync my vault between devices", "budget": 6000})
	if size > 6000 || len(out.Pages) == 0 || len(out.Pages) > contextHits {
		t.Fatalf("%d bytes, %d pages", size, len(out.Pages))
	}
	if !strings.Contains(out.Pages[0].Path, "Sync") {
		t.Errorf("first hit %s", out.Pages[0].Path)
	}
	for _, n := range out.Neighbors {
		for _, p := range out.Pages {
			if n.Path == p.Path {
				t.Errorf("a hit is also a neighbour: %s", p.Path)
			}
		}
	}
	out, _ = contextOf(t, e, obj{"query": "zzqxw qqvvbb"})
	if len(out.Pages) != 0 || out.Note != "no page matches the query" {
		t.Errorf("no hits: %+v", out)
	}
	_, err := call[ContextOut](t, e, opContext, obj{"title": "Settings", "query": "x"})
	wantCode(t, err, errs.Invalid, "one of them")
	_, err = call[ContextOut](t, e, opContext, obj{})
	wantCode(t, err, errs.Invalid)
	_, err = call[ContextOut](t, e, opContext, obj{"title": "No such page"})
	wantCode(t, err, errs.NotFound)
}

// TestContext_SmallPage: a page that fits whole with all its neighbours
// is given whole, and nothing is said left out.
func TestContext_SmallPage(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/a.md", "---\ntitle: A\nsummary: 'About A: a page'\n---\nA links [[B]].\n")
	testvault.Write(t, v, "wiki/b.md", "# B\n\nB is the second page.\nIt links [[A]].\n")
	e, _ := openEnv(t, v)
	out, _ := contextOf(t, e, obj{"title": "B", "budget": 2000})
	if out.Pages[0].Content != "# B\n\nB is the second page.\nIt links [[A]].\n" || out.Pages[0].Cut != 0 || out.Note != "" {
		t.Fatalf("%+v", out)
	}
	want := ContextNeighbor{PageRef: out.Neighbors[0].PageRef, Summary: "About A: a page", Links: []string{"out: It links [[A]].", "in: A links [[B]]."}}
	if len(out.Neighbors) != 1 || !reflect.DeepEqual(out.Neighbors[0], want) {
		t.Fatalf("neighbours %+v", out.Neighbors)
	}
	out, _ = contextOf(t, e, obj{"title": "A"})
	if out.Neighbors[0].Summary != "B is the second page. It links [[A]]." {
		t.Fatalf("first paragraph summary %q", out.Neighbors[0].Summary)
	}
}

// TestContext_QueryPassages: a query gives each hit's passages that match
// it best — not the page's opening — with the file line they start on and
// the headings above them, in the page's order; a hit found only by its
// title gets its opening; the matching passages and page text left out
// are counted and said.
func TestContext_QueryPassages(t *testing.T) {
	v := testvault.New(t)
	filler := strings.Repeat("Filler words about gardening and the weather in spring.\n", 8)
	page := "---\ntitle: Sync guide\n---\n# Sync guide\n\n" + filler + "\n## Conflicts\n\nWhen two devices edit a note, the conflict resolution keeps both versions.\n\n" +
		filler + "\nA second conflict happens rarely.\n\n" + filler
	testvault.Write(t, v, "wiki/sync-guide.md", page)
	testvault.Write(t, v, "wiki/resolution.md", "---\ntitle: Conflict resolution\n---\nOpening line of this page.\n\nSecond paragraph.\n")
	e := newTestEnv(t, v)
	out, size := contextOf(t, e, obj{"query": "conflict resolution", "budget": 1200})
	if size > 1200 {
		t.Errorf("%d bytes", size)
	}
	byTitle := map[string]ContextPage{}
	for _, p := range out.Pages {
		byTitle[p.Title] = p
		if p.Content != "" {
			t.Errorf("%s: content given whole in a query answer", p.Title)
		}
	}
	g := byTitle["Sync guide"].Passages
	if len(g) == 0 || !strings.HasPrefix(g[0].Text, "When two devices edit a note, the conflict resolution") || g[0].Heading != "Sync guide > Conflicts" {
		t.Fatalf("the guide's passages %+v", g)
	}
	lines := strings.Split(page, "\n")
	for _, p := range g {
		// filler is given only from under the matching heading
		if !strings.HasPrefix(p.Text, lines[p.Line-1]) || strings.Contains(p.Text, "Filler") && p.Heading != "Sync guide > Conflicts" {
			t.Errorf("passage at line %d: %q (the line is %q)", p.Line, p.Text, lines[p.Line-1])
		}
	}
	if !slices.ContainsFunc(g, func(p ContextPassage) bool { return p.Text == "A second conflict happens rarely." }) {
		t.Errorf("the second matching passage is not given: %+v", g)
	}
	if r := byTitle["Conflict resolution"].Passages; len(r) != 1 || r[0].Text != "Opening line of this page." || r[0].Line != 4 {
		t.Errorf("a hit by its title: %+v", r)
	}
	if out.Omitted.Bytes == 0 || !strings.Contains(out.Note, "bytes of page text") {
		t.Errorf("omitted %+v, note %q", out.Omitted, out.Note)
	}
	// a smaller budget leaves the second matching passage out, and says so
	out, size = contextOf(t, e, obj{"query": "conflict resolution", "budget": 1024})
	if size > 1024 || out.Omitted.Passages+len(out.Pages[0].Passages)+len(out.Pages[1].Passages) < 3 {
		t.Errorf("%d bytes, omitted %+v", size, out.Omitted)
	}
}

// TestContext_QueryFits: on the Obsidian Help vault, query answers fit
// their budget at every size, every hit has passages, and each passage is
// the file's text from the line it names.
func TestContext_QueryFits(t *testing.T) {
	v := testvault.WithCorpus(t)
	e := newTestEnv(t, v)
	for _, q := range []string{"sync my vault between devices", "how do I embed a file", "canvas"} {
		for _, budget := range []int{1024, 4096, 8192, 65536} {
			out, size := contextOf(t, e, obj{"query": q, "budget": budget})
			if size > budget {
				t.Errorf("%q budget %d: %d bytes", q, budget, size)
			}
			for _, p := range out.Pages {
				if len(p.Passages) == 0 && budget > 1024 {
					t.Errorf("%q budget %d: %s has no passage", q, budget, p.Title)
				}
				lines := strings.Split(readFile(t, v, p.Path), "\n")
				for _, ps := range p.Passages {
					first, _, _ := strings.Cut(ps.Text, "\n")
					if ps.Line < 1 || ps.Line > len(lines) || !strings.HasPrefix(strings.TrimRight(lines[ps.Line-1], "\r"), first) {
						t.Errorf("%q: %s line %d is not %q", q, p.Path, ps.Line, first)
					}
				}
			}
		}
	}
}
