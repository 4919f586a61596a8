// Package history keeps the versions of the vault's pages: every write
// through synapse records the version it makes, and the version it
// replaces when that one is not recorded yet (a hand edit), so any
// version a page had while synapse wrote it can be listed, compared and
// written back. Design notes: docs/history.md.
//
// Layout, under .synapse/history/ (git-ignored with the rest of
// .synapse/; `synapse backup` carries it):
//
//	pages/<id[:2]>/<id>.pack   one page's revisions (pack.go), keyed by the
//	                           page id; a move carries the pack to the new id
//	recent.jsonl               one JSON line per revision recorded, the
//	                           activity feed behind `synapse recent`, each
//	                           with the totals after it (pages, revisions,
//	                           bytes, pruning done): the last is the summary
//
// A revision is stored once per page whatever how often the page returns
// to it (content-addressed by sha256), compressed when that saves bytes,
// and as a delta against an earlier revision of the page when that saves
// more. The history is bounded per page (revisions and bytes) and in total
// (bytes); pruning drops the oldest revisions first and never a page's
// newest.
//
// Crash safety: an append is one write at the end of the pack; a record
// cut short by a crash is recognised (framing and a CRC-32C) and cut off
// by the next change. Durability is the caller's choice (Page.Sync): the
// write path makes the replaced version durable before it replaces the
// file, so a crash never loses a version that was on disk.
//
// Concurrency: one Store per vault per process (For), whose lock
// serializes changes; only the process holding the store's write lock
// changes the history, so the lock is enough. Readers never change a pack.
package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synapse-wiki/synapse/vaultfs"
)

// Dir is the history's folder, relative to the vault root.
const Dir = ".synapse/history"

// The history's files, relative to Dir.
const (
	pagesDir   = "pages"
	recentFile = "recent.jsonl"
	orphansDir = "orphans"
)

// What made a revision (Revision.Op).
const (
	OpCreate  = "create"  // a new page written through synapse
	OpWrite   = "write"   // a page written through synapse
	OpRestore = "restore" // an earlier revision written back
	OpMove    = "move"    // the page moved to another file
	OpEdit    = "edit"    // the file changed outside synapse
	OpRelink  = "relink"  // links rewritten by another page's move (MoveOf names it)
)

// Who made a revision (Revision.Origin).
const (
	OriginSynapse = "synapse" // a write through synapse (CLI, MCP, REST, desk)
	OriginFile    = "file"    // seen in the file: an editor, git, a sync tool
)

// Limits bound the history. Zero fields take the defaults.
type Limits struct {
	// PageRevisions is the most revisions kept per page.
	PageRevisions int `json:"page_revisions"`
	// PageBytes is the most bytes one page's history takes on disk.
	PageBytes int64 `json:"page_bytes"`
	// TotalBytes is the most bytes the whole history takes on disk
	// (Summary.DiskBytes).
	TotalBytes int64 `json:"total_bytes"`
}

// The default limits: at 100,000 pages of ~3 KB, ten revisions each take
// ~0.4 GB (a revision after the first is a delta of a few hundred bytes),
// within TotalBytes; a page edited all day keeps its last 100 versions.
const (
	DefaultPageRevisions = 100
	DefaultPageBytes     = 8 << 20
	DefaultTotalBytes    = 2 << 30
)

// withDefaults fills the zero fields.
func (l Limits) withDefaults() Limits {
	if l.PageRevisions <= 0 {
		l.PageRevisions = DefaultPageRevisions
	}
	if l.PageBytes <= 0 {
		l.PageBytes = DefaultPageBytes
	}
	if l.TotalBytes <= 0 {
		l.TotalBytes = DefaultTotalBytes
	}
	return l
}

// Revision is one version of a page.
type Revision struct {
	// Rev numbers the page's revisions from 1, in order; numbers are never
	// reused (pruning leaves gaps below the oldest kept).
	Rev    int       `json:"rev"`
	SHA256 string    `json:"sha256"`
	Size   int64     `json:"size"`
	Time   time.Time `json:"time"`
	Op     string    `json:"op"`
	Origin string    `json:"origin"`
	// Path is the page's file at this revision, Title its title.
	Path  string `json:"path"`
	Title string `json:"title,omitempty"`
	// From is the revision a restore wrote back.
	From int `json:"from,omitempty"`
	// MovedFrom is the file a move left.
	MovedFrom string `json:"moved_from,omitempty"`
	// MoveOf is the page whose move rewrote this page's links (Op
	// relink): its title after the move.
	MoveOf string `json:"move_of,omitempty"`
	// Stored is the bytes the revision takes in the history (a repeat of
	// an earlier revision or a small edit takes little).
	Stored int64 `json:"stored"`
}

// Entry is a version of a page to record.
type Entry struct {
	Content []byte
	Time    time.Time // zero: now
	Op      string
	Origin  string
	Path    string
	Title   string
	From    int
	// MovedFrom is the file a move left (Op move).
	MovedFrom string
	// MoveOf is the page whose move rewrote this one's links (Op relink).
	MoveOf string
}

// Store is the history of one vault.
type Store struct {
	root string      // the vault's root
	fs   *vaultfs.FS // the file layer rooted at Dir (nil until ready)
	now  func() time.Time

	dir os.FileInfo // Dir as fs found it: a folder replaced since is found again

	mu     sync.Mutex // held by an open Page (Edit) and the global prune
	limits Limits
	sum    *Summary  // loaded on first use
	last   *lastPack // the pack the last change left (cache.go)
	feed   *feedFile // the activity feed, open for appending (recent.go)
	// sumStale says sum counts a folder that is gone (see ready)
	sumStale atomic.Bool
}

var (
	regMu    sync.Mutex
	registry = map[string]*Store{}
)

// For returns the history of the vault at root (absolute, clean): one
// Store per vault in a process, so that its lock serializes every change.
func For(root string) *Store {
	regMu.Lock()
	defer regMu.Unlock()
	s := registry[root]
	if s == nil {
		s = &Store{root: root, now: time.Now, limits: Limits{}.withDefaults()}
		registry[root] = s
	}
	return s
}

// errNoHistory says the vault has no history folder yet (nothing was
// recorded); it matches fs.ErrNotExist.
var errNoHistory = fmt.Errorf("no history yet: %w", fs.ErrNotExist)

// ready finds the history's folder and its file layer, creating the
// folder when create is set (errNoHistory when it is absent otherwise).
// Every file of the history is reached through a vaultfs layer rooted at
// Dir: nothing is written through a symlink, nothing but regular files is
// read. .synapse/ and Dir themselves must be real folders, never
// symlinks: a vault arrives from anywhere. A folder deleted or replaced
// since it was found (a user resetting .synapse/ beside a running
// server) is found again, and the summary of the old one dropped.
func (s *Store) ready(create bool) error {
	regMu.Lock()
	defer regMu.Unlock()
	if s.fs != nil {
		st, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(Dir)))
		if err == nil && os.SameFile(st, s.dir) {
			return nil
		}
		s.fs, s.dir = nil, nil
		s.sumStale.Store(true) // s.mu may be held here: dropped where it is read
	}
	for i, d := range []string{".synapse", Dir} {
		abs := filepath.Join(s.root, filepath.FromSlash(d))
		st, err := os.Lstat(abs)
		if errors.Is(err, fs.ErrNotExist) && (i == 1 || !create) {
			if !create {
				return errNoHistory
			}
			if err = os.Mkdir(abs, 0o700); err == nil || errors.Is(err, fs.ErrExist) {
				st, err = os.Lstat(abs)
			}
		}
		if err != nil {
			return fmt.Errorf("history: %w", err)
		}
		if !st.IsDir() {
			return fmt.Errorf("history: %s is not a folder (a symlink or a file there is never followed)", d)
		}
	}
	abs := filepath.Join(s.root, filepath.FromSlash(Dir))
	st, err := os.Lstat(abs)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	s.fs, s.dir = vaultfs.New(abs), st
	return nil
}

// name is a history file's vault path, for messages.
func name(rel string) string { return Dir + "/" + rel }

// SetLimits sets the bounds (zero fields: the defaults). They apply from
// the next change.
func (s *Store) SetLimits(l Limits) {
	s.mu.Lock()
	s.limits = l.withDefaults()
	s.mu.Unlock()
}

// Limits returns the bounds in force.
func (s *Store) Limits() Limits {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limits
}

// SetClock sets the clock that stamps entries without a time (tests).
func (s *Store) SetClock(now func() time.Time) {
	s.mu.Lock()
	s.now = now
	s.mu.Unlock()
}

// validID reports whether id is a page id as the store makes them (short,
// lowercase letters and digits): nothing else names a file here.
func validID(id string) bool {
	if len(id) < 2 || len(id) > 32 {
		return false
	}
	for _, c := range id {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// packPath is the pack of the page id.
func packPath(id string) string {
	return pagesDir + "/" + id[:2] + "/" + id + ".pack"
}

func badID(id string) error {
	return fmt.Errorf("history: %q is not a page id", strings.ToValidUTF8(id, "?"))
}
