package ops

import (
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// preview answers a dry run: what the write would do with the page it
// rendered, from the index as it stands, with nothing written, logged
// or filed. The links are resolved as the page's would be once written;
// filed lists the dangling targets the write would add to the queue.
func (w *pageWrite) preview(t *target, r *rendered) (*WritePageOut, error) {
	out := &WritePageOut{DryRun: true, SHA256: r.sha256, Created: t.rec == nil, Unchanged: r.unchanged, Dangling: []string{}, DanglingAdded: []string{}}
	err := w.e.Store.View(func(tx *store.Tx) error {
		p, doc := t.path, uint32(0)
		if t.rec != nil {
			doc, out.ID = t.rec.Doc, t.rec.ID
		} else {
			p = w.newPagePath(tx, t, r.m.typ, r.m.title)
		}
		parsed := markdown.Parse(p, r.data)
		rec := index.PreviewPage(tx, p, parsed, doc)
		out.Path, out.Title, out.Type = p, rec.Title, rec.Type
		if out.Title == "" {
			out.Title = store.Stem(p)
		}
		linkResults(tx, rec, out, t.linked)
		out.Frontmatter = parsed.Frontmatter
		out.AutoResolved = wouldResolve(tx, rec)
		out.AliasShared = sharedAliases(tx, t.rec, rec)
		var err error
		out.Filed, out.NotFiled, err = wouldFile(tx, out.DanglingAdded)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// newPagePath is the path a new page would be created at: the caller's,
// else the first free numbered name in its type's folder (create).
func (w *pageWrite) newPagePath(tx *store.Tx, t *target, typ, title string) string {
	if w.c.path != "" {
		return w.c.path
	}
	dir, slug := newPageDir(tx, typ), Slug(title)
	for n := 1; ; n++ {
		p := numberedPath(dir, slug, n)
		if !vault.IsReserved(p) && (tx.DocByPath(p) == 0 || p == t.stale || n == 1000) {
			return p
		}
	}
}

// wouldResolve returns the pending missing-page items a write of rec
// would close because the page answers their target by one of its names
// (onPageWritten), at most MaxUnlinkedPerWrite.
func wouldResolve(tx *store.Tx, rec *store.PageRec) []string {
	var ids []string
	for _, name := range pageNames(rec) {
		r, err := tx.ReviewByKey(ReviewKey(TypeMissingPage, name))
		if err != nil || r == nil || r.Terminal() || len(ids) == MaxUnlinkedPerWrite {
			continue
		}
		ids = append(ids, r.ID)
	}
	return ids
}

// wouldFile returns the dangling targets a write would file as
// missing-page items, as fileMissing hands them on: of the targets it
// adds (added), the first MaxFiledPerWrite, less those that have an item
// already (pending or decided); and how many it adds past the cap.
func wouldFile(tx *store.Tx, added []string) ([]string, int, error) {
	added, more := capFiled(added)
	var filed []string
	for _, name := range added {
		it, err := tx.ReviewByKey(ReviewKey(TypeMissingPage, name))
		if err != nil {
			return nil, 0, err
		}
		if it == nil {
			filed = append(filed, name)
		}
	}
	return filed, more, nil
}
