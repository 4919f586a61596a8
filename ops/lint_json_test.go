package ops

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestLint_JSONListsOnlyFound: the JSON of a lint report holds the lists
// of the categories that have findings and leaves the empty ones out, so
// "findings": 1 comes with the one list that says which; counts still
// give every category.
func TestLint_JSONListsOnlyFound(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/a.md", "---\ntitle: Alpha\n---\nSee [[Beta]].\n")
	testvault.Write(t, v, "wiki/b.md", "---\ntitle: Beta\n---\nNo links here.\n")
	e := newTestEnv(t, v)
	for _, tc := range []struct {
		params obj
		lists  []string
	}{
		{obj{"page": []string{"Beta"}}, []string{"no_outlinks"}},
		{obj{"page": []string{"Alpha"}}, []string{"orphans"}},
		{obj{"page": []string{"Alpha"}, "category": "broken_links"}, nil},
		{obj{}, []string{"orphans", "no_outlinks"}},
	} {
		out := mustCall[LintOut](t, e, opLint, tc.params)
		data, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		var lists []string
		for _, c := range LintCategories {
			if _, ok := m[c]; ok {
				lists = append(lists, c)
			}
		}
		if !slices.Equal(lists, tc.lists) {
			t.Errorf("%v: lists %v, want %v (%s)", tc.params, lists, tc.lists, data)
		}
		var counts map[string]int
		if err := json.Unmarshal(m["counts"], &counts); err != nil || len(counts) != len(LintCategories) {
			t.Errorf("%v: counts %s", tc.params, m["counts"])
		}
	}
}
