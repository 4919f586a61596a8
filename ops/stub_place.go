package ops

import (
	"path"
	"strings"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// Where a review's create action puts a stub page: beside the pages that
// link to it. A hand-organised vault keeps related pages together
// (wiki/en/finance/…), and a stub in the type's folder (wiki/concepts/)
// would sit apart from everything that needs it. The folder of source
// summaries is the exception: a summary links to the concepts and
// entities it mentions, and a stub placed beside it would take its
// folder's type (source) and claim to summarize a source.

// stubPath is the path of a stub page for title: in the folder holding most
// of the pages whose links to title match no page, source summaries'
// folder aside (ties: the shorter
// folder, then the first in order), named by the title's slug (numbered
// past paths taken). "" when no page links to it: the write then places
// the page by its type.
func stubPath(tx *store.Tx, title string) string {
	counts := map[string]int{}
	for _, bl := range tx.DanglingFor(index.LinkKey(title)) {
		if p, err := tx.Page(bl.Src); err == nil && p != nil && !p.Reserved && !inSourcesFolder(p.Path) {
			counts[path.Dir(p.Path)]++
		}
	}
	best, n := "", 0
	for dir, k := range counts {
		if k > n || k == n && (len(dir) < len(best) || len(dir) == len(best) && dir < best) {
			best, n = dir, k
		}
	}
	if best == "" {
		return ""
	}
	slug := Slug(title)
	for i := 1; i <= 1000; i++ {
		if p := numberedPath(best, slug, i); !vault.IsReserved(p) && tx.DocByPath(p) == 0 {
			return p
		}
	}
	return ""
}

// inSourcesFolder reports whether a page's file is in the folder of the
// source type (wiki/sources/ or below it).
func inSourcesFolder(p string) bool {
	return strings.HasPrefix(p, vault.WikiDir+"/"+vault.TypeFolder("source")+"/")
}
