package ops

import (
	"slices"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestPage_ListMatch: --match keeps pages whose title, an alias or path
// holds the text (case- and Unicode-folded), or whose title or path
// matches a glob; it combines with --type, total counts the matches,
// paging comes after the filter and the order stays by title.
func TestPage_ListMatch(t *testing.T) {
	v := testvault.New(t)
	pages := map[string]string{
		"wiki/concepts/crystal-lattice.md": "---\ntitle: Crystal Lattice\ntype: concept\n---\nbody\n",
		"wiki/entities/quartz.md":          "---\ntitle: Quartz\ntype: entity\naliases: [Rock Crystal]\n---\nbody\n",
		"wiki/concepts/lichen.md":          "---\ntitle: Lichen\ntype: concept\n---\nbody\n",
		"wiki/notes/ÉCOLE.md":              "---\ntitle: École Normale\n---\nbody\n",
		"wiki/crystals/growth.md":          "---\ntitle: Growth\n---\nbody\n",
	}
	for p, text := range pages {
		writeAt(t, v, p, text, t0)
	}
	e := openTestEnv(t, v)
	for _, tc := range []struct {
		match, typ    string
		offset, limit int
		want          []string
		total         int
	}{
		{"crystal", "", 0, 100, []string{"Crystal Lattice", "Growth", "Quartz"}, 3}, // title, path, alias
		{"ROCK", "", 0, 100, []string{"Quartz"}, 1},                                 // alias only
		{"école", "", 0, 100, []string{"École Normale"}, 1},
		{"ÉCOLE NORMALE", "", 0, 100, []string{"École Normale"}, 1},
		{"concepts/", "", 0, 100, []string{"Crystal Lattice", "Lichen"}, 2}, // path
		{"crystal", "concept", 0, 100, []string{"Crystal Lattice"}, 1},
		{"crystal", "entity", 0, 100, []string{"Quartz"}, 1},
		{"crystal", "", 1, 1, []string{"Growth"}, 3},                    // paging after the filter
		{"crys*", "", 0, 100, []string{"Crystal Lattice", "Growth"}, 2}, // glob: title or path, not aliases
		{"concepts/*", "", 0, 100, []string{"Crystal Lattice", "Lichen"}, 2},
		{"wiki/*/l*.md", "", 0, 100, []string{"Lichen"}, 1},
		{"?uartz", "", 0, 100, []string{"Quartz"}, 1},
		{"[lq]*", "concept", 0, 100, []string{"Lichen"}, 1},
		{"nothing", "", 0, 100, nil, 0},
	} {
		out := mustCall[ListPagesOut](t, e, opListPages, obj{"match": tc.match, "type": tc.typ, "offset": tc.offset, "limit": tc.limit})
		var got []string
		for _, p := range out.Pages {
			got = append(got, p.Title)
		}
		if !slices.Equal(got, tc.want) || out.Total != tc.total {
			t.Errorf("--match %q --type %q --offset %d: %v (total %d), want %v (total %d)", tc.match, tc.typ, tc.offset, got, out.Total, tc.want, tc.total)
		}
		if out.All != len(pages) {
			t.Errorf("--match %q: all %d, want %d", tc.match, out.All, len(pages))
		}
	}
	if out := mustCall[ListPagesOut](t, e, opListPages, obj{"limit": 100}); out.Total != len(pages) || out.All != 0 {
		t.Errorf("no match: total %d all %d, want %d and 0", out.Total, out.All, len(pages))
	}
	if _, err := call[ListPagesOut](t, e, opListPages, obj{"match": "[abc"}); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("an unclosed [: %v", err)
	}
}
