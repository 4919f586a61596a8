package ops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// SearchIn is the input of search_wiki.
type SearchIn struct {
	Query string `json:"query" arg:"0" words:"true" query:"q" required:"true" desc:"What to look for: words (OR-ranked; a question works), \"a phrase\", -word to leave out, type:T and tag:X filters"`
	K     int    `json:"k,omitempty" default:"5" min:"1" max:"50" desc:"Number of hits (1..50)"`
	Mode  string `json:"mode,omitempty" enum:"lexical,semantic,hybrid" desc:"lexical (BM25F), semantic (embeddings) or hybrid (both fused); default hybrid when an embedding provider is configured and pages are embedded, else lexical"`
}

// SearchOut is the result of search_wiki: the query as received and the
// best hits first (none is not an error).
type SearchOut struct {
	Query string       `json:"query"`
	Hits  []search.Hit `json:"hits"`
	// Mode is the ranking that answered; Note says why it is not the one
	// asked for (e.g. the embedding provider is down: lexical results).
	Mode string `json:"mode"`
	Note string `json:"note,omitempty"`
	// Types is set when a type: filter names a type no page has: the
	// vault's types, closest to it first (ops/types.go).
	Types []TypeCount `json:"types,omitempty"`
}

var opSearch = register(Op{
	Name: "search", Summary: "Search the wiki: ranked pages with a snippet around the best match",
	CLI: "search", MCP: "search_wiki", REST: []Route{{Method: "GET", Path: "/search"}},
	Access: Read, Limits: "k 1..50, default 5; wiki pages only",
	Title: "Search the wiki",
	Examples: []Example{
		{`synapse search "how do I sync notes across devices"`, "a question works: words are OR-ranked"},
		{`synapse search '"daily notes" -template type:concept' -k 10`, "a phrase, an exclusion and a type filter; ten hits"},
		{`synapse search 'tag:plugins canvas' --json`, "the hits as JSON: id, title, type, path, score, snippet"},
		{`synapse search "keep my notes safe" --mode hybrid`, "words and meaning fused (needs an embedding provider; else lexical, with a note)"},
	},
	ToolHelp: search.SyntaxHelp,
	VerbHelp: "QUERY SYNTAX:\n   " + strings.ReplaceAll(strings.TrimPrefix(search.SyntaxHelp, "Query syntax:\n"), "\n", "\n   ") +
		"\n   On the command line a query that starts with \"--\", or that is one of search's own options\n" +
		"   (-k, -h, -json, -mode, -vault), goes after \"--\": synapse search -- --dry-run; -Force needs nothing",
}, searchTypes) // ops/types.go: the vault's types for an unknown type:, around searchModes (ops/embed.go: modes around searchWiki)

// maxSnippetRead bounds how much of a page is read for its snippet and
// phrase check.
const maxSnippetRead = 2 << 20

func searchWiki(ctx context.Context, e *Env, in *SearchIn) (*SearchOut, error) {
	out, err := searchText(ctx, e, in.Query, in.K)
	if err != nil || len(out.Hits) > 0 {
		return out, err
	}
	// a quoted phrase no page holds: its words, ranked, with a note (a
	// question quoting a title it half remembers still finds the page)
	if words, ok := unquotePhrases(in.Query); ok {
		alt, err := searchText(ctx, e, words, in.K)
		if err != nil || len(alt.Hits) == 0 {
			return out, err
		}
		alt.Query = in.Query
		alt.Note = fmt.Sprintf("no page holds the quoted phrase as written; these pages hold its words (the query without quotes: %s)", words)
		return alt, nil
	}
	return out, nil
}

// unquotePhrases is q with the quotes of its phrases removed, when it has
// a phrase and no quoted exclusion (-"…", which unquoted would exclude one
// word and look for the others).
func unquotePhrases(q string) (string, bool) {
	if !strings.ContainsAny(q, "\"“”") || strings.Contains(q, "-\"") || strings.Contains(q, "-“") {
		return "", false
	}
	return strings.Join(strings.Fields(strings.NewReplacer("\"", "", "“", "", "”", "").Replace(q)), " "), true
}

// searchText ranks the pages for a query, with snippets.
func searchText(ctx context.Context, e *Env, query string, k int) (*SearchOut, error) {
	hits, err := search.Search(e.Store, query, search.Options{
		K: k, Context: ctx,
		ReadFile: func(p string) ([]byte, error) { return readHead(ctx, e, p) },
	})
	if err != nil {
		return nil, err
	}
	return &SearchOut{Query: query, Hits: hits}, nil
}

// readHead reads the page file p for a snippet or a phrase check: whole
// in one read when it is at most maxSnippetRead bytes (the common case,
// a third of the system calls of reading it through an open file), else
// its first maxSnippetRead bytes.
func readHead(ctx context.Context, e *Env, p string) ([]byte, error) {
	data, _, err := e.files().ReadFile(ctx, p, maxSnippetRead)
	var r *vaultfs.Refusal
	if err == nil || !errors.As(err, &r) || r.Reason != vaultfs.TooLarge {
		return data, err
	}
	f, _, err := e.files().Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxSnippetRead))
}
