package index

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/synapse-wiki/synapse/vault"
)

// WatchOptions tune a Watcher.
type WatchOptions struct {
	// Debounce is the quiet time after the last event before the changed
	// paths are scanned (default 100 ms).
	Debounce time.Duration
	// MaxDelay bounds how long a burst of events can postpone a scan
	// (default 1 s).
	MaxDelay time.Duration
	// Reconcile runs a full incremental scan first, in the background,
	// bringing the store in step with whatever changed while nothing
	// watched.
	Reconcile bool
	// OnScan observes every scan the watcher runs (for logs); may be nil.
	OnScan func(kind string, rep *Report, err error)
	// OnWatchError is told about each folder that cannot be watched (for
	// logs; the usual cause is inotify's fs.inotify.max_user_watches).
	// Edits there are then seen by rescans only. May be nil.
	OnWatchError func(dir string, err error)
}

// Watcher watches wiki/ and raw/ recursively (editor rename-saves,
// deletes, moves and new folders included), debounces bursts of events
// and feeds the changed paths to the scanner. It also runs requested full
// rescans, coalescing requests that arrive while one is pending. All its
// scans run on one goroutine.
type Watcher struct {
	ix    *Indexer
	opt   WatchOptions
	fsw   *fsnotify.Watcher
	reqs  chan chan rescanResult
	done  chan struct{}
	ready chan struct{}
	stop  context.CancelFunc

	mu    sync.Mutex
	dirs  map[string]bool // absolute folders watched
	scans int             // scans run (tests)
}

type rescanResult struct {
	rep *Report
	err error
}

// Watch starts a watcher. It returns at once; the folder walk that adds
// watches and the optional reconciliation run in the background (Ready is
// closed when both are done).
func (ix *Indexer) Watch(ctx context.Context, opt WatchOptions) (*Watcher, error) {
	if opt.Debounce <= 0 {
		opt.Debounce = 100 * time.Millisecond
	}
	if opt.MaxDelay <= 0 {
		opt.MaxDelay = time.Second
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{ix: ix, opt: opt, fsw: fsw, reqs: make(chan chan rescanResult, 16),
		done: make(chan struct{}), ready: make(chan struct{}), stop: cancel, dirs: map[string]bool{}}
	go w.loop(ctx)
	return w, nil
}

// Ready is closed once the watches are in place and the start-up
// reconciliation (if asked for) has finished.
func (w *Watcher) Ready() <-chan struct{} { return w.ready }

// Close stops the watcher and waits for a running scan to finish.
func (w *Watcher) Close() error {
	w.stop()
	<-w.done
	return w.fsw.Close()
}

// Rescan asks the watcher for a full incremental scan and waits for the
// report of the scan that covered the request. Requests that arrive while
// one is pending share its scan.
func (w *Watcher) Rescan(ctx context.Context) (*Report, error) {
	reply := make(chan rescanResult, 1)
	select {
	case w.reqs <- reply:
	case <-w.done:
		return nil, errors.New("the watcher has stopped")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-reply:
		return r.rep, r.err
	case <-w.done:
		return nil, errors.New("the watcher has stopped")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// addTree watches dir and every folder below it (hidden ones skipped).
func (w *Watcher) addTree(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		w.mu.Lock()
		seen := w.dirs[p]
		w.dirs[p] = true
		w.mu.Unlock()
		if !seen {
			if err := w.fsw.Add(p); err != nil && w.opt.OnWatchError != nil {
				w.opt.OnWatchError(p, err)
			}
		}
		return nil
	})
}

func (w *Watcher) loop(ctx context.Context) {
	defer close(w.done)
	for _, root := range []string{vault.WikiDir, vault.SourcesDir, rawDir} {
		abs := w.ix.Vault.Abs(root)
		_ = os.MkdirAll(abs, 0o755)
		w.addTree(abs)
	}
	// the vault's own folder, not its tree: schema.md and purpose.md
	if err := w.fsw.Add(w.ix.Vault.Root); err != nil && w.opt.OnWatchError != nil {
		w.opt.OnWatchError(w.ix.Vault.Root, err)
	}
	if w.opt.Reconcile {
		w.run(ctx, "reconcile", nil)
	}
	close(w.ready)

	pending := map[string]bool{}
	full := false
	var waiters []chan rescanResult
	var timer <-chan time.Time
	var first time.Time
	arm := func(d time.Duration) {
		if first.IsZero() {
			first = time.Now()
		}
		if left := w.opt.MaxDelay - time.Since(first); d > left {
			d = max(left, 0)
		}
		timer = time.After(d)
	}
	for {
		select {
		case <-ctx.Done():
			for _, r := range waiters {
				r <- rescanResult{err: ctx.Err()}
			}
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if rel, ok := w.relevant(ev); ok {
				pending[rel] = true
				if ev.Has(fsnotify.Create) {
					if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
						// files may land in a new folder before its watch
						// exists: the folder itself is scanned
						w.addTree(ev.Name)
					}
				}
				arm(w.opt.Debounce)
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				full = true // events were lost: look at everything
				arm(0)
			}
		case r := <-w.reqs:
			waiters = append(waiters, r)
			full = true
			arm(0)
		case <-timer:
			timer, first = nil, time.Time{}
			var paths []string
			if !full {
				for p := range pending {
					paths = append(paths, p)
				}
				sort.Strings(paths)
			}
			kind := "changes"
			if full {
				kind = "rescan"
			}
			rep, err := w.run(ctx, kind, paths)
			for _, r := range waiters {
				r <- rescanResult{rep, err}
			}
			waiters, full = nil, false
			clear(pending)
		}
	}
}

// relevant maps an event to the vault-relative path to rescan.
func (w *Watcher) relevant(ev fsnotify.Event) (string, bool) {
	if ev.Op == fsnotify.Chmod {
		return "", false // attribute changes alone are not content changes
	}
	rel, err := w.ix.Vault.Rel(ev.Name)
	if err != nil || vault.IsTempName(filepath.Base(rel)) {
		return "", false
	}
	if !strings.HasPrefix(rel, vault.WikiDir+"/") && !strings.HasPrefix(rel, rawDir+"/") &&
		rel != vault.SchemaFile && rel != vault.PurposeFile {
		return "", false // raw/ holds the sources and the assets (IsAssetPath)
	}
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return "", false
		}
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		w.mu.Lock()
		for d := range w.dirs {
			if d == ev.Name || strings.HasPrefix(d, ev.Name+string(filepath.Separator)) {
				delete(w.dirs, d)
			}
		}
		w.mu.Unlock()
	}
	return rel, true
}

func (w *Watcher) run(ctx context.Context, kind string, paths []string) (*Report, error) {
	rep, err := w.ix.Scan(ctx, ScanOptions{Paths: paths})
	w.mu.Lock()
	w.scans++
	w.mu.Unlock()
	if w.opt.OnScan != nil {
		w.opt.OnScan(kind, rep, err)
	}
	return rep, err
}
