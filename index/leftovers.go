package index

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"time"

	"github.com/synapse-wiki/synapse/vault"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// A write killed between creating its temporary file and renaming it
// into place (SIGKILL, a crash) leaves the temporary file behind:
// ".name.md.<random digits>.tmp" beside the page (or index.md, log.md,
// purpose.md, schema.md). A scan of the whole vault removes the ones it
// meets that are old enough never to belong to a write still under way;
// nothing else is removed (an editor's ".name.md.tmp" or swap file, a
// sync tool's temporary files do not have this form).

// leftoverAge is how old a temporary file of synapse's must be to be
// removed: far longer than any write takes.
const leftoverAge = time.Hour

var leftoverName = regexp.MustCompile(`^\..+\.[0-9]{1,20}\.tmp$`)

// isLeftover reports whether a file met by a walk is a temporary file of
// synapse's old enough to remove.
func (ix *Indexer) isLeftover(name string, mtime time.Time) bool {
	return leftoverName.MatchString(name) && ix.now().Sub(mtime) > leftoverAge
}

// removeLeftovers removes the temporary files a walk found (vault paths)
// and those of the top files (purpose.md, schema.md) beside them, through
// the vault's file layer; a file that cannot be removed stays.
func (ix *Indexer) removeLeftovers(found []string) {
	l := vaultfs.For(ix.Vault.Root)
	for _, top := range []string{vault.PurposeFile, vault.SchemaFile} {
		matches, _ := filepath.Glob(ix.Vault.Abs("." + top + ".*.tmp"))
		for _, m := range matches {
			if st, err := os.Lstat(m); err == nil && st.Mode().IsRegular() && ix.isLeftover(filepath.Base(m), st.ModTime()) {
				found = append(found, path.Base(m))
			}
		}
	}
	for _, p := range found {
		_ = l.Remove(p)
	}
}
