package index

import (
	"context"
	"path"

	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// CheckMonitor is the mode of CheckPaths: the paths a file monitor saw
// change, instead of every tracked file.
const CheckMonitor = "monitor"

// CheckPaths is Check for the vault paths (files and folders) a file
// monitor reported changed since the index was last brought up to date
// (internal/monitor): each is compared with the store's records by stat
// alone, a folder by listing it (and the folders below it), and a path
// gone from the disk with the records below it. Nothing else is looked
// at, so it costs what changed, not what the vault holds. The remembered
// folder mtimes are left as they are (a later Check lists the folders
// that changed meanwhile).
func (ix *Indexer) CheckPaths(ctx context.Context, paths []string) (*Staleness, error) {
	return ix.check(ctx, func(c *checker, tx *store.Tx) error {
		c.out.Mode = CheckMonitor
		for _, p := range paths {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := c.path(tx, p); err != nil {
				return err
			}
		}
		c.out.stale = false // no folder was stat'ed as a whole: nothing to remember
		return nil
	})
}

// path compares one reported path with the records: a recorded file by
// size and mtime; a folder by listing it; a path gone from the disk by
// the records below it (a folder removed or moved away); a new file of a
// tracked kind is new.
func (c *checker) path(tx *store.Tx, p string) error {
	f, recorded, err := tx.File(p)
	if err != nil {
		return err
	}
	if recorded {
		c.compare([]byte(p), &f)
	}
	st, err := c.st.stat([]byte(p))
	switch {
	case err != nil:
		return tx.EachFile(p+"/", func(rp string, _ store.FileRec) bool {
			c.add(rp, &c.out.Deleted)
			return true
		})
	case st.kind == kindDir:
		if _, known := c.dirs[p]; known {
			return nil
		}
		if c.st.isLink([]byte(p)) {
			// a symlinked folder: a scan of the whole vault decides
			// whether it is walked (as Check does)
			c.add(p, &c.out.New)
			c.out.full = true
			c.dirs[p] = &dirInfo{link: true}
			return nil
		}
		return c.listNew(tx, p)
	case st.kind == kindFile && !recorded:
		if vault.IsTempName(path.Base(p)) || !(vault.IsPagePath(p) || vault.IsSourcePath(p) || IsAssetPath(p)) {
			return nil
		}
		if vault.IsPagePath(p) && st.size > MaxPageBytes {
			return nil // refused by the scan, reported by status
		}
		c.add(p, &c.out.New)
	}
	return nil
}
