package ops

import (
	"slices"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestSource_ListPathFilter: --path narrows source list to the sources
// whose path holds the text, or matches the glob; counts stay those of
// every source, total counts the matches, and missing (cited) sources
// match like files.
func TestSource_ListPathFilter(t *testing.T) {
	v := testvault.New(t)
	for _, p := range []string{"raw/sources/crystal-1.md", "raw/sources/lichen-952.md", "raw/sources/2024/Crystal-Deep.md", "raw/sources/2024/notes.pdf"} {
		writeAt(t, v, p, "text\n", t0)
	}
	writeAt(t, v, "wiki/a.md", "---\ntitle: A\nsources: [raw/sources/gone-crystal.md]\n---\nbody\n", t0.Add(time.Hour))
	e := openTestEnv(t, v)
	for _, tc := range []struct {
		path, state string
		want        []string
	}{
		{"crystal", "", []string{"raw/sources/2024/Crystal-Deep.md", "raw/sources/crystal-1.md", "raw/sources/gone-crystal.md"}},
		{"CRYSTAL", "new", []string{"raw/sources/2024/Crystal-Deep.md", "raw/sources/crystal-1.md"}},
		{"crystal*", "", []string{"raw/sources/2024/Crystal-Deep.md", "raw/sources/crystal-1.md"}},
		{"2024/*", "", []string{"raw/sources/2024/Crystal-Deep.md", "raw/sources/2024/notes.pdf"}},
		{"raw/sources/*.pdf", "", []string{"raw/sources/2024/notes.pdf"}},
		{"lichen-95?.md", "", []string{"raw/sources/lichen-952.md"}},
		{"[!c]rystal-1.md", "", nil},
		{"[c]*-1.md", "", []string{"raw/sources/crystal-1.md"}},
		{"nothing", "", nil},
	} {
		out := mustCall[ListSourcesOut](t, e, opListSources, obj{"path": tc.path, "state": tc.state, "limit": 100})
		var got []string
		for _, s := range out.Sources {
			got = append(got, s.Path)
		}
		if !slices.Equal(got, tc.want) || out.Total != len(tc.want) {
			t.Errorf("--path %q --state %q: %v (total %d), want %v", tc.path, tc.state, got, out.Total, tc.want)
		}
		if c := out.Counts; c.New != 4 || c.Missing != 1 {
			t.Errorf("--path %q: counts %+v, want those of every source", tc.path, c)
		}
	}
	if _, err := call[ListSourcesOut](t, e, opListSources, obj{"path": "[abc"}); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("an unclosed [: %v", err)
	}
}
