package monitor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/synapse-wiki/synapse/vault"
)

// cookiePrefix names the files a flush creates in .synapse/ (see flush).
const cookiePrefix = "monitor-cookie-"

// errStopped is the error of a flush after the watcher stopped.
var errStopped = errors.New("the monitor has stopped")

// cannotWatch is an error that keeps the monitor from vouching for the
// vault: a folder that cannot be watched, a symlinked folder. Run keeps
// its reason in OffFile, so that the CLI does not start a monitor again
// for a while.
type cannotWatch struct{ error }

func (e cannotWatch) Unwrap() error { return e.error }

// watcher watches a vault's tracked trees — wiki/ and raw/ recursively,
// the vault's own folder (schema.md, purpose.md) and .synapse/ (for the
// flush cookies) — and records each change in its log. One goroutine
// (run) reads the events, in the order the kernel queued them.
type watcher struct {
	root  string // the vault, absolute
	state string // its .synapse folder
	fsw   *fsnotify.Watcher
	log   *changeLog

	// dirs are the folders watched, by absolute path
	dirs map[string]bool
	// sock is the inode of the monitor's socket (0: none yet): the
	// watcher stops when that file is removed or replaced
	sock uint64

	mu      sync.Mutex
	cookies map[string]chan struct{} // cookie name → closed when its event is read
	cookieN atomic.Uint64
	stopped chan struct{} // closed when run returns
	why     error         // why run returned (nil: asked to)
}

// newWatcher watches the vault at root. It fails when a folder cannot
// be watched (the inotify watch limit), or when the tracked trees hold a
// symlinked folder (its edits would not reach the watch): the monitor
// cannot vouch for such a vault, and today's check serves it.
func newWatcher(root string, log *changeLog) (*watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{root: root, state: filepath.Join(root, vault.StateDir), fsw: fsw, log: log,
		dirs: map[string]bool{}, cookies: map[string]chan struct{}{}, stopped: make(chan struct{})}
	for _, d := range []string{root, w.state} {
		if err := fsw.Add(d); err != nil {
			fsw.Close()
			return nil, fmt.Errorf("watch %s: %w", d, err)
		}
	}
	for _, t := range []string{vault.WikiDir, "raw"} {
		if err := w.addTree(filepath.Join(root, t)); err != nil {
			fsw.Close()
			return nil, err
		}
	}
	return w, nil
}

// folders is how many folders are watched.
func (w *watcher) folders() int { return len(w.fsw.WatchList()) }

// addTree watches dir and every folder below it (hidden ones skipped).
// A missing dir is no error (wiki/ may be created later: the vault's
// folder is watched).
func (w *watcher) addTree(dir string) error {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				return cannotWatch{fmt.Errorf("%s is a symlinked folder: edits behind it are not seen by a watch", w.rel(p))}
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if err := w.fsw.Add(p); err != nil {
			return cannotWatch{fmt.Errorf("watch %s: %w", w.rel(p), err)}
		}
		w.dirs[p] = true
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (w *watcher) rel(p string) string {
	r, err := filepath.Rel(w.root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(r)
}

// run reads events until ctx ends or the watcher cannot go on (its error
// is then stop's): the vault or its .synapse folder went away, events
// were lost beyond repair, or a folder could not be watched.
func (w *watcher) run(ctx context.Context) {
	err := w.loop(ctx)
	w.mu.Lock()
	w.why = err
	for _, c := range w.cookies {
		close(c)
	}
	clear(w.cookies)
	w.mu.Unlock()
	close(w.stopped)
	w.fsw.Close()
}

func (w *watcher) loop(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return errStopped
			}
			if err := w.event(ev); err != nil {
				return err
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return errStopped
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				return fmt.Errorf("watch: %w", err)
			}
			w.log.lost() // every token given out is answered Full
		}
	}
}

// event records one event.
func (w *watcher) event(ev fsnotify.Event) error {
	gone := ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	if ev.Name == w.root || ev.Name == w.state {
		if gone {
			return fmt.Errorf("%s was removed or moved", ev.Name)
		}
		return nil
	}
	if filepath.Dir(ev.Name) == w.state {
		name := filepath.Base(ev.Name)
		if name == filepath.Base(SockFile) && w.sock != 0 {
			if same, _ := sameFile(ev.Name, w.sock); !same {
				return errors.New("its socket was removed or replaced")
			}
		}
		if strings.HasPrefix(name, cookiePrefix) && ev.Has(fsnotify.Create) {
			w.mu.Lock()
			if c, ok := w.cookies[name]; ok {
				close(c)
				delete(w.cookies, name)
			}
			w.mu.Unlock()
		}
		return nil
	}
	rel := w.rel(ev.Name)
	if !tracked(rel) {
		return nil
	}
	if gone {
		w.unwatch(ev.Name)
	}
	if ev.Has(fsnotify.Create) {
		if st, err := os.Lstat(ev.Name); err == nil {
			switch {
			case st.IsDir():
				// a folder made or moved in: watched from now on (the
				// CLI lists it, so files made in it before its watch
				// are seen too)
				if err := w.addTree(ev.Name); err != nil {
					return err
				}
			case st.Mode()&fs.ModeSymlink != 0:
				if t, err := os.Stat(ev.Name); err == nil && t.IsDir() {
					return cannotWatch{fmt.Errorf("%s is a symlinked folder: edits behind it are not seen by a watch", rel)}
				}
			}
		}
	}
	w.log.note(rel)
	return nil
}

// unwatch drops the watches of a folder removed or moved away, and of
// the folders below it. The kernel keeps a moved folder's watches, under
// the names they were added with, so events there would be reported
// under its old name; the move's Create under the new name, which comes
// next, watches it afresh.
func (w *watcher) unwatch(dir string) {
	for d := range w.dirs {
		if d == dir || strings.HasPrefix(d, dir+string(filepath.Separator)) {
			_ = w.fsw.Remove(d) // (already gone with a removed folder)
			delete(w.dirs, d)
		}
	}
}

// tracked reports whether a change to the vault-relative path rel can
// concern the index: wiki/ or raw/ or a path under them (no hidden
// part, no editor's temporary file), or schema.md or purpose.md.
func tracked(rel string) bool {
	if rel == vault.SchemaFile || rel == vault.PurposeFile || rel == vault.WikiDir || rel == "raw" {
		return true
	}
	if !strings.HasPrefix(rel, vault.WikiDir+"/") && !strings.HasPrefix(rel, "raw/") {
		return false
	}
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return !vault.IsTempName(filepath.Base(rel))
}

// flush returns once every event queued before it was called has been
// recorded: it creates a cookie file in .synapse/ and waits for the
// watcher to read its event, which the kernel queued after them (one
// inotify queue holds the events of every watch, in order). An edit
// finished before flush is therefore in the log when it returns.
func (w *watcher) flush(ctx context.Context, timeout time.Duration) error {
	name := cookiePrefix + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(w.cookieN.Add(1), 10)
	seen := make(chan struct{})
	w.mu.Lock()
	select {
	case <-w.stopped:
		w.mu.Unlock()
		return errStopped
	default:
	}
	w.cookies[name] = seen
	w.mu.Unlock()
	p := filepath.Join(w.state, name)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		w.forget(name)
		return fmt.Errorf("flush: %w", err)
	}
	f.Close()
	defer os.Remove(p)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-seen:
		select {
		case <-w.stopped:
			return errStopped
		default:
			return nil
		}
	case <-t.C:
		w.forget(name)
		return fmt.Errorf("flush: the cookie's event did not arrive within %v", timeout)
	case <-ctx.Done():
		w.forget(name)
		return ctx.Err()
	}
}

func (w *watcher) forget(name string) {
	w.mu.Lock()
	delete(w.cookies, name)
	w.mu.Unlock()
}
