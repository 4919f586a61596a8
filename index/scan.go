package index

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// Batch bounds: a scan commits after this many changed files or bytes, so
// no write transaction grows without bound and none is held while files
// are read.
const (
	batchFiles = 1000
	batchBytes = 16 << 20
)

// drainBatch bounds the pages whose links one settle transaction
// resolves (tuning.drainBatch lowers it for a test). Each commit
// rewrites the leaves of the dangling-link and page buckets its pages
// touched, so fewer, larger transactions cost less: measured on the
// recovery of a killed 100k reindex (links + graph), 20000 against 5000
// saved ~0.5 s of CPU and ~0.7 s of wall time, at the same peak RSS (the
// scan's store.GovernMapped bounds the mapped pages a drain reads).
const drainBatch = 20000

// tuning overrides an Indexer's batch bounds and graph lag; the zero
// value keeps the defaults. Tests set it to exercise the boundaries
// (several batches, a lagging degree) on their own Indexer.
type tuning struct {
	drainBatch   int     // 0: drainBatch
	drainChunk   int     // 0: drainChunk
	reparseBatch int     // 0: batchFiles
	graphEpsilon float64 // 0: store.GraphEpsilon
}

// or is n, or def when n is 0.
func or[T int | float64](n, def T) T {
	if n == 0 {
		return def
	}
	return n
}

// graphBatch bounds the graph-dirty nodes one settle transaction
// re-weighs.
const graphBatch = 5000

// MaxPageBytes caps the size of a page synapse reads: a bigger file under
// wiki/ is refused (reported by the scan, listed by status), never read
// into memory. write_page's own cap is far lower (MaxWriteBytes).
const MaxPageBytes = 32 << 20

// MaxWriteBytes caps a page as write_page writes it (frontmatter, fences
// and body). A page over it (written by hand) is indexed whole, and
// listed among the capped pages: no write can replace it whole.
const MaxWriteBytes = 1 << 20

// Progress reports scan progress: phase is "scan", "index", "links" or
// "graph"; total is 0 when unknown.
type Progress func(phase string, done, total int)

// Indexer keeps a store in step with a vault.
type Indexer struct {
	Vault    *vault.Vault
	Store    *store.Store
	Pages    PageIndexer // the search index; may be nil
	Progress Progress    // may be nil
	// Notify, when set, is told what a scan does that a person should
	// know of (the one-time re-parse after an upgrade); the CLI prints it
	// on stderr, serve logs it.
	Notify func(msg string)
	Now    func() time.Time

	// OnChanged, when set, receives the pages whose bytes a scan found
	// changed since they were last indexed (not new pages, not reserved
	// ones), after the transaction that indexed them is committed and
	// outside any transaction: the page history records them as edits
	// made outside synapse. A scan with ScanOptions.OwnWrite does not
	// call it.
	OnChanged func(pages []ChangedPage)

	// KeptIDs, when set, returns the ids pages keep across moves (vault
	// path → id): a page new to the store at such a path (a store rebuilt
	// after a move) gets that id rather than one derived from its path.
	// It is called at most once per scan, when a new page is met.
	KeptIDs func() map[string]string

	// readFile, when set, replaces the file layer's reads (tests count
	// calls through it); it gets absolute paths.
	readFile func(string) ([]byte, error)

	// mu serializes scans: two overlapping scans could otherwise commit
	// an older read of a file after a newer one.
	mu sync.Mutex

	// act is the progress of the scan running now (nil when none)
	act atomic.Pointer[Activity]

	tune tuning
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
	switch phase {
	case "links", "graph":
		return "pages"
	case "postings":
		return "terms"
	}
	return "files"
}

// Report is the result of a scan (what trigger_source_rescan returns).
type Report struct {
	Scanned   int      `json:"scanned"`
	New       []string `json:"new"`
	Changed   []string `json:"changed"`
	Deleted   []string `json:"deleted"`
	Unchanged int      `json:"unchanged"`
	// Reparsed counts the unchanged pages read and parsed again because
	// an older synapse had parsed them (once, after an upgrade; they are
	// not counted as unchanged).
	Reparsed     int  `json:"reparsed,omitempty"`
	NewCount     int  `json:"new_count"`
	ChangedCount int  `json:"changed_count"`
	DeletedCount int  `json:"deleted_count"`
	Truncated    bool `json:"truncated"`
	// Refused lists what the scan skipped and reported instead of reading:
	// named pipes, sockets and devices, symlinks that lead out of the
	// vault (or out of raw/sources/), symlink loops, unreadable folders,
	// pages over MaxPageBytes (the first ReportCap; RefusedCount counts
	// them all). `synapse status` lists them until a scan finds them gone.
	Refused      []Refused `json:"refused"`
	RefusedCount int       `json:"refused_count"`
	DurationMS   int64     `json:"duration_ms"`

	refused []Refused // all of them, for the store's list
}

// Refused is one file or folder a scan would not read.
type Refused struct {
	// Path is vault-relative.
	Path string `json:"path"`
	// Reason is one of not_regular, outside, loop, private, too_large,
	// unreadable, twin.
	Reason string `json:"reason"`
	// Message says what it is and why it is skipped.
	Message string `json:"message"`
	// TwinOf is, for a twin, the page file indexed in its place.
	TwinOf string `json:"twin_of,omitempty"`
}

func (r *Report) refuse(p string, err error) {
	rf := Refused{Path: p, Reason: "unreadable", Message: p + " cannot be read: " + err.Error()}
	if x, ok := vaultfs.AsRefusal(err); ok {
		rf = Refused{Path: x.Path, Reason: string(x.Reason), Message: x.Error()}
	}
	r.refuseWith(rf)
}

// refuseWith reports a file the scan will not read.
func (r *Report) refuseWith(rf Refused) {
	r.RefusedCount++
	if len(r.Refused) < ReportCap {
		r.Refused = append(r.Refused, rf)
	} else {
		r.Truncated = true
	}
	r.refused = append(r.refused, rf)
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
	// OwnWrite says the scan indexes what the caller itself just wrote
	// (a page write, which records the page's history itself):
	// Indexer.OnChanged is not called.
	OwnWrite bool
	// Then, when set, runs once in a write transaction after the scan's
	// changes are applied: in the transaction of the last batch when
	// nothing is left to settle after it (a page write: one commit for
	// the page and what the writer records with it), else in one of its
	// own at the end. Its error fails the scan (and rolls back that
	// batch).
	Then func(tx *store.Tx) error
	// KeepIDs gives the id of a page new at a path (vault path → id): a
	// page moved to another file keeps its id. An id another page holds
	// is not taken.
	KeepIDs map[string]string
}

type diskFile struct {
	path    string
	size    int64
	mtimeNS int64
	reparse bool // an unchanged page read again (see reparse)
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

// recordScan stores the refused files a scan found under roots and, for
// a scan of everything, when it finished.
func (ix *Indexer) recordScan(roots []string, rep *Report, whole bool) error {
	return ix.Store.Update(func(tx *store.Tx) error {
		if err := putRefused(tx, roots, rep.refused); err != nil {
			return err
		}
		if whole {
			return tx.SetLastScan(ix.now())
		}
		return nil
	})
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
			if err := tx.DeleteMeta(metaReparseAfter); err != nil {
				return err
			}
			return tx.SetMeta(metaGraphStale, []byte{1})
		})
		return true, true, err
	}
	var first, scanned bool
	err = ix.Store.View(func(tx *store.Tx) error {
		_, scanned = tx.LastScan()
		first = !scanned && len(opts.Paths) == 0
		bulk = tx.Meta(metaGraphStale) != nil
		fresh = tx.PageCount() == 0 && !tx.HasFiles()
		return nil
	})
	if err == nil && !scanned && !fresh && ix.Notify != nil {
		// the next command after a killed reindex or first index
		ix.Notify("the index was left half built (an interrupted reindex or first index); finishing it first")
	}
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
	// the drain's transactions share their lookups: nothing renames a
	// page while a settle holds ix.mu, so a key not resolved relative to
	// its page matches the same pages in every one of them
	keyCache, fileKeyCache := map[string]match{}, map[string]match{}
	for more := total > 0; more; {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := ix.Store.Update(func(tx *store.Tx) error {
			u := ix.newUpdater(tx)
			u.keyCache, u.fileKeyCache = keyCache, fileKeyCache
			n, err := u.drainLinks(or(ix.tune.drainBatch, drainBatch))
			if err != nil {
				return err
			}
			more = n > 0
			resolved += or(ix.tune.drainBatch, drainBatch)
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
			u := ix.newUpdater(tx)
			var err error
			more, err = u.drainGraph(graphBatch)
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

// readers are the scan's views of the vault: wiki/ (and any other path)
// through the vault's file layer, raw/sources/ confined to itself (as
// read_source_file reads it). src is nil when raw/sources/ cannot be
// opened (missing, or a symlink out: srcErr says which).
type readers struct {
	vault  *vaultfs.Reader
	src    *vaultfs.Reader
	srcErr error
}

func (ix *Indexer) openReaders() (*readers, error) {
	l := ix.Vault.Files()
	vr, err := l.Reader()
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "open the vault %s: %v", ix.Vault.Root, err)
	}
	rd := &readers{vault: vr}
	rd.src, rd.srcErr = l.ReaderUnder(vault.SourcesDir)
	return rd, nil
}

func (rd *readers) close() {
	rd.vault.Close()
	if rd.src != nil {
		rd.src.Close()
	}
}

// forPath returns the reader for a vault path.
func (rd *readers) forPath(p string) (*vaultfs.Reader, error) {
	if p == vault.SourcesDir || strings.HasPrefix(p, vault.SourcesDir+"/") {
		if rd.src == nil {
			return nil, rd.srcErr
		}
		return rd.src, nil
	}
	return rd.vault, nil
}

// walk stats the files under the scan roots without reading them, through
// the file layer: what it refuses (special files, symlinks out, loops,
// unreadable folders, pages over MaxPageBytes) goes to rep.
func (ix *Indexer) walk(ctx context.Context, rd *readers, rep *Report, paths []string) ([]diskFile, []string, error) {
	roots := slices.Clone(paths)
	if len(roots) == 0 {
		// schema.md and purpose.md are assets (links may name them)
		roots = []string{vault.WikiDir, vault.SourcesDir, rawDir, vault.SchemaFile, vault.PurposeFile}
	}
	var out []diskFile
	var byReader = map[*vaultfs.Reader][]string{}
	var order []*vaultfs.Reader
	for i, root := range roots {
		// cleaned in place: the compare phase looks records up by root
		root = strings.TrimSuffix(path.Clean(strings.TrimPrefix(filepath.ToSlash(root), "./")), "/")
		roots[i] = root
		r, err := rd.forPath(root)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				rep.refuse(vault.SourcesDir, err)
			}
			continue
		}
		if byReader[r] == nil {
			order = append(order, r)
		}
		byReader[r] = append(byReader[r], root)
	}
	if slices.Contains(roots, rawDir) && !slices.Contains(roots, vault.SourcesDir) && rd.src != nil {
		// raw/ walks its assets; raw/sources/ has a reader of its own
		roots = append(roots, vault.SourcesDir)
		if byReader[rd.src] == nil {
			order = append(order, rd.src)
		}
		byReader[rd.src] = append(byReader[rd.src], vault.SourcesDir)
	}
	isRoot := func(p string) bool { return slices.Contains(roots, p) }
	var leftovers []string
	for _, r := range order {
		err := r.Walk(ctx, byReader[r], func(e vaultfs.Entry) error {
			name := path.Base(e.Path)
			if e.Refused != nil {
				// wiki/ or raw/sources/ unreadable as a whole fails the
				// scan (read as empty, every page would be deleted from
				// the index); a folder or file under them that cannot be
				// read, even one asked for by name (the freshness check
				// asks for the files it found changed), is skipped and
				// reported, like any other
				if e.Refused.Reason == vaultfs.Unreadable && (e.Path == vault.WikiDir || e.Path == vault.SourcesDir) {
					return e.Refused
				}
				if !vault.IsTempName(name) || isRoot(e.Path) {
					rep.refuse(e.Path, e.Refused)
				}
				return nil
			}
			if e.Info.IsDir() {
				if !isRoot(e.Path) && strings.HasPrefix(name, ".") {
					return fs.SkipDir
				}
				if e.Path == vault.SourcesDir && r != rd.src {
					return fs.SkipDir // walked by its own reader
				}
				return nil
			}
			if vault.IsTempName(name) {
				if isWikiPath(e.Path) && ix.isLeftover(name, e.Info.ModTime()) {
					leftovers = append(leftovers, e.Path) // a killed write's
				}
				return nil // editor temp files are not tracked
			}
			if !vault.IsPagePath(e.Path) && !vault.IsSourcePath(e.Path) && !IsAssetPath(e.Path) {
				return nil
			}
			if vault.IsPagePath(e.Path) && e.Info.Size() > MaxPageBytes {
				rep.refuse(e.Path, &vaultfs.Refusal{Path: e.Path, Reason: vaultfs.TooLarge,
					Detail: fmt.Sprintf("a page of %d bytes; synapse reads pages of at most %d bytes", e.Info.Size(), MaxPageBytes)})
				return nil
			}
			out = append(out, diskFile{path: e.Path, size: e.Info.Size(), mtimeNS: e.Info.ModTime().UnixNano()})
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, nil, errs.Wrap(errs.Internal, err, "scan %s: %v", strings.Join(byReader[r], ", "), err)
		}
	}
	if len(paths) == 0 {
		ix.removeLeftovers(leftovers)
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
	pre    any    // the PagePreparer's, for a bulk scan (preparePages)
	data   []byte // a changed page's bytes, kept for Indexer.OnChanged
}

// ChangedPage is a page a scan found changed (Indexer.OnChanged).
type ChangedPage struct {
	Path    string // vault path
	Data    []byte // its bytes as read
	MtimeNS int64  // its modification time
}

// prepare reads, hashes and parses a batch with one worker per CPU,
// through the file layer. Each file is read exactly once: a page whole (at
// most MaxPageBytes), a source a chunk at a time into its hash. A
// cancelled ctx stops every read within a chunk.
func (ix *Indexer) prepare(ctx context.Context, rd *readers, batch []diskFile, known map[string]store.FileRec) []prepared {
	out := make([]prepared, len(batch))
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
				if err := ctx.Err(); err != nil {
					it.err = err
					out[i] = it
					continue
				}
				if IsAssetPath(d.path) {
					// an asset is tracked by size and mtime, never read
					it.file = store.FileRec{Kind: store.KindAsset, Size: d.size, MtimeNS: d.mtimeNS,
						FirstSeen: now, LastChanged: d.mtimeNS, HashedNS: now}
					out[i] = it
					continue
				}
				page := vault.IsPagePath(d.path)
				data, sum, size, err := ix.read(ctx, rd, d.path, page)
				if err != nil {
					it.err = err
					out[i] = it
					continue
				}
				it.file = store.FileRec{
					Kind: store.KindSource, Size: size, MtimeNS: d.mtimeNS,
					SHA256: sum, FirstSeen: now, LastChanged: d.mtimeNS, HashedNS: now,
				}
				if page {
					it.file.Kind = store.KindPage
					if old, ok := known[d.path]; !ok || old.SHA256 != it.file.SHA256 || d.reparse {
						it.parsed = markdown.Parse(d.path, data)
					}
					if old, ok := known[d.path]; ok && old.SHA256 != it.file.SHA256 && old.Kind == store.KindPage && ix.OnChanged != nil && !vault.IsReserved(d.path) {
						it.data = data
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

// read returns a page's bytes and hash, or a source's hash alone (read a
// chunk at a time: a source may be gigabytes), and the size read.
func (ix *Indexer) read(ctx context.Context, rd *readers, p string, page bool) ([]byte, [32]byte, int64, error) {
	if ix.readFile != nil {
		data, err := ix.readFile(ix.Vault.Abs(p))
		return data, sha256.Sum256(data), int64(len(data)), err
	}
	r, err := rd.forPath(p)
	if err != nil {
		return nil, [32]byte{}, 0, err
	}
	if page {
		data, _, err := r.ReadFile(ctx, p, MaxPageBytes)
		return data, sha256.Sum256(data), int64(len(data)), err
	}
	f, _, err := r.Open(p)
	if err != nil {
		return nil, [32]byte{}, 0, err
	}
	defer f.Close()
	sum, n, err := vaultfs.Hash(ctx, nil, f)
	return nil, sum, n, err
}

// preparePages hands the pages of a batch that its transaction will index
// (read and parsed, not reserved: applyPage indexes exactly those) to the
// PagePreparer, if there is one, and keeps what it makes of each.
func (ix *Indexer) preparePages(items []prepared) {
	pp, ok := findPages[PagePreparer](ix.Pages)
	if !ok {
		return
	}
	var pages []IndexedPage
	var at []int
	for i, it := range items {
		if it.err == nil && it.parsed != nil && !vault.IsReserved(it.d.path) {
			pages = append(pages, IndexedPage{Rec: pageFields(it.d.path, it.parsed), Parsed: it.parsed})
			at = append(at, i)
		}
	}
	if len(pages) == 0 {
		return
	}
	for k, pre := range pp.PreparePages(pages) {
		items[at[k]].pre = pre
	}
}
