package index

import (
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
)

// SelfDoc marks, in a previewed record of a page not yet indexed, a link
// that reaches the page itself (by its own file name, title or alias).
const SelfDoc = ^uint32(0)

// PreviewPage returns the record a page at path parsed as parsed
// (markdown.Parse of its bytes) would have, its links resolved against
// the index as it stands: what a write of those bytes would report, with
// nothing written. doc is the page's
// number when it is indexed already (0 for a new page); a link to the
// page's own names reaches it either way.
func PreviewPage(tx *store.Tx, path string, parsed *markdown.Page, doc uint32) *store.PageRec {
	rec := pageFields(path, parsed)
	rec.Doc = doc
	if rec.Reserved {
		return rec
	}
	rec.Links, rec.FileLinks = linkRecs(path, parsed.Links)
	self := map[string]bool{}
	for _, n := range append([]string{store.Stem(path), rec.Title}, rec.Aliases...) {
		self[store.Fold(n)] = true
	}
	for i := range rec.Links {
		l := &rec.Links[i]
		r := Resolve(tx, l.Key, path, l.Markdown)
		if self[store.Fold(l.Key)] && (doc == 0 || r.Doc == 0) {
			// the page's own names are not indexed yet (a new page) or
			// not yet its own (a title the write changes)
			r = Resolution{Doc: SelfDoc}
			if doc != 0 {
				r.Doc = doc
			}
		}
		l.To, l.File, l.ToReserved = r.Doc, r.File, r.Reserved
		if r.Candidates > 1 {
			l.Ambiguous = r.Candidates
		}
	}
	for i := range rec.FileLinks {
		l := &rec.FileLinks[i]
		r := ResolveFileLink(tx, *l, path)
		l.File = r.File
		if r.Candidates > 1 {
			l.Ambiguous = r.Candidates
		}
	}
	return rec
}
