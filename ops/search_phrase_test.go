package ops

import (
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestSearch_QuotedPhraseFallsBack: a quoted phrase no page holds is
// searched as its words, with a note; a phrase some page holds, or a
// quoted exclusion, is searched as written.
func TestSearch_QuotedPhraseFallsBack(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/book.md", "---\ntitle: Reading list\n---\nMelanie read the book Nothing is impossible in May.\n")
	testvault.Write(t, v, "wiki/other.md", "---\ntitle: Other\n---\nAn unrelated page about gardens.\n")
	e := newTestEnv(t, v)
	for _, c := range []struct {
		query, first string
		note         bool
	}{
		{`When did Melanie read the book "nothing is possible"?`, "Reading list", true},
		{`“nothing is possible”`, "Reading list", true},
		{`"nothing is impossible"`, "Reading list", false},
		{`gardens -"nothing is possible"`, "Other", false},
		{`"no such words anywhere"`, "", false},
	} {
		out := mustCall[SearchOut](t, e, opSearch, obj{"query": c.query})
		first := ""
		if len(out.Hits) > 0 {
			first = out.Hits[0].Title
		}
		if first != c.first || (out.Note != "") != c.note || out.Query != c.query {
			t.Errorf("%s: first hit %q, note %q, query %q", c.query, first, out.Note, out.Query)
		}
	}
}
