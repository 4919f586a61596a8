package ops

import (
	"reflect"
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
