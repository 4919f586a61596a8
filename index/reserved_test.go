package index

import (
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// TestResolve_ReservedTargets (docs/vault.md#links): a link to index, log or
// overview reaches the reserved top file, which is no graph node — the
// link is neither dangling nor an edge. A bare name prefers any other page
// of that name (file name, title or alias), so it follows such pages as
// they appear and disappear, and the reserved file itself, without the
// linking page being re-read; a markdown link's path is taken as written.
func TestResolve_ReservedTargets(t *testing.T) {
	v := testvault.New(t)
	w := func(rel, body string) { testvault.Write(t, v, rel, body) }
	w("wiki/src.md", "[[index]] [[log]] [[overview]] [the catalogue](index.md)\n")
	ix := openIndexer(t, v)
	ix.Now = func() time.Time { return time.Now().Add(time.Hour) }
	scan(t, ix)
	reads := countingReads(ix)
	check := func(step string, want map[string]string, dangling ...string) {
		t.Helper()
		for target, path := range want {
			if got, _ := resolved(t, ix, "wiki/src.md", target); got != path {
				t.Errorf("%s: [[%s]] → %q, want %q", step, target, got, path)
			}
		}
		var d []string
		_ = ix.Store.View(func(tx *store.Tx) error {
			for _, x := range tx.Dangling() {
				d = append(d, x.Key)
			}
			return nil
		})
		if len(d) != len(dangling) || (len(d) > 0 && d[0] != dangling[0]) {
			t.Errorf("%s: dangling %q, want %q", step, d, dangling)
		}
		if diffs, err := storecheck.CheckGraph(ix.Store); err != nil || len(diffs) > 0 {
			t.Errorf("%s: graph: %v %v", step, err, diffs)
		}
		for _, p := range *reads {
			if p == v.Abs("wiki/src.md") {
				t.Errorf("%s: the linking page was read again", step)
			}
		}
		*reads = nil
	}
	check("start", map[string]string{"index": "wiki/index.md", "log": "wiki/log.md", "overview": "wiki/overview.md"})
	edges := func() int {
		n := 0
		_ = ix.Store.View(func(tx *store.Tx) error {
			a, _ := tx.Adj(tx.DocByPath("wiki/src.md"))
			if a != nil {
				n = len(a.Edges)
			}
			return nil
		})
		return n
	}
	if n := edges(); n != 0 {
		t.Errorf("links to the reserved files made %d graph edges", n)
	}

	w("wiki/notes/index.md", "# an index of notes\n")
	scan(t, ix)
	// a bare name reaches the page; a path is taken as written
	check("a page named index appears", map[string]string{"index": "wiki/notes/index.md", "log": "wiki/log.md", "index.md": "wiki/index.md"})
	if n := edges(); n != 1 {
		t.Errorf("the link to notes/index.md makes %d edges, want 1", n)
	}
	rm(t, v, "wiki/notes/index.md")
	scan(t, ix)
	check("it disappears again", map[string]string{"index": "wiki/index.md"})
	if n := edges(); n != 0 {
		t.Errorf("%d edges left", n)
	}

	w("wiki/entities/Overview.md", "---\ntitle: Project overview\n---\n")
	scan(t, ix)
	check("a file named Overview in a folder", map[string]string{"overview": "wiki/entities/Overview.md"})
	rm(t, v, "wiki/entities/Overview.md")
	scan(t, ix)
	check("gone", map[string]string{"overview": "wiki/overview.md"})

	rm(t, v, "wiki/overview.md")
	scan(t, ix)
	check("the reserved overview.md is deleted", map[string]string{"overview": ""}, "overview")
	w("wiki/overview.md", "# Overview\n")
	scan(t, ix)
	check("and written again", map[string]string{"overview": "wiki/overview.md"})

	w("wiki/logbook.md", "---\naliases: [log]\n---\n")
	scan(t, ix)
	check("an alias log on a page", map[string]string{"log": "wiki/logbook.md"})
	w("wiki/logbook.md", "no alias\n")
	scan(t, ix)
	check("the alias removed", map[string]string{"log": "wiki/log.md"})
}
