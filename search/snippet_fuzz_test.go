package search

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSnippet: whatever a page holds, its snippet is one line of valid
// UTF-8 of at most snippetMax bytes plus the two ellipses that mark cuts.
func FuzzSnippet(f *testing.F) {
	for _, s := range []string{
		"---\ntitle: X\n---\nSome *text* with a [[Link|label]] and `code`.\n",
		"```\n" + strings.Repeat("code line ", 50) + "\n```\n",
		"Use `" + strings.Repeat("x", 400) + "` here.",
		"# Heading\n\n" + strings.Repeat("word ", 200),
		"| App&nbsp;version | &amp;&#8212;&#x2014;&#0;&#xD800;&bogus;&#; |\n",
		strings.Repeat("filler ", 40) + `<div data-x="a b c d e f g h i j k l m n" class="word">word</div>`,
		"[[Page|]] [[Page\\|]] [[#Part|]] [[|]]",
	} {
		f.Add(s, "word")
	}
	f.Fuzz(func(t *testing.T, text, query string) {
		terms := map[string]float64{}
		for _, tk := range NewAnalyzer().Tokens(query) {
			terms[tk.Term] = 1
		}
		s := Snippet(text, terms)
		if !utf8.ValidString(s) && utf8.ValidString(text) {
			t.Fatalf("snippet is not valid UTF-8: %q", s)
		}
		if strings.ContainsAny(s, "\n\r") {
			t.Fatalf("snippet spans lines: %q", s)
		}
		if max := snippetMax + 2*len("…"); len(s) > max {
			t.Fatalf("snippet of %d bytes, more than %d: %q", len(s), max, s)
		}
	})
}
