package desk

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A page body reads as text: links by their label, code as written,
// lists and quotes indented, words wrapped to the width.
func TestRenderMarkdown_Plain(t *testing.T) {
	st := NewStyles(io.Discard, true)
	cases := []struct{ in, want string }{
		{"See [[Core plugins|core plugin]] and [[Canvas]].", "  See core plugin and Canvas."},
		{"[[Sync#Set up]] ![[diagram.png]]", "  Sync › Set up [embedded: diagram.png]"},
		{"`[[Example]]` displays as [[Example]]", "  [[Example]] displays as Example"},
		{"```\n[[Kept]]\n```\n[[Out]]", "    [[Kept]]\n  Out"},
		{"# Title\nText with **bold** and *em*.", "  Title\n\n  Text with bold and em."},
		{"- one\n  - two\n1. three", "  • one\n    • two\n  1. three"},
		{"> [!note] Heads up\n> body", "  │ NOTE Heads up\n  │ body"},
		{"A [link](https://example.com) and ![alt](pic.png).", "  A link and [image: alt]."},
		{"line one\nline two\n\nnext", "  line one line two\n\n  next"},
		{"- [ ] todo", "  • [ ] todo"},
	}
	for _, c := range cases {
		if got := renderMarkdown(c.in, 80, st); got != c.want {
			t.Errorf("renderMarkdown(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// Long lines wrap within the width, list items with a hanging indent.
func TestRenderMarkdown_Wraps(t *testing.T) {
	st := NewStyles(io.Discard, true)
	body := "- " + strings.Repeat("word ", 30) + "\n\n" + strings.Repeat("text ", 40)
	got := renderMarkdown(body, 40, st)
	for _, l := range strings.Split(got, "\n") {
		if w := ansi.StringWidth(l); w > 40 {
			t.Errorf("line wider than 40 (%d): %q", w, l)
		}
	}
	lines := strings.Split(got, "\n")
	if !strings.HasPrefix(lines[0], "  • word") || !strings.HasPrefix(lines[1], "    word") {
		t.Errorf("hanging indent missing:\n%s", got)
	}
}

// Styled output carries escape codes but the same text.
func TestRenderMarkdown_Styled(t *testing.T) {
	st := NewStyles(io.Discard, false)
	st.Strong = st.Strong.Bold(true)
	in := "# Head\nSee [[Canvas]] and `code`."
	plain := renderMarkdown(in, 60, NewStyles(io.Discard, true))
	if got := ansi.Strip(renderMarkdown(in, 60, st)); got != plain {
		t.Errorf("styled text differs from plain:\n%q\n%q", got, plain)
	}
}
