package index

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/store"
)

// A page write changes the folders it writes in (the page's folder; wiki/
// for index.md, and for log.md when it creates it): their mtimes move, so
// the next freshness check would list them (at 100k pages a type folder
// holds 15k files: 0.1–0.3 s) and rewrite the stamps in a transaction of
// its own. A FolderMark lets the write bring those stamps forward itself,
// in its own transaction, when the folder was as remembered just before
// the write (its mtime the stamp's, the stamp not racy): what changed it
// since is the write. What this cannot see: an entry another process
// creates in the same folder during the write's own few milliseconds of
// file operations (between the stat before and the rename); the folder's
// next change by anyone else lists it again, and `synapse source rescan`
// walks everything.
type FolderMark struct {
	ix   *Indexer
	dirs []markedDir
}

type markedDir struct {
	path   string // vault path of the folder ("wiki")
	before int64  // its mtime before the write (0: could not stat)
	added  int    // entries the write adds to it
}

// MarkFolders starts a FolderMark.
func (ix *Indexer) MarkFolders() *FolderMark { return &FolderMark{ix: ix} }

// Before stats folder dir (a vault path) before the write changes it.
// Call it before the first change to the folder; a second call for the
// same folder keeps the first mtime.
func (m *FolderMark) Before(dir string) {
	if m == nil {
		return
	}
	for _, d := range m.dirs {
		if d.path == dir {
			return
		}
	}
	d := markedDir{path: dir}
	if fi, err := os.Stat(m.abs(dir)); err == nil && fi.IsDir() {
		d.before = fi.ModTime().UnixNano()
	}
	m.dirs = append(m.dirs, d)
}

// Added records that the write created n entries in dir (marked before).
func (m *FolderMark) Added(dir string, n int) {
	if m == nil {
		return
	}
	for i := range m.dirs {
		if m.dirs[i].path == dir {
			m.dirs[i].added += n
			return
		}
	}
}

func (m *FolderMark) abs(dir string) string {
	return filepath.Join(m.ix.Vault.Root, filepath.FromSlash(dir))
}

// Stamp, in the write's transaction once its files are in place, brings
// forward the remembered stamps of the marked folders that only this
// write changed, and puts the pages it wrote among the recently modified
// files the folder check stats (when that list is kept). Nothing changes
// when the store keeps no stamps (no CLI check ran since the last
// reindex).
func (m *FolderMark) Stamp(tx *store.Tx, written []string) error {
	if m == nil || len(m.dirs) == 0 {
		return nil
	}
	count, snap, ok := decodeDirs(tx.Meta(metaFreshDirs))
	if !ok {
		return nil
	}
	now := m.ix.now().UnixNano()
	changed := false
	for _, d := range m.dirs {
		if d.before == 0 {
			continue
		}
		i := slices.IndexFunc(snap, func(s dirStamp) bool { return s.path == d.path })
		if i < 0 || snap[i].link || snap[i].racy || snap[i].mtimeNS != d.before {
			continue // not as remembered before the write: the next check lists it
		}
		fi, err := os.Stat(m.abs(d.path))
		if err != nil || !fi.IsDir() {
			continue
		}
		mt := fi.ModTime().UnixNano()
		at := now
		if wait := mt + fineRacyWindow - now; mt%1e9 != 0 && wait > 0 && wait <= fineRacyWindow {
			// stamped within a tick of the write's own change, the next
			// check would list the folder again (a type folder holds 14k
			// entries at 100k pages: +40 ms and 9 MB to the next write).
			// Stat'ed again once the tick has passed, a later change moves
			// the mtime; one that moved it meanwhile (another process) is
			// left to the next check, as before. Another process's entry
			// made within the same tick as the first stat keeps the mtime
			// on a kernel without multigrain timestamps (before Linux 6.13:
			// since, the first stat makes the next change take a strictly
			// later one): the same blind spot as the write's own few
			// milliseconds (above), 10 ms longer
			time.Sleep(time.Duration(wait))
			later := m.ix.now().UnixNano()
			if fi2, err := os.Stat(m.abs(d.path)); err == nil && fi2.IsDir() && fi2.ModTime().UnixNano() == mt {
				at = later
			}
		}
		snap[i].mtimeNS, snap[i].racy = mt, folderRacy(at, mt)
		count += d.added
		changed = true
	}
	if changed {
		if err := tx.SetMeta(metaFreshDirs, encodeDirs(count, snap)); err != nil {
			return err
		}
	}
	return keepHot(tx, written)
}

// keepHot adds paths to the recently modified files (metaFreshHot, when
// a reconcile made the list), dropping the least recently modified beyond
// hotFiles.
func keepHot(tx *store.Tx, paths []string) error {
	old := tx.Meta(metaFreshHot)
	if old == nil || len(paths) == 0 {
		return nil
	}
	hot := strings.Split(string(old), "\n")
	hot = slices.DeleteFunc(hot, func(p string) bool { return p == "" })
	grew := false
	for _, p := range paths {
		if !slices.Contains(hot, p) {
			hot = append(hot, p)
			grew = true
		}
	}
	if !grew {
		return nil
	}
	for len(hot) > hotFiles {
		oldest, at := int64(0), -1
		for i, p := range hot {
			if slices.Contains(paths, p) {
				continue
			}
			f, ok, err := tx.File(p)
			if err != nil {
				return err
			}
			mt := int64(0)
			if ok {
				mt = f.MtimeNS
			}
			if at < 0 || mt < oldest {
				oldest, at = mt, i
			}
		}
		if at < 0 {
			break
		}
		hot = slices.Delete(hot, at, at+1)
	}
	slices.Sort(hot)
	return tx.SetMeta(metaFreshHot, []byte(strings.Join(hot, "\n")))
}

// folderRacy reports whether a folder stat'ed at now with mtime mt could
// still gain an entry without its mtime changing. Whole-second mtimes
// (FAT, HFS+: coarse timestamps) keep store.RacyWindow; a file system with
// sub-second timestamps (ext4, XFS, Btrfs, APFS, NTFS) stamps them from a
// clock that ticks at least every jiffy on Linux (10 ms at HZ=100) and
// every 15.6 ms on Windows, so fineRacyWindow suffices. A page write
// stamps its folders after re-indexing its page, milliseconds after its
// rename.
func folderRacy(now, mt int64) bool {
	if mt%1e9 == 0 {
		return now-mt < store.RacyWindow
	}
	return now-mt < fineRacyWindow
}
