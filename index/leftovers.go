package index

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/synapse-wiki/synapse/history"
	"github.com/synapse-wiki/synapse/vault"
)

// A write killed between creating its temporary file and renaming it
// into place (SIGKILL, a crash) leaves the temporary file behind:
// ".name.md.<random digits>.tmp" beside the page (or index.md, log.md),
// beside the files at the top of the vault synapse writes (purpose.md,
// schema.md, reviews.jsonl, .gitattributes), or in the page history's
// folder (.synapse/history); a move's journal or a write's note in
// .synapse/ leaves ".move-<digits>.tmp" or ".write-intent.<digits>.tmp".
// A scan of the whole vault removes the ones it meets that are old
// enough never to belong to a write still under way; nothing else is removed (an editor's ".name.md.tmp" or swap file,
// a sync tool's temporary files do not have this form, and at the top of
// the vault only the temporary files of synapse's own files are).

// leftoverAge is how old a temporary file of synapse's must be to be
// removed: far longer than any write takes.
const leftoverAge = time.Hour

var leftoverName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\..+\.[0-9]{1,20}\.tmp$`) })

// topFiles are the files at the top of the vault synapse writes
// atomically (through a temporary file beside them).
var topFiles = []string{vault.PurposeFile, vault.SchemaFile, vault.ReviewJournal, vault.GitAttributesFile}

// isLeftover reports whether a file met by a walk is a temporary file of
// synapse's old enough to remove.
func (ix *Indexer) isLeftover(name string, mtime time.Time) bool {
	return leftoverName().MatchString(name) && ix.now().Sub(mtime) > leftoverAge
}

// removeLeftovers removes the temporary files a walk found (vault paths)
// and those beside the top files, through the vault's file layer, then
// those of the page history; a file that cannot be removed stays.
func (ix *Indexer) removeLeftovers(found []string) {
	l := ix.Vault.Files()
	for _, top := range topFiles {
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
	ix.removeStateLeftovers()
}

// stateTemps are the temporary files synapse writes in .synapse/ (a
// move's journal, a write's note), by os.CreateTemp's or their own
// random digits.
var stateTemps = []string{".move-*.tmp", ".write-intent.*.tmp"}

// removeStateLeftovers removes the stale temporary files of .synapse/
// and of the page history under it. The folders are opened as roots:
// nothing is followed out of them, and one that is a symlink is left
// alone.
func (ix *Indexer) removeStateLeftovers() {
	if st, err := os.Lstat(ix.Vault.Abs(vault.StateDir)); err != nil || !st.IsDir() {
		return
	}
	r, err := os.OpenRoot(ix.Vault.Abs(vault.StateDir))
	if err != nil {
		return
	}
	defer r.Close()
	for _, pat := range stateTemps {
		matches, _ := fs.Glob(r.FS(), pat)
		for _, m := range matches {
			if st, err := r.Lstat(m); err == nil && st.Mode().IsRegular() && ix.now().Sub(st.ModTime()) > leftoverAge {
				_ = r.Remove(m)
			}
		}
	}
	ix.removeHistoryLeftovers()
}

// removeHistoryLeftovers removes the page history's leftover temporary
// files. The history's folder is opened as a root: nothing is followed
// out of it, and a .synapse or history that is a symlink is left alone.
func (ix *Indexer) removeHistoryLeftovers() {
	for _, d := range []string{vault.StateDir, history.Dir} {
		if st, err := os.Lstat(ix.Vault.Abs(d)); err != nil || !st.IsDir() {
			return
		}
	}
	r, err := os.OpenRoot(ix.Vault.Abs(history.Dir))
	if err != nil {
		return
	}
	defer r.Close()
	var stale []string
	_ = fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !leftoverName().MatchString(d.Name()) {
			return nil // a folder that cannot be read is skipped
		}
		if info, err := d.Info(); err == nil && ix.isLeftover(d.Name(), info.ModTime()) {
			stale = append(stale, p)
		}
		return nil
	})
	for _, p := range stale {
		_ = r.Remove(p)
	}
}
