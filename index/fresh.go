package index

// The freshness check of a CLI verb that opens the store itself (no server
// watching the vault): before it answers, the files are compared with the
// store's records by stat alone — no file is read, nothing is written —
// and what changed by hand (an edit in Obsidian, a copy-in, git pull) is
// then indexed by the incremental scanner (Reconcile) when the write lock
// can be had.
//
// Two checks, by what they cost:
//
//   - every tracked file's size and mtime against its record (mode
//     "files"): finds new, deleted, renamed and edited files; one statx
//     per file, without allocating;
//   - each folder's mtime against the one remembered after the last
//     reconcile (mode "folders", the tripwire): a folder's mtime changes
//     when an entry is created, deleted or renamed in it, never when a
//     file in it is edited in place. A changed folder is listed and its
//     files compared one by one.
//
// The folder tripwire always runs; the file check too, up to
// CheckOptions.MaxFiles tracked files.

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// metaFreshDirs is the store's meta key for the folder mtimes of the last
// reconcile (encodeDirs).
const metaFreshDirs = "fresh_dirs"

// DefaultCheckFiles is the default bound of the file-by-file check.
const DefaultCheckFiles = 20000

// Check modes.
const (
	CheckFiles   = "files"   // every tracked file stat'ed, and the folders
	CheckFolders = "folders" // folder mtimes only (and the files of changed folders)
)

// racyHashMax bounds the racy records (hashed within RacyWindow of their
// mtime, so size and mtime cannot vouch for them) that a check verifies by
// hashing their content; beyond it, or above racyHashBytes, such a
// record is rescanned by the reconcile (it is not counted as changed: a
// file hashed within RacyWindow of its last write has rarely changed
// since).
const (
	racyHashMax   = 64
	racyHashBytes = 1 << 20
	// index.md is rewritten by every page write that changes the
	// catalogue, so the next check finds it racy; at 100k pages it is
	// ~5 MB: hashing it (a few ms) costs less than rescanning it in a
	// reconcile's transaction
	racyHashReserved = 16 << 20
)

// reconcileAll is the number of changed files above which a reconcile
// scans the whole vault instead of the changed paths.
const reconcileAll = 1000

// CheckOptions tune Check.
type CheckOptions struct {
	// MaxFiles bounds the file-by-file check: every tracked file is
	// stat'ed when the store tracks at most this many files; above, only
	// folder mtimes are compared. 0 means DefaultCheckFiles; a negative
	// value, folders only.
	MaxFiles int
}

// Staleness is what Check found: the files that differ from the store's
// records since the index was last brought up to date.
type Staleness struct {
	// Mode is CheckFiles or CheckFolders.
	Mode string `json:"mode"`
	// Files counts the tracked files compared by size and mtime; Folders
	// the folders compared by mtime.
	Files   int `json:"files"`
	Folders int `json:"folders"`
	// New, Changed and Deleted count what differs.
	New     int `json:"new"`
	Changed int `json:"changed"`
	Deleted int `json:"deleted"`
	// DurationUS is how long the check took, in microseconds.
	DurationUS int64 `json:"duration_us"`

	// Paths are the vault paths that differ, sorted.
	Paths []string `json:"-"`
	// Deferred lists new or changed sources over 16 MiB: not hashed
	// before a verb answers (`synapse source rescan` indexes them).
	Deferred []string `json:"deferred,omitempty"`

	settle []string   // racy records that still hash the same
	unsure []string   // racy records not verified (too many, or too big)
	dirs   []dirStamp // the folder mtimes to remember after a reconcile
	count  int        // tracked files after a reconcile (approximately)
	stale  bool       // the remembered folder mtimes are out of date
	full   bool       // a new symlinked folder: the reconcile scans everything
}

// Count is the number of files that differ.
func (s *Staleness) Count() int { return s.New + s.Changed + s.Deleted }

// NeedsWrite reports whether a reconcile has anything to do: files to
// index, or folder mtimes to remember (without which the next check lists
// those folders again).
func (s *Staleness) NeedsWrite() bool { return s.Count() > 0 || s.stale || len(s.unsure) > 0 }

type dirStamp struct {
	path    string
	mtimeNS int64
	racy    bool // stat'ed within the racy window of its mtime (folderRacy): listed again next time
	link    bool // a symlinked folder met in a listing: known, never entered
}

type fileKind uint8

const (
	kindFile fileKind = iota + 1
	kindDir
	kindOther
)

type fileStat struct {
	size, mtimeNS int64
	kind          fileKind
}

type dirInfo struct {
	snap     int64 // remembered mtime (0: none)
	snapRacy bool
	cur      int64
	gone     bool
	link     bool // see dirStamp
}

type checker struct {
	ix    *Indexer
	st    *statter
	now   int64
	dirs  map[string]*dirInfo
	files bool // mode files
	racy  []string
	out   *Staleness
	seen  map[string]*int // paths already counted, with their counter
}

// Check compares the files with the store's records without reading a
// file or writing anything (module doc above). It works on a store opened
// read-only.
func (ix *Indexer) Check(ctx context.Context, o CheckOptions) (*Staleness, error) {
	return ix.check(ctx, func(c *checker, tx *store.Tx) error { return c.run(ctx, tx, o) })
}

// check runs compare with a new checker inside a read transaction, then
// verifies the racy records it met and leaves big sources to a rescan
// (Check, CheckPaths).
func (ix *Indexer) check(ctx context.Context, compare func(c *checker, tx *store.Tx) error) (*Staleness, error) {
	start := time.Now()
	st, err := openStatter(ix.Vault.Root)
	if err != nil {
		return nil, err
	}
	defer st.close()
	c := &checker{ix: ix, st: st, now: start.UnixNano(), dirs: map[string]*dirInfo{},
		out: &Staleness{}, seen: map[string]*int{}}
	if err := ix.Store.View(func(tx *store.Tx) error { return compare(c, tx) }); err != nil {
		return nil, err
	}
	if err := c.verifyRacy(ctx); err != nil {
		return nil, err
	}
	c.deferBig()
	sort.Strings(c.out.Paths)
	c.out.DurationUS = time.Since(start).Microseconds()
	return c.out, nil
}

func (c *checker) run(ctx context.Context, tx *store.Tx, o CheckOptions) error {
	count, snap, ok := decodeDirs(tx.Meta(metaFreshDirs))
	for _, d := range snap {
		c.dirs[d.path] = &dirInfo{snap: d.mtimeNS, snapRacy: d.racy, link: d.link}
	}
	for _, r := range []string{"", vault.WikiDir, rawDir} {
		c.addDir(r)
	}
	if !ok {
		count = tx.PageCount()
	}
	limit := o.MaxFiles
	if limit == 0 {
		limit = DefaultCheckFiles
	}
	c.files = limit > 0 && count <= limit
	c.out.Mode = CheckFolders
	if c.files {
		c.out.Mode = CheckFiles
	}
	if c.files || !ok {
		records, err := c.eachRecord(ctx, tx)
		if err != nil {
			return err
		}
		count = records
	}
	if !c.files {
		if err := c.hotFiles(tx); err != nil {
			return err
		}
	}
	changed := c.changedDirs()
	for _, p := range changed {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.list(tx, p); err != nil {
			return err
		}
	}
	c.out.count = count + c.out.New - c.out.Deleted
	for p, d := range c.dirs {
		if d.link || (!d.gone && d.cur != 0) {
			c.out.dirs = append(c.out.dirs, dirStamp{path: p, mtimeNS: d.cur, racy: c.isRacy(d.cur), link: d.link})
		}
	}
	slices.SortFunc(c.out.dirs, func(a, b dirStamp) int { return strings.Compare(a.path, b.path) })
	return nil
}

// eachRecord walks the store's file records: it adds their folders (all
// of them the first time) and, in mode files, compares every record with
// its file. It returns how many records there are.
func (c *checker) eachRecord(ctx context.Context, tx *store.Tx) (int, error) {
	records := 0
	var lastDir []byte
	var pool *statPool
	if c.files {
		pool = c.startPool()
	}
	err := tx.EachFileRaw(func(p []byte, f *store.FileRec) bool {
		records++
		if d := dirBytes(p); string(d) != string(lastDir) {
			lastDir = append(lastDir[:0], d...)
			if _, ok := c.dirs[string(d)]; !ok {
				c.addDir(string(d))
			}
		}
		if pool != nil {
			pool.add(p, f)
		}
		return records%4096 != 0 || ctx.Err() == nil
	})
	if pool != nil {
		pool.finish(c)
	}
	if err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return records, nil
}

// hotFiles compares the files edited most lately, one by one (mode
// folders).
func (c *checker) hotFiles(tx *store.Tx) error {
	hot := tx.Meta(metaFreshHot)
	if hot == nil {
		c.out.stale = true // a reconcile remembers them
	}
	for _, p := range strings.Split(string(hot), "\n") {
		if p == "" {
			continue
		}
		if f, ok, err := tx.File(p); err != nil {
			return err
		} else if ok {
			c.compare([]byte(p), &f)
		}
	}
	return nil
}

// changedDirs stats every folder and returns the changed ones, to list:
// each is stat'ed before it is listed, so an entry created meanwhile
// changes the mtime remembered after the reconcile (the next check sees
// it).
func (c *checker) changedDirs() []string {
	names := make([]string, 0, len(c.dirs))
	for p := range c.dirs {
		names = append(names, p)
	}
	sort.Strings(names)
	var changed []string
	for _, p := range names {
		d := c.dirs[p]
		if d.link {
			continue
		}
		st, err := c.st.stat([]byte(p))
		if err != nil || st.kind != kindDir {
			d.gone = true
			if d.snap != 0 {
				c.out.stale = true
			}
			changed = append(changed, p)
			continue
		}
		d.cur = st.mtimeNS
		c.out.Folders++
		if d.snap == 0 || d.snapRacy || d.cur != d.snap {
			changed = append(changed, p)
			if d.snap == 0 || d.cur != d.snap || !c.isRacy(d.cur) {
				c.out.stale = true
			}
		}
	}
	return changed
}

// isRacy reports whether a folder stat'ed now with this mtime could still
// gain an entry without its mtime changing (timestamp granularity).
func (c *checker) isRacy(mtimeNS int64) bool { return folderRacy(c.now, mtimeNS) }

// addDir adds a folder and its parents up to the vault root.
func (c *checker) addDir(p string) {
	for {
		if _, ok := c.dirs[p]; ok {
			return
		}
		c.dirs[p] = &dirInfo{}
		if p == "" {
			return
		}
		p = parentDir(p)
	}
}

func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

func dirBytes(p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return nil
}

func (c *checker) add(p string, kind *int) {
	if c.seen[p] != nil {
		return
	}
	c.seen[p] = kind
	*kind++
	c.out.Paths = append(c.out.Paths, p)
}

// compare stats one tracked file against its record.
func (c *checker) compare(p []byte, f *store.FileRec) {
	c.out.Files++
	switch differs(c.st, p, f.Size, f.MtimeNS, f.Racy() && f.Kind != store.KindAsset) {
	case diffDeleted:
		c.add(string(p), &c.out.Deleted)
	case diffChanged:
		c.add(string(p), &c.out.Changed)
	case diffRacy:
		c.racy = append(c.racy, string(p))
	}
}

type diff uint8

const (
	diffNone diff = iota
	diffDeleted
	diffChanged
	diffRacy // same size and mtime, but the record cannot vouch for it
)

// differs stats the file p against a record's size and mtime.
func differs(st *statter, p []byte, size, mtimeNS int64, racy bool) diff {
	s, err := st.statFile(p)
	switch {
	case err != nil && (errors.Is(err, fs.ErrNotExist) || isNotDir(err)):
		return diffDeleted
	case err == nil && s.kind == kindOther:
		// a file swapped for a named pipe, socket or device: the scan
		// would refuse it, and a verb that opens it refuses it naming it
		return diffNone
	case err != nil, s.kind != kindFile, s.size != size, s.mtimeNS != mtimeNS:
		if st.isLink(p) {
			// a file swapped for a symlink (perhaps out of the vault),
			// or one whose target changed: left to the verb that opens
			// it (it refuses one that leads out, naming it) and to the
			// next rescan
			return diffNone
		}
		return diffChanged
	case racy:
		return diffRacy
	}
	return diffNone
}

// statPool stats the records of mode files on one worker per CPU (at
// most maxStatWorkers), fed in batches copied out of the store's memory
// map into reused buffers: the records are walked by one cursor, the
// statx calls — nearly all of the check's time — run in parallel.
type statPool struct {
	jobs    chan *statJob
	free    chan *statJob
	cur     *statJob
	done    chan []finding
	workers int
	files   int
}

const (
	maxStatWorkers = 8
	statBatch      = 512
)

type statJob struct {
	arena []byte
	recs  []statRec
}

type statRec struct {
	end           int
	size, mtimeNS int64
	racy          bool
}

type finding struct {
	path string
	kind diff
}

func (c *checker) startPool() *statPool {
	w := min(max(runtime.GOMAXPROCS(0), 1), maxStatWorkers)
	sp := &statPool{jobs: make(chan *statJob, w), free: make(chan *statJob, 2*w+1), done: make(chan []finding, w), workers: w}
	for range 2*w + 1 {
		sp.free <- &statJob{arena: make([]byte, 0, statBatch*48), recs: make([]statRec, 0, statBatch)}
	}
	for range w {
		st := c.st.clone()
		go func() {
			var found []finding
			defer func() { st.closeDir(); sp.done <- found }()
			for j := range sp.jobs {
				start := 0
				for _, r := range j.recs {
					p := j.arena[start:r.end]
					start = r.end
					if d := differs(st, p, r.size, r.mtimeNS, r.racy); d != diffNone {
						found = append(found, finding{string(p), d})
					}
				}
				j.arena, j.recs = j.arena[:0], j.recs[:0]
				sp.free <- j
			}
		}()
	}
	return sp
}

func (sp *statPool) add(p []byte, f *store.FileRec) {
	if sp.cur == nil {
		sp.cur = <-sp.free
	}
	j := sp.cur
	j.arena = append(j.arena, p...)
	j.recs = append(j.recs, statRec{end: len(j.arena), size: f.Size, mtimeNS: f.MtimeNS, racy: f.Racy() && f.Kind != store.KindAsset})
	sp.files++
	if len(j.recs) == statBatch {
		sp.jobs <- j
		sp.cur = nil
	}
}

// finish waits for the workers and adds what they found.
func (sp *statPool) finish(c *checker) {
	if sp.cur != nil && len(sp.cur.recs) > 0 {
		sp.jobs <- sp.cur
	}
	close(sp.jobs)
	var all []finding
	for range sp.workers {
		all = append(all, <-sp.done...)
	}
	slices.SortFunc(all, func(a, b finding) int { return strings.Compare(a.path, b.path) })
	c.out.Files += sp.files
	for _, f := range all {
		switch f.kind {
		case diffDeleted:
			c.add(f.path, &c.out.Deleted)
		case diffChanged:
			c.add(f.path, &c.out.Changed)
		case diffRacy:
			c.racy = append(c.racy, f.path)
		}
	}
}

// list compares a changed folder's entries with the records: a tracked
// file without one is new; in mode folders each file with a record is
// compared, and a record without its file is deleted. A sub-folder not
// known yet is new: stat'ed, then listed.
func (c *checker) list(tx *store.Tx, dir string) error {
	ents, err := os.ReadDir(filepath.Join(c.ix.Vault.Root, filepath.FromSlash(dir)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !isNotDir(err) {
		// unreadable: the scan refuses it; nothing to compare here
		return nil
	}
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue // hidden folders are not walked; hidden files not tracked
		}
		p := name
		if dir != "" {
			p = dir + "/" + name
		}
		typ := e.Type()
		isDir, regular, link := typ.IsDir(), typ.IsRegular(), typ&fs.ModeSymlink != 0
		if link {
			st, err := c.st.stat([]byte(p))
			if err != nil {
				continue // dangling or out of reach: the scan skips it
			}
			isDir, regular = st.kind == kindDir, st.kind == kindFile
		}
		if isDir {
			if dir == "" && name != vault.WikiDir && name != rawDir {
				continue // not a tracked tree
			}
			if _, known := c.dirs[p]; !known {
				if link {
					// not entered here (it may loop or lead out): a scan
					// of the whole vault decides, which walks a linked
					// folder only if what it leads to was not walked
					c.add(p, &c.out.New)
					c.out.full = true
					c.dirs[p] = &dirInfo{link: true}
					continue
				}
				if err := c.listNew(tx, p); err != nil {
					return err
				}
			}
			continue
		}
		if !regular || vault.IsTempName(name) || !(vault.IsPagePath(p) || vault.IsSourcePath(p) || IsAssetPath(p)) {
			continue
		}
		f, ok, err := tx.File(p)
		if err != nil {
			return err
		}
		if !ok {
			// new (a page over MaxPageBytes too: the scan refuses it by
			// name, and status lists it)
			c.add(p, &c.out.New)
		} else if !c.files {
			c.compare([]byte(p), &f)
		}
	}
	if c.files {
		return nil // every record was stat'ed already
	}
	return tx.EachFileIn(dir, func(p string, f store.FileRec) bool {
		name := path.Base(p)
		if _, found := slices.BinarySearchFunc(ents, name, func(e os.DirEntry, n string) int {
			return strings.Compare(e.Name(), n)
		}); !found {
			c.add(p, &c.out.Deleted)
		}
		return true
	})
}

// listNew lists a folder the records and the remembered mtimes do not
// know (copied in, or created since): stat'ed first, as every folder.
func (c *checker) listNew(tx *store.Tx, p string) error {
	st, err := c.st.stat([]byte(p))
	if err != nil || st.kind != kindDir {
		return nil
	}
	c.dirs[p] = &dirInfo{cur: st.mtimeNS}
	c.out.Folders++
	c.out.stale = true
	return c.list(tx, p)
}

// verifyRacy hashes the few racy records whose size and mtime match: one
// whose bytes still hash the same is unchanged (a reconcile settles it),
// another changed.
func (c *checker) verifyRacy(ctx context.Context) error {
	if len(c.racy) == 0 {
		return nil
	}
	if len(c.racy) > racyHashMax {
		c.out.unsure = c.racy
		return nil
	}
	rd, err := c.ix.openReaders()
	if err != nil {
		return err
	}
	defer rd.close()
	return c.ix.Store.View(func(tx *store.Tx) error {
		for _, p := range c.racy {
			f, ok, err := tx.File(p)
			if err != nil {
				return err
			}
			if !ok || f.Size > racyHashBytes && !(vault.IsReserved(p) && f.Size <= racyHashReserved) {
				c.out.unsure = append(c.out.unsure, p)
				continue
			}
			if trustWritten(tx, p, c.ix.Vault.Abs(p), &f) {
				continue // as the write that recorded it left it (WrittenIdent)
			}
			_, sum, _, err := c.ix.read(ctx, rd, p, vault.IsPagePath(p))
			if err != nil || sum != f.SHA256 {
				c.add(p, &c.out.Changed)
				continue
			}
			c.out.settle = append(c.out.settle, p)
		}
		return nil
	})
}

// deferBig leaves new and changed sources over bigSource bytes to `source
// rescan` (or serve): hashing gigabytes before a read answers is no
// freshness check. They are listed in Deferred, not counted as changes.
func (c *checker) deferBig() {
	keep := c.out.Paths[:0]
	for _, p := range c.out.Paths {
		if kind := c.seen[p]; kind != &c.out.Deleted && vault.IsSourcePath(p) {
			if st, err := c.st.stat([]byte(p)); err == nil && st.size > bigSource {
				*kind--
				c.out.Deferred = append(c.out.Deferred, p)
				continue
			}
		}
		keep = append(keep, p)
	}
	c.out.Paths = keep
}

// bigSource is the size above which a changed source is not hashed by a
// CLI verb's reconcile (deferBig).
const bigSource = 16 << 20

// Reconcile indexes what Check found (the changed paths, or the whole
// vault when there are many) and remembers the folder mtimes the check
// saw. It needs the store open read-write.
func (ix *Indexer) Reconcile(ctx context.Context, s *Staleness) (*Report, error) {
	var rep *Report
	paths := append(append(slices.Clone(s.Paths), s.settle...), s.unsure...)
	if s.Count() > 0 || len(s.unsure) > 0 {
		opts := ScanOptions{Paths: paths}
		if len(paths) > reconcileAll || s.full {
			opts.Paths = nil
		}
		var err error
		if rep, err = ix.Scan(ctx, opts); err != nil {
			return nil, err
		}
	}
	if !s.stale {
		// the folders remembered still hold, and the recently modified
		// files too (a page write keeps them: FolderMark): a commit and,
		// at 100k files, a walk of every record saved
		return rep, nil
	}
	err := ix.Store.Update(func(tx *store.Tx) error {
		if err := tx.SetMeta(metaFreshDirs, encodeDirs(s.count, s.dirs)); err != nil {
			return err
		}
		// kept in both modes: a write verb checks in mode folders
		// whatever the vault's size (ops.checkFiles)
		var hot []string
		var err error
		stamp := hotStamp(tx)
		if old := tx.Meta(metaFreshHot); old != nil && string(tx.Meta(metaFreshHotScan)) == stamp {
			// no full scan since the list was made by a walk: only the
			// paths just indexed (and the page writes, which keep the
			// list) can have moved into it, so it is brought forward
			// instead of walking every record (14 ms at 100k pages)
			hot, err = updateHot(tx, old, paths)
		} else {
			hot, err = recentFiles(tx, hotFiles)
		}
		if err != nil {
			return err
		}
		if err := tx.SetMeta(metaFreshHotScan, []byte(stamp)); err != nil {
			return err
		}
		return tx.SetMeta(metaFreshHot, []byte(strings.Join(hot, "\n")))
	})
	return rep, err
}

// metaFreshHotScan is the store's meta key for the full scan (hotStamp)
// the recently modified files were last found by a walk of every record
// after: a full scan (reindex, source rescan, serve) indexes files
// without keeping the list, so the next reconcile walks again.
const metaFreshHotScan = "fresh_hot_scan"

// hotStamp names the last completed full scan.
func hotStamp(tx *store.Tx) string {
	t, ok := tx.LastScan()
	if !ok {
		return "none"
	}
	return strconv.FormatInt(t.UnixNano(), 10)
}

// updateHot returns the hotFiles most recently modified among the list
// old and paths (which a reconcile just indexed), the paths without a
// record left out: what recentFiles finds when no other record changed
// since old was made.
func updateHot(tx *store.Tx, old []byte, paths []string) ([]string, error) {
	type rec struct {
		path    string
		mtimeNS int64
	}
	var all []rec
	seen := map[string]bool{}
	for _, p := range append(strings.Split(string(old), "\n"), paths...) {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		f, ok, err := tx.File(p)
		if err != nil {
			return nil, err
		}
		if ok {
			all = append(all, rec{p, f.MtimeNS})
		}
	}
	if len(all) > hotFiles {
		slices.SortStableFunc(all, func(a, b rec) int { return cmp.Compare(b.mtimeNS, a.mtimeNS) })
		all = all[:hotFiles]
	}
	out := make([]string, len(all))
	for i, r := range all {
		out[i] = r.path
	}
	sort.Strings(out)
	return out, nil
}

// metaFreshHot is the store's meta key for the files mode folders stats
// one by one besides the folders: the hotFiles most recently modified
// when the last reconcile ran, one path a line (an edit in place is most
// often to a page edited lately).
const metaFreshHot = "fresh_hot"

// hotFiles is how many recently modified files mode folders checks.
const hotFiles = 256

// recentFiles returns the paths of the n records with the latest mtimes.
func recentFiles(tx *store.Tx, n int) ([]string, error) {
	type rec struct {
		path    string
		mtimeNS int64
	}
	top := make([]rec, 0, n)
	low := 0 // index of the oldest in top, once full
	err := tx.EachFileRaw(func(p []byte, f *store.FileRec) bool {
		switch {
		case len(top) < n:
			top = append(top, rec{string(p), f.MtimeNS})
			if len(top) == n {
				low = slices.IndexFunc(top, func(r rec) bool {
					return r.mtimeNS == slices.MinFunc(top, func(a, b rec) int { return cmp.Compare(a.mtimeNS, b.mtimeNS) }).mtimeNS
				})
			}
		case f.MtimeNS > top[low].mtimeNS:
			top[low] = rec{string(p), f.MtimeNS}
			for i := range top {
				if top[i].mtimeNS < top[low].mtimeNS {
					low = i
				}
			}
		}
		return true
	})
	out := make([]string, len(top))
	for i, r := range top {
		out[i] = r.path
	}
	sort.Strings(out)
	return out, err
}

// encodeDirs encodes the remembered folder mtimes: a version byte, the
// tracked file count, then per folder its path, mtime and flags (1 racy,
// 2 link).
func encodeDirs(count int, dirs []dirStamp) []byte {
	b := []byte{1}
	b = binary.AppendUvarint(b, uint64(max(count, 0)))
	for _, d := range dirs {
		b = binary.AppendUvarint(b, uint64(len(d.path)))
		b = append(b, d.path...)
		b = binary.AppendVarint(b, d.mtimeNS)
		var flags byte
		if d.racy {
			flags |= 1
		}
		if d.link {
			flags |= 2
		}
		b = append(b, flags)
	}
	return b
}

func decodeDirs(b []byte) (count int, dirs []dirStamp, ok bool) {
	if len(b) < 1 || b[0] != 1 {
		return 0, nil, false
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, nil, false
	}
	b = b[k:]
	for len(b) > 0 {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return 0, nil, false
		}
		p := string(b[k : k+int(l)])
		b = b[k+int(l):]
		m, k2 := binary.Varint(b)
		if k2 <= 0 || len(b) < k2+1 {
			return 0, nil, false
		}
		dirs = append(dirs, dirStamp{path: p, mtimeNS: m, racy: b[k2]&1 != 0, link: b[k2]&2 != 0})
		b = b[k2+1:]
	}
	return int(n), dirs, true
}

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
