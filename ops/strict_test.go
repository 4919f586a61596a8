package ops

import (
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
)

// TestDecode_StrictKeys: keys are exact and given once at every depth; the
// message names the key (and the one meant).
func TestDecode_StrictKeys(t *testing.T) {
	cases := []struct {
		op   *Op
		raw  string
		want string // "" = decodes
	}{
		{opWritePage, `{"title":"T","content":"x"}`, ""},
		{opWritePage, `{"title":"T","CONTENT":"x"}`, `unknown parameter "CONTENT": names are case-sensitive; did you mean "content"?`},
		{opWritePage, `{"Title":"T","content":"x"}`, `did you mean "title"?`},
		{opWritePage, `{"title":"T","title":"U","content":"x"}`, `parameter "title" is given twice`},
		{opWritePage, `{"title":"T","content":"x","frontmatter":{"a":{"b":1,"b":2}}}`, `key "b" is given twice in "frontmatter.a"`},
		{opWritePage, `{"title":"T","content":"x","frontmatter":{"A":1,"a":2}}`, ""},
		{opWritePage, `{"title":"T","content":"x","tags":["a","a"]}`, ""},
		{opWritePage, `{"title":"T","content":"x","frontmatter":{"l":[{"k":1,"k":1}]}}`, `key "k" is given twice in "frontmatter.l"`},
		{opReadSource, `{"Path":"x.md"}`, `did you mean "path"?`},
		{opReadSource, `{"path":"x.md","path":"y.md"}`, `parameter "path" is given twice`},
		{opReadSource, `{"nope":1}`, `unknown parameter "nope"`},
		{opReadSource, `{"path":`, `not valid JSON`},
	}
	for _, c := range cases {
		_, err := c.op.Decode([]byte(c.raw))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.raw, err)
		case c.want != "" && (errs.CodeOf(err) != errs.Invalid || !strings.Contains(errs.Message(err), c.want)):
			t.Errorf("%s: %v, want invalid %q", c.raw, err, c.want)
		}
	}
}
