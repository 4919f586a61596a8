package index

import (
	"context"

	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// PageRebuilder is a PageIndexer that knows when its index was built by
// rules other than its own (another version of synapse, or a store from
// before it existed), and can then be rebuilt alone, without a full
// reindex. Scan does it: it empties the index (ResetPages, announced
// through Notify) before looking at the files, indexes the pages it finds
// changed as usual, then feeds every other page to IndexPages, read from
// its file (the "search" progress phase), and marks the index complete
// (PagesComplete). A rebuild that
// stops half way (an interrupted command) goes on at the next scan. A
// PageIndexer that wraps one says so with Unwrap() PageIndexer.
type PageRebuilder interface {
	PageIndexer
	// PagesStale returns why the index must be emptied and rebuilt, as a
	// phrase that completes "the search index …" ("" when it need not).
	PagesStale(tx *store.Tx) string
	// ResetPages empties the index and marks it incomplete.
	ResetPages(tx *store.Tx) error
	// PagesIncomplete reports whether the index is being rebuilt, and
	// whether it holds a page.
	PagesIncomplete(tx *store.Tx) (bool, func(doc uint32) bool)
	// PagesComplete marks the index complete.
	PagesComplete(tx *store.Tx) error
}

// pageRebuilder returns the PageRebuilder of ix.Pages, looking through
// wrappers around one (a PageIndexer with Unwrap() PageIndexer), or nil.
func (ix *Indexer) pageRebuilder() PageRebuilder {
	rb, _ := findPages[PageRebuilder](ix.Pages)
	return rb
}

// findPages returns the first of p and the indexers it wraps (Unwrap)
// that is a T.
func findPages[T any](p PageIndexer) (T, bool) {
	for p != nil {
		if t, ok := p.(T); ok {
			return t, true
		}
		u, ok := p.(interface{ Unwrap() PageIndexer })
		if !ok {
			break
		}
		p = u.Unwrap()
	}
	var zero T
	return zero, false
}

// resetStalePages empties the page index when it was built by other
// rules, and tells why through Notify.
func (ix *Indexer) resetStalePages() error {
	rb := ix.pageRebuilder()
	if rb == nil {
		return nil
	}
	var why string
	_ = ix.Store.View(func(tx *store.Tx) error { why = rb.PagesStale(tx); return nil })
	if why == "" {
		return nil
	}
	ix.notify("the search index " + why + "; rebuilding it")
	return ix.Store.Update(rb.ResetPages)
}

// fillPages feeds an incomplete page index every page it lacks, in
// batches read and parsed outside the write transactions, then marks it
// complete. A page whose file cannot be read now is left out: it is
// indexed again when its file changes, as any page is.
func (ix *Indexer) fillPages(ctx context.Context, rd *readers) error {
	rb := ix.pageRebuilder()
	if rb == nil {
		return nil
	}
	var todo []diskFile
	recs := map[string]*store.PageRec{}
	incomplete := false
	err := ix.Store.View(func(tx *store.Tx) error {
		var has func(uint32) bool
		if incomplete, has = rb.PagesIncomplete(tx); !incomplete {
			return nil
		}
		return tx.EachPage(func(p *store.PageRec) bool {
			if !vault.IsReserved(p.Path) && !has(p.Doc) {
				todo = append(todo, diskFile{path: p.Path, size: p.Size, mtimeNS: p.MtimeNS})
				recs[p.Path] = p
			}
			return true
		})
	})
	if err != nil || !incomplete {
		return err
	}
	ix.progress("search", 0, len(todo))
	defer ix.Store.StageSearch()()
	for i := 0; i < len(todo); {
		if err := ctx.Err(); err != nil {
			return err
		}
		j, bytes := i, int64(0)
		for j < len(todo) && j-i < batchFiles && bytes < batchBytes {
			bytes += todo[j].size
			j++
		}
		batch := ix.prepare(ctx, rd, todo[i:j], nil)
		pages := make([]IndexedPage, 0, len(batch))
		for _, it := range batch {
			if it.err == nil && it.parsed != nil {
				rec := recs[it.d.path]
				pages = append(pages, IndexedPage{Doc: rec.Doc, Rec: rec, Parsed: it.parsed})
			}
		}
		if err := ix.Store.Update(func(tx *store.Tx) error { return rb.IndexPages(tx, pages) }); err != nil {
			return err
		}
		i = j
		ix.progress("search", i, len(todo))
	}
	if err := ix.flushStage(ctx); err != nil {
		return err
	}
	return ix.Store.Update(rb.PagesComplete)
}

func (ix *Indexer) notify(msg string) {
	if ix.Notify != nil {
		ix.Notify(msg)
	}
}

// flushStage moves the search postings a bulk staged into place (see
// store.FlushSearchStage), showing progress when there is any.
func (ix *Indexer) flushStage(ctx context.Context) error {
	staged := false
	_ = ix.Store.View(func(tx *store.Tx) error { staged = tx.SearchStaged(); return nil })
	if !staged {
		return nil
	}
	return ix.Store.FlushSearchStage(ctx, func(done, total int) { ix.progress("postings", done, total) })
}
