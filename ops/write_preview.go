package ops

import (
	"strings"

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
		rec := index.PreviewPage(tx, p, r.data, doc)
		out.Path, out.Title, out.Type = p, rec.Title, rec.Type
		if out.Title == "" {
			out.Title = store.Stem(p)
		}
		linkResults(tx, rec, out, t.linked)
		out.Frontmatter = markdown.Parse(p, r.data).Frontmatter
		out.AutoResolved = wouldResolve(tx, rec)
		out.AliasShared = sharedAliases(tx, t.rec, rec)
		var err error
		out.Filed, out.NotFiled, err = wouldFile(tx, t, rec)
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

// wouldFile returns the dangling targets a write of rec would file as
// missing-page items: those the previous version did not link to and
// that have no item yet (pending or decided), at most MaxFiledPerWrite,
// and how many more there are.
func wouldFile(tx *store.Tx, t *target, rec *store.PageRec) ([]string, int, error) {
	var filed []string
	seen, more := map[string]bool{}, 0
	for _, l := range rec.Links {
		if l.To != 0 || l.File != "" || seen[l.Key] || t.linked[l.Key] {
			continue
		}
		seen[l.Key] = true
		name := strings.TrimSuffix(l.Target, ".md")
		it, err := tx.ReviewByKey(ReviewKey(TypeMissingPage, name))
		if err != nil {
			return nil, 0, err
		}
		if it != nil {
			continue
		}
		if len(filed) == MaxFiledPerWrite {
			more++
			continue
		}
		filed = append(filed, name)
	}
	return filed, more, nil
}
