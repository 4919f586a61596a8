package cliargs

import (
	"strings"
	"testing"
)

func TestSuggest(t *testing.T) {
	for _, c := range []struct {
		word  string
		names []string
		want  string
	}{
		{"serch", []string{"search", "serve", "status"}, "search"},
		{"lst", []string{"get", "list", "write"}, "list"},
		{"limt", []string{"limit", "offset", "type"}, "limit"},
		{"frobnicate", []string{"search", "page", "graph"}, ""},
		{"rev", []string{"review", "reindex"}, "review"},
	} {
		if got := strings.Join(Suggest(c.word, c.names), ","); got != c.want {
			t.Errorf("Suggest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
}
