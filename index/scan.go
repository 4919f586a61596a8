package index

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// Batch bounds: a scan commits after this many changed files or bytes, so
// no write transaction grows without bound and none is held while files
// are read.
const (
	batchFiles = 1000
	batchBytes = 16 << 20
	drainBatch = 5000
)

// Progress reports scan progress: phase is "scan", "index", "links" or
// "graph"; total is 0 when unknown.
type Progress func(phase string, done, total int)

// Indexer keeps a store in step with a vault.
type Indexer struct {
	Vault    *vault.Vault
	Store    *store.Store
	Pages    PageIndexer // the search index; may be nil
	Progress Progress    // may be nil
	Now      func() time.Time

	// readFile is os.ReadFile; tests count calls through it.
	readFile func(string) ([]byte, error)

	// mu serializes scans: two overlapping scans could otherwise commit
	// an older read of a file after a newer one.
	mu sync.Mutex

	// act is the progress of the scan running now (nil when none)
	act atomic.Pointer[Activity]
}

// Activity is the progress of a running scan (status shows it).
type Activity struct {
	// Phase is "scan" (walking the folders), "index" (reading and
	// indexing changed files), "links" (resolving links) or "graph"
	// (weighing the graph).
	Phase string `json:"phase"`
	// Done and Total count files in the index phase and pages in the
	// links and graph phases; Total is 0 when not known yet.
	Done  int `json:"done"`
	Total int `json:"total"`
	// Rebuild says that the scan builds the index from scratch (a
	// reindex, the first index of a vault, or the completion of one that
	// was interrupted) rather than bringing it up to date.
	Rebuild bool      `json:"rebuild"`
	Since   time.Time `json:"since"`
}

// Activity returns the progress of the scan running now, if any.
func (ix *Indexer) Activity() (Activity, bool) {
	if a := ix.act.Load(); a != nil {
		return *a, true
	}
	return Activity{}, false
}

// PhaseUnit names what a phase's counts count.
func PhaseUnit(phase string) string {
	if phase == "links" || phase == "graph" {
		return "pages"
	}
	return "files"
}

// Report is the result of a scan (SPEC §6 trigger_source_rescan).
type Report struct {
	Scanned      int      `json:"scanned"`
	New          []string `json:"new"`
	Changed      []string `json:"changed"`
	Deleted      []string `json:"deleted"`
	Unchanged    int      `json:"unchanged"`
	NewCount     int      `json:"new_count"`
	ChangedCount int      `json:"changed_count"`
	DeletedCount int      `json:"deleted_count"`
	Truncated    bool     `json:"truncated"`
	DurationMS   int64    `json:"duration_ms"`
}

// ReportCap bounds each path list of a Report.
const ReportCap = 100

func (r *Report) add(list *[]string, count *int, p string) {
	*count++
	if len(*list) < ReportCap {
		*list = append(*list, p)
	} else {
		r.Truncated = true
	}
}

// ScanOptions select what a scan looks at.
type ScanOptions struct {
	// Full drops every derived bucket first (synapse reindex).
	Full bool
	// Paths limits the scan to these vault-relative paths (files or
	// folders); empty means the whole of wiki/ and raw/sources/.
	Paths []string
}

type diskFile struct {
	path    string
	size    int64
	mtimeNS int64
}

func (ix *Indexer) now() time.Time {
	if ix.Now != nil {
		return ix.Now()
	}
	return time.Now()
}

func (ix *Indexer) progress(phase string, done, total int) {
	if a := ix.act.Load(); a != nil {
		ix.act.Store(&Activity{Phase: phase, Done: done, Total: total, Rebuild: a.Rebuild, Since: a.Since})
	}
	if ix.Progress != nil {
		ix.Progress(phase, done, total)
	}
}

// Scan brings the store in step with the files (SPEC §3): unchanged files
// (same size and mtime) are not read; changed ones are read once, hashed,
// and re-indexed only if the hash changed; vanished ones are removed.
func (ix *Indexer) Scan(ctx context.Context, opts ScanOptions) (*Report, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	start := time.Now()
	rep := &Report{New: []string{}, Changed: []string{}, Deleted: []string{}}
	if !opts.Full {
		// records parsed by another version of the parser are re-parsed
		// in full, once (see ParseVersion)
		if stale, err := ix.parseStale(); err != nil {
			return nil, err
		} else if stale {
			opts.Full, opts.Paths = true, nil
		}
	}
	ix.act.Store(&Activity{Phase: "scan", Since: start})
	defer ix.act.Store(nil)
	bulk, fresh, err := ix.begin(opts)
	if err != nil {
		return nil, err
	}
	if bulk {
		ix.act.Store(&Activity{Phase: "scan", Rebuild: true, Since: start})
	}
	disk, roots, err := ix.walk(ctx, opts.Paths)
	if err != nil {
		return nil, err
	}
	rep.Scanned = len(disk)
	// compare with the store (one read transaction, no file contents)
	var todo []diskFile
	var gone []string
	known := map[string]store.FileRec{}
	err = ix.Store.View(func(tx *store.Tx) error {
		// disk is sorted by path, as are the records under each root: one
		// ordered pass over those records finds the gone, the unchanged
		// and the changed without a lookup per file; known holds only the
		// records of files that will be read
		checked := make([]bool, len(disk))
		find := func(p string) int {
			i := sort.Search(len(disk), func(i int) bool { return disk[i].path >= p })
			if i < len(disk) && disk[i].path == p {
				return i
			}
			return -1
		}
		compare := func(i int, f store.FileRec) {
			checked[i] = true
			d := disk[i]
			if f.Size == d.size && f.MtimeNS == d.mtimeNS && !f.Racy() {
				rep.Unchanged++
				return
			}
			known[d.path] = f
		}
		visit := func(p string, f store.FileRec) {
			if i := find(p); i < 0 {
				gone = append(gone, p)
			} else if !checked[i] {
				compare(i, f)
			}
		}
		for _, root := range roots {
			// the root itself when it was a file, and everything under it
			if f, ok, err := tx.File(root); err != nil {
				return err
			} else if ok {
				visit(root, f)
			}
			if err := tx.EachFile(root+"/", func(p string, f store.FileRec) bool {
				visit(p, f)
				return true
			}); err != nil {
				return err
			}
		}
		for i, d := range disk {
			if !checked[i] {
				// no record under a root as spelled: look it up
				f, ok, err := tx.File(d.path)
				if err != nil {
					return err
				}
				if !ok {
					todo = append(todo, d) // new
					continue
				}
				compare(i, f)
			}
			if _, ok := known[d.path]; ok {
				todo = append(todo, d) // size or mtime changed
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(gone)
	gone = dedupeSorted(gone)
	total := len(todo) + len(gone)
	done := 0
	// deletions first, in one bounded pass
	for i := 0; i < len(gone); i += batchFiles {
		chunk := gone[i:min(i+batchFiles, len(gone))]
		err := ix.Store.Update(func(tx *store.Tx) error {
			u := newUpdater(tx)
			for _, p := range chunk {
				if err := u.removePage(p); err != nil {
					return err
				}
				rep.add(&rep.Deleted, &rep.DeletedCount, p)
			}
			return u.finish(ix.Pages)
		})
		if err != nil {
			return nil, err
		}
		done += len(chunk)
		ix.progress("index", done, total)
	}
	// changed and new files, in batches: read and parse outside any
	// transaction, then apply in one write transaction per batch
	// the next batch is read and parsed while the current one is applied
	type preparedBatch struct {
		items []prepared
		n     int
	}
	stop := make(chan struct{})
	defer close(stop)
	batches := make(chan preparedBatch, 1)
	go func() {
		defer close(batches)
		for i := 0; i < len(todo); {
			j, bytes := i, int64(0)
			for j < len(todo) && j-i < batchFiles && bytes < batchBytes {
				bytes += todo[j].size
				j++
			}
			select {
			case batches <- preparedBatch{ix.prepare(todo[i:j], known), j - i}:
			case <-stop:
				return
			}
			i = j
		}
	}()
	for pb := range batches {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch := pb.items
		err := ix.Store.Update(func(tx *store.Tx) error {
			u := newUpdater(tx)
			u.bulk = bulk
			u.track = !bulk && len(batch) <= smallSettle
			for _, it := range batch {
				if it.err != nil {
					continue // vanished or unreadable since the walk: next scan sees it
				}
				old, had := known[it.d.path]
				switch {
				case had && old.SHA256 == it.file.SHA256 && old.Kind == it.file.Kind:
					// touched, not changed: remember the new size and mtime
					it.file.FirstSeen, it.file.LastChanged, it.file.Doc = old.FirstSeen, old.LastChanged, old.Doc
					if err := tx.PutFile(it.d.path, it.file); err != nil {
						return err
					}
					rep.Unchanged++
					continue
				case had:
					it.file.FirstSeen = old.FirstSeen
					// the bytes changed after the previous read, whatever
					// the mtime says (cp -p and rsync -a keep old mtimes)
					it.file.LastChanged = max(it.file.LastChanged, old.HashedNS)
					rep.add(&rep.Changed, &rep.ChangedCount, it.d.path)
				default:
					rep.add(&rep.New, &rep.NewCount, it.d.path)
				}
				if it.parsed != nil {
					if err := u.applyPage(pageChange{path: it.d.path, file: it.file, parsed: it.parsed}); err != nil {
						return err
					}
				} else if err := tx.PutFile(it.d.path, it.file); err != nil {
					return err
				}
			}
			if !bulk {
				// a small change settles in the same transaction: one
				// commit for a page write or an editor's save
				if err := u.settleSmall(); err != nil {
					return err
				}
			}
			return u.finish(ix.Pages)
		})
		if err != nil {
			return nil, err
		}
		done += pb.n
		if bulk {
			ix.Store.ReleaseMapped()
		}
		ix.progress("index", done, total)
	}
	if err := ix.settle(ctx, fresh); err != nil {
		return nil, err
	}
	if len(opts.Paths) == 0 {
		if err := ix.Store.Update(func(tx *store.Tx) error { return tx.SetLastScan(ix.now()) }); err != nil {
			return nil, err
		}
	}
	rep.DurationMS = time.Since(start).Milliseconds()
	return rep, nil
}

// begin prepares the store for a scan and says how to apply it. A full
// scan (reindex) drops the derived data first. The first scan of a store
// (one that never completed a scan: a new vault, a first index under
// serve, or a reindex that was interrupted) goes the way of a reindex:
// pages are applied with their links pending, resolved in one drain once
// every name is known, and the graph is built once from the page records
// (metaGraphStale) — the same pipeline and batches as `synapse reindex`,
// instead of resolving each page's links and re-weighing the graph as
// pages arrive. bulk reports that mode; fresh that the store held no pages
// when the scan began (a reindex), so no stored page needs its links
// resolved again.
func (ix *Indexer) begin(opts ScanOptions) (bulk, fresh bool, err error) {
	if opts.Full {
		err := ix.Store.Update(func(tx *store.Tx) error {
			if err := tx.ResetDerived(); err != nil {
				return err
			}
			if err := tx.SetMeta(metaParseVersion, []byte(ParseVersion)); err != nil {
				return err
			}
			return tx.SetMeta(metaGraphStale, []byte{1})
		})
		return true, true, err
	}
	var first bool
	err = ix.Store.View(func(tx *store.Tx) error {
		_, scanned := tx.LastScan()
		first = !scanned && len(opts.Paths) == 0
		bulk = tx.Meta(metaGraphStale) != nil
		fresh = tx.PageCount() == 0 && !tx.HasFiles()
		return nil
	})
	if err != nil || !first || bulk {
		return bulk, bulk && fresh, err
	}
	err = ix.Store.Update(func(tx *store.Tx) error { return tx.SetMeta(metaGraphStale, []byte{1}) })
	return true, fresh, err
}

// Settle drains the pending link resolutions and graph weight updates in
// bounded transactions. Scans call it; it also finishes the work of a scan
// that was interrupted.
func (ix *Indexer) Settle(ctx context.Context) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.settle(ctx, false)
}

// A store whose graph awaits its rebuild from the page records (a full
// scan that did not finish) had no edges to find the pages linking to a
// page that changed its names since; unless this is that full scan itself
// (where every page is new and pending), every page's links are resolved
// again before the rebuild.
func (ix *Indexer) settle(ctx context.Context, full bool) error {
	stale := false
	_ = ix.Store.View(func(tx *store.Tx) error { stale = tx.Meta(metaGraphStale) != nil; return nil })
	if stale && !full {
		err := ix.Store.Update(func(tx *store.Tx) error {
			return tx.EachDoc(func(doc uint32) error { return tx.MarkLinksDirty(doc) })
		})
		if err != nil {
			return err
		}
	}
	total := 0
	_ = ix.Store.View(func(tx *store.Tx) error { total = tx.LinksDirtyCount(); return nil })
	resolved := 0
	for more := total > 0; more; {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := ix.Store.Update(func(tx *store.Tx) error {
			u := newUpdater(tx)
			n, err := u.drainLinks(drainBatch)
			if err != nil {
				return err
			}
			more = n > 0
			resolved += drainBatch
			return u.finish(nil)
		})
		if err != nil {
			return err
		}
		ix.Store.ReleaseMapped()
		if more {
			ix.progress("links", min(resolved, total), total)
		} else {
			ix.progress("links", total, total)
		}
	}
	// most of the graph dirty (a reindex): one pass over a snapshot beats
	// recomputing around each node
	var dirty, nodes int
	_ = ix.Store.View(func(tx *store.Tx) error {
		dirty, nodes = tx.GraphDirtyCount(), tx.PageCount()
		return nil
	})
	if stale {
		return ix.rebuildGraph(ctx, true)
	}
	if dirty > 500 && dirty*8 > nodes {
		return ix.rebuildGraph(ctx, false)
	}
	for more := dirty > 0; more; {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := ix.Store.Update(func(tx *store.Tx) error {
			u := newUpdater(tx)
			var err error
			more, err = u.drainGraph(drainBatch)
			return err
		})
		if err != nil {
			return err
		}
		ix.progress("graph", 0, 0)
	}
	return nil
}

func dedupeSorted(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// walk stats the files under the scan roots without reading them.
func (ix *Indexer) walk(ctx context.Context, paths []string) ([]diskFile, []string, error) {
	roots := slices.Clone(paths)
	if len(roots) == 0 {
		roots = []string{vault.WikiDir, vault.SourcesDir}
	}
	var out []diskFile
	rootPrefix := ix.Vault.Root + string(filepath.Separator)
	for i, root := range roots {
		// cleaned in place: the compare phase looks records up by root
		root = strings.TrimSuffix(filepath.ToSlash(filepath.Clean(filepath.FromSlash(root))), "/")
		roots[i] = root
		abs := ix.Vault.Abs(root)
		err := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				if p == abs {
					return err
				}
				return nil // unreadable sub-folder: skip it
			}
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			name := d.Name()
			if d.IsDir() {
				if p != abs && strings.HasPrefix(name, ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || vault.IsTempName(name) {
				return nil // symlinks, sockets and editor temp files are not tracked
			}
			// p lies under the vault root: slicing beats filepath.Rel on
			// 100,000 files
			rel := strings.TrimPrefix(p, rootPrefix)
			if len(rel) == len(p) {
				return nil
			}
			if filepath.Separator != '/' {
				rel = filepath.ToSlash(rel)
			}
			if !vault.IsPagePath(rel) && !vault.IsSourcePath(rel) {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			out = append(out, diskFile{path: rel, size: info.Size(), mtimeNS: info.ModTime().UnixNano()})
			return nil
		})
		if err != nil {
			return nil, nil, errs.Wrap(errs.Internal, err, "scan %s: %v", root, err)
		}
	}
	slices.SortFunc(out, func(a, b diskFile) int { return strings.Compare(a.path, b.path) })
	// overlapping roots walk a file twice; it is read once
	out = slices.CompactFunc(out, func(a, b diskFile) bool { return a.path == b.path })
	return out, roots, nil
}

type prepared struct {
	d      diskFile
	file   store.FileRec
	parsed *markdown.Page // nil for sources and unchanged pages
	err    error
}

// prepare reads, hashes and parses a batch with one worker per CPU. Each
// file is read exactly once.
func (ix *Indexer) prepare(batch []diskFile, known map[string]store.FileRec) []prepared {
	out := make([]prepared, len(batch))
	read := ix.readFile
	if read == nil {
		read = os.ReadFile
	}
	now := ix.now().UnixNano()
	var wg sync.WaitGroup
	next := make(chan int)
	workers := min(runtime.GOMAXPROCS(0), len(batch))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				d := batch[i]
				it := prepared{d: d}
				data, err := read(ix.Vault.Abs(d.path))
				if err != nil {
					it.err = err
					out[i] = it
					continue
				}
				it.file = store.FileRec{
					Kind: store.KindSource, Size: int64(len(data)), MtimeNS: d.mtimeNS,
					SHA256: sha256.Sum256(data), FirstSeen: now, LastChanged: d.mtimeNS, HashedNS: now,
				}
				if vault.IsPagePath(d.path) {
					it.file.Kind = store.KindPage
					if old, ok := known[d.path]; !ok || old.SHA256 != it.file.SHA256 {
						it.parsed = markdown.Parse(d.path, data)
					}
				}
				out[i] = it
			}
		}()
	}
	for i := range batch {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}
