package search

import (
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
)

// An index built by other rules than this AnalyzerVersion (or a store
// from a synapse without search) is rebuilt by itself: Indexer is an
// index.PageRebuilder, so the next scan of a process that can write the
// store — any synapse command that gets the write lock (ops.OpenEnv
// takes it for that), or serve in the background — empties the search
// index and feeds it every page again, leaving the rest of the store as
// it is. Until it is done, search answers unavailable with how far it has
// got.

// metaRebuilding (store.SearchMeta) is set while a rebuild is filling the
// index.
const metaRebuilding = "rebuilding"

var _ index.PageRebuilder = Indexer{}

// PagesStale returns why the search index must be rebuilt ("" when it
// need not): it was built by another analyzer version, or it is empty
// while the vault has pages.
func (Indexer) PagesStale(tx *store.Tx) string {
	switch v := tx.SearchVersion(); {
	case v != "" && v != AnalyzerVersion:
		return "was built by another version of synapse"
	case tx.SearchMeta(metaRebuilding) != nil:
		return "" // being filled: the scan goes on with it
	case tx.SearchStats().Docs == 0 && tx.PageCount() > 0:
		return "is empty but the vault has pages"
	}
	return ""
}

// ResetPages empties the search index and marks it as being rebuilt.
func (Indexer) ResetPages(tx *store.Tx) error {
	if err := tx.ResetSearch(); err != nil {
		return err
	}
	if err := tx.SetSearchVersion(AnalyzerVersion); err != nil {
		return err
	}
	return tx.SetSearchMeta(metaRebuilding, []byte{1})
}

// PagesIncomplete reports whether the search index is being rebuilt, and
// which docs it holds.
func (Indexer) PagesIncomplete(tx *store.Tx) (bool, func(uint32) bool) {
	return tx.SearchMeta(metaRebuilding) != nil, tx.HasSearchDoc
}

// PagesComplete marks the rebuilt index complete.
func (Indexer) PagesComplete(tx *store.Tx) error {
	return tx.SetSearchMeta(metaRebuilding, nil)
}

// NeedsRebuild reports whether the search index of the store must be
// rebuilt, or is being rebuilt: a process that can write the store should
// scan it (see Indexer).
func NeedsRebuild(tx *store.Tx) bool {
	if !tx.SearchReady() {
		// a store last written by a synapse without search: opening it
		// for writing creates the buckets
		return tx.PageCount() > 0
	}
	return Indexer{}.PagesStale(tx) != "" || tx.SearchMeta(metaRebuilding) != nil
}
