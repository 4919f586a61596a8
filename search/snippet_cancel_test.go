package search

import (
	"context"
	"strings"
	"testing"
)

// A page analyzed a piece at a time finds a match far into it, at the
// right place; a cancelled context stops the looking (the snippet is
// then the start of the body).
func TestSnippetContext_Pieces(t *testing.T) {
	var b strings.Builder
	for b.Len() < 5*snippetPiece {
		b.WriteString("filler words on a line of their own\n")
	}
	b.WriteString("the zebu grazes here\n")
	for b.Len() < 8*snippetPiece {
		b.WriteString("more filler after it\n")
	}
	text := b.String()
	terms := map[string]float64{"zebu": 1}
	if got := Snippet(text, terms); !strings.HasPrefix(got, "…the zebu grazes here") {
		t.Errorf("snippet of a match past the first pieces: %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := SnippetContext(ctx, text, terms); !strings.HasPrefix(got, "filler words") {
		t.Errorf("cancelled: %q, want the start of the body", got)
	}
	// one line longer than a piece is cut at a space, never inside a word
	long := strings.Repeat("lorem ipsum ", snippetPiece/6) + "zebu end"
	if got := Snippet(long, terms); !strings.Contains(got, "zebu end") {
		t.Errorf("a match on one long line: %q", got)
	}
}
