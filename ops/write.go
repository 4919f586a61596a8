package ops

import (
	"context"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/store"
)

// WritePageIn is the input of write_page, the one validated write path
// (SPEC §4.2). MCP callers give type, tags, sources and aliases inside
// frontmatter; the CLI gives them as flags.
type WritePageIn struct {
	Title       string         `json:"title" arg:"0" required:"true" desc:"Page title (≤ 200 characters); an existing page with this title is updated in place"`
	Content     string         `json:"content" cli:"stdin" desc:"Markdown body (≤ 1 MiB, UTF-8), without frontmatter"`
	Frontmatter map[string]any `json:"frontmatter,omitempty" cli:"-" desc:"Frontmatter keys: type, aliases, tags, sources and any others (kept in order)"`
	Type        string         `json:"type,omitempty" mcp:"-" desc:"Page type (entity, concept, source, synthesis, comparison, query, note; default concept)"`
	Tags        []string       `json:"tags,omitempty" flag:"tag" mcp:"-" desc:"Tag"`
	Sources     []string       `json:"sources,omitempty" flag:"source" mcp:"-" desc:"Source under raw/sources/ this page draws on"`
	Aliases     []string       `json:"aliases,omitempty" flag:"alias" mcp:"-" desc:"Alias"`
	IfMatch     string         `json:"if_match,omitempty" desc:"sha256 of the current file (from get_page); the write is refused as a conflict if the page changed"`
}

// WritePageOut is the result of write_page: what a caller needs to verify
// the write.
type WritePageOut struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Type     string   `json:"type"`
	Path     string   `json:"path"`
	SHA256   string   `json:"sha256"`
	Created  bool     `json:"created"`  // true when the page is new
	Dangling []string `json:"dangling"` // link targets in the content that match no page
}

// WritePage validates and writes a page atomically, re-indexes it, logs it,
// files missing-page reviews for its dangling links and regenerates
// wiki/index.md. Every writer (CLI, MCP, REST, a review's create action)
// calls it. (Implemented by the write-path issue.)
func WritePage(ctx context.Context, e *Env, in *WritePageIn) (*WritePageOut, error) {
	return nil, errs.E(errs.Unavailable, "write_page is not implemented yet")
}

// reviewHooks connect the write path to the review queue without an import
// cycle of intent: the review queue sets them in an init function.
var reviewHooks struct {
	// OnPageWritten runs in a write transaction after a page was written
	// and re-indexed: it files an idempotent missing-page item (origin
	// "rule") for each dangling target and marks pending missing-page items
	// that the page satisfies (by title or alias) auto_resolved.
	OnPageWritten func(tx *store.Tx, page *store.PageRec, dangling []string, now time.Time) error
}
