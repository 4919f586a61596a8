package ops

import (
	"testing"

	"github.com/synapse-wiki/synapse/errs"
)

// TestDecode_RefusesTextJSONWouldChange: parameters holding bytes that are
// not UTF-8, or a lone surrogate escape, are invalid (JSON decoding turned
// both into U+FFFD, which was then written); proper text, surrogate pairs
// and escaped backslashes pass.
func TestDecode_RefusesTextJSONWouldChange(t *testing.T) {
	op := Lookup("page.write")
	cases := []struct {
		name, raw string
		ok        bool
	}{
		{"latin-1 byte", "{\"title\":\"Caf\xe9\",\"content\":\"x\"}", false},
		{"cut sequence", "{\"title\":\"T\",\"content\":\"\xe2\x82\"}", false},
		{"lone high surrogate", `{"title":"T","content":"a\ud800b"}`, false},
		{"lone low surrogate", `{"title":"T","content":"\udc00"}`, false},
		{"high then not low", `{"title":"T","content":"\ud800\u0041"}`, false},
		{"high at the end", `{"title":"T","content":"\ud83d"}`, false},
		{"pair", `{"title":"T","content":"\ud83d\ude00 ok"}`, true},
		{"utf-8", `{"title":"Café","content":"naïve 😀"}`, true},
		{"escaped backslash before u", `{"title":"T","content":"C:\\ud800"}`, true},
		{"plain escape", `{"title":"T","content":"\u00e9\n"}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := op.Decode([]byte(tc.raw))
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && errs.CodeOf(err) != errs.Invalid {
				t.Fatalf("got %v, want invalid", err)
			}
		})
	}
}
