package index

import (
	"fmt"

	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// The one-time re-parse after an upgrade (see ParseVersion). A store whose
// pages were parsed by another version is brought up to date by its next
// scan, which reads every page again although no file changed and
// replaces each record in place, a batch per write transaction: until a
// batch commits, its pages answer as the older parser left them, so serve
// keeps answering from the whole index meanwhile. A reindex, by
// contrast, empties the derived buckets first. The last path of each
// committed batch is kept in meta (metaReparseAfter), so an interrupted
// re-parse resumes where it stopped; the version is recorded once every
// page is done.

const metaReparseAfter = "reparse_after"

// reparseBatch bounds the files of one batch while re-parsing (tests
// lower it to see several batches).
var reparseBatch = batchFiles

// reparse is the state of a re-parse in progress during one scan.
type reparse struct {
	after string // pages at or before this path were re-parsed by an earlier scan
	last  string // the last page forced in the batches committed by this scan
}

// startReparse returns the re-parse this scan must do, or nil when the
// store's pages were parsed by this ParseVersion (a store without pages is
// marked with it). It tells ix.Notify how many pages it will read again.
func (ix *Indexer) startReparse() (*reparse, error) {
	stale, err := ix.parseStale()
	if err != nil || !stale {
		return nil, err
	}
	rp := &reparse{}
	pages := 0
	err = ix.Store.View(func(tx *store.Tx) error {
		rp.after = string(tx.Meta(metaReparseAfter))
		return tx.EachFile(vault.WikiDir+"/", func(p string, f store.FileRec) bool {
			if f.Kind == store.KindPage && p > rp.after {
				pages++
			}
			return true
		})
	})
	if err != nil {
		return nil, err
	}
	// files an older synapse tracked but did not index by name (raw
	// sources): links reach them by name from now on
	err = ix.Store.Update(func(tx *store.Tx) error {
		var perr error
		if err := tx.EachFile(rawDir+"/", func(p string, f store.FileRec) bool {
			if f.Kind != store.KindPage && !tx.HasFileName(p) {
				perr = tx.PutFileName(p)
			}
			return perr == nil
		}); err != nil {
			return err
		}
		return perr
	})
	if err != nil {
		return nil, err
	}
	if ix.Notify != nil {
		again := ""
		if rp.after != "" {
			again = ", going on from where the last attempt stopped"
		}
		ix.Notify(fmt.Sprintf("re-reading %d pages parsed by an older synapse (once%s); until each is done it answers as before", pages, again))
	}
	return rp, nil
}

// wants reports whether the page at p, unchanged on disk, must be read and
// parsed again.
func (rp *reparse) wants(p string, f store.FileRec) bool {
	return rp != nil && f.Kind == store.KindPage && p > rp.after
}

// committed records, in the batch's transaction, how far the re-parse got.
func (rp *reparse) committed(tx *store.Tx, batch []prepared) error {
	if rp == nil {
		return nil
	}
	for _, it := range batch {
		if it.d.reparse && it.d.path > rp.last {
			rp.last = it.d.path
		}
	}
	if rp.last == "" {
		return nil
	}
	return tx.SetMeta(metaReparseAfter, []byte(rp.last))
}

// finish records that every page was parsed by this ParseVersion.
func (ix *Indexer) finishReparse(rp *reparse) error {
	if rp == nil {
		return nil
	}
	return ix.Store.Update(func(tx *store.Tx) error {
		if err := tx.DeleteMeta(metaReparseAfter); err != nil {
			return err
		}
		return tx.SetMeta(metaParseVersion, []byte(ParseVersion))
	})
}
