package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/history"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/gcmode"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// Version is the synapse version, set by main.
var Version = "dev"

// Env is what an operation runs against: one vault and its open store.
type Env struct {
	Vault *vault.Vault
	Store *store.Store
	Index *index.Indexer
	// ReadOnly refuses every write operation (HTTP without --write).
	ReadOnly bool
	// Now is the clock (tests pin it).
	Now func() time.Time
	// Rescan, when set, runs a rescan on behalf of trigger_source_rescan
	// (serve routes it through its watcher queue); nil scans inline.
	Rescan func(ctx context.Context) (*index.Report, error)
	// Progress receives scan progress (the CLI draws it on a TTY).
	Progress index.Progress
	// Embed is the process's embedding state (ops/embed.go), shared by
	// the copies of an Env.
	Embed *EmbedState
	// Fresh is what OpenOptions.Fresh found and did (ops/fresh.go); nil
	// when not checked.
	Fresh *Freshness
	// History is the vault's page history (package history).
	History *history.Store
	// git: each write commits the files it changed (history.git in the
	// vault's config, read by gitWanted)
	git bool
	// reopen opens the store again (OpenOptions.Detachable), waiting for
	// its lock up to the given time.
	reopen func(readOnly bool, wait time.Duration) (*store.Store, error)
	// pageWritten runs in a write transaction after a page was written
	// and re-indexed: it files an idempotent missing-page item (origin
	// "rule") for each dangling target it is given (those the write adds,
	// at most MaxFiledPerWrite: fileMissing) and marks pending missing-page
	// items that the page satisfies (by title or alias) auto_resolved. It
	// returns the targets it filed as new items (not those already in the
	// queue) and the items it resolved. NewEnv sets the review queue's
	// (onPageWritten); a test may put its own on its Env.
	pageWritten pageWrittenFunc
	// observe lets tests and benchmarks watch the write path (nil: no one
	// watches).
	observe observers
	// fsys is the file system of the write path (writeFS); nil: the
	// vault's file layer. A test sets one that fails at a chosen step.
	fsys fileSystem
}

// observers are the points where a test or benchmark watches the write
// path of one Env; each is nil unless one set it.
type observers struct {
	// stage receives how long each stage of a page write took: prepare,
	// file, log, reindex, index.md, commit, rescan.
	stage func(stage string, d time.Duration)
	// reserved receives the reserved files whose store records a page
	// write had the scanner re-parse (nil or empty: none).
	reserved func(rescanned []string)
	// indexMD learns whether each index.md a write regenerated was
	// spliced (true) or rendered whole.
	indexMD func(spliced bool)
}

// OpenOptions tune OpenEnv.
type OpenOptions struct {
	ReadOnly bool          // open the store with a shared lock
	Timeout  time.Duration // lock wait bound
	Holder   string        // holder description for a read-write open
	Progress index.Progress
	// Notify receives what a scan does that a person should know of (the
	// one-time re-parse after an upgrade, a search index rebuilt): the CLI
	// prints it on stderr.
	Notify func(msg string)
	// NoInitialScan skips the scan of a never-scanned store (for
	// operations that scan anyway).
	NoInitialScan bool
	// Fresh checks for files changed since the index was last brought up
	// to date and indexes them before the operation runs (ops/fresh.go):
	// for a CLI verb that opens the store itself, with no server watching.
	Fresh bool
	// ReadOnlyFallback opens the store read-only when it cannot be opened
	// read-write because its file system is read-only: for a read that
	// would rather write first (lint brings the index up to date), which
	// then answers from the index as it is.
	ReadOnlyFallback bool
	// Monitor is the vault's file monitor, asked by Fresh which files
	// changed (ops/fresh_monitor.go); nil checks the files by stat.
	Monitor FreshMonitor
	// NeverWrite opens the store read-only and keeps it so: whatever would
	// take the write lock (a first scan, a search index to rebuild, the
	// review queue to replay, a move to finish, files changed since the
	// last scan to index) fails the open with ErrNeedsWriter instead. The
	// vault's file monitor opens the store so to answer a verb for a CLI.
	NeverWrite bool
	// Detachable says nothing else in this process uses the Env (a CLI
	// verb run alone): an operation that waits on something outside the
	// vault for long (embed, on the provider) may close the store for the
	// rest of the operation and open it for each transaction only, so that
	// other processes can use the vault meanwhile. Such an Env serves one
	// operation.
	Detachable bool
}

// openEnvStore opens the store for OpenEnv: read-write instead of
// read-only when the store needs a first scan, a search index rebuilt, the
// review queue replayed or a move finished (each needs the write lock; a
// reader still answers when another process holds it), read-only on a
// read-only file system when o allows it (o.ReadOnly is then set).
func openEnvStore(v *vault.Vault, o *OpenOptions) (s *store.Store, needScan, rebuild bool, err error) {
	if o.NeverWrite {
		s, err := openNoWrite(v, o)
		return s, false, false, err
	}
	open := func(ro bool) (*store.Store, error) {
		return store.Open(v.Abs(vault.DBFile), store.Options{ReadOnly: ro, Timeout: o.Timeout, Holder: o.Holder})
	}
	s, err = open(o.ReadOnly)
	if err != nil && !o.ReadOnly && o.ReadOnlyFallback && errors.Is(err, store.ErrReadOnlyFS) {
		o.ReadOnly = true
		s, err = open(true)
	}
	replay := false
	if err == nil {
		n := needsOf(s, v)
		needScan, rebuild, replay = n.scan, n.rebuild, n.replay
		switch {
		case needScan && o.ReadOnly && !o.NoInitialScan:
			s.Close()
			s, err = open(false)
		case (rebuild && !o.NoInitialScan || replay) && o.ReadOnly:
			// the write lock only if it is free: a reader still answers
			// (from the queue as it was: the next command replays it)
			s.Close()
			if s, err = open(false); err != nil {
				s, err = open(true)
				rebuild = false
			}
		}
	} else if o.ReadOnly {
		// no store yet, or a schema to migrate: a read-write open creates it
		if s2, err2 := open(false); err2 == nil {
			s, err, needScan = s2, nil, true
		}
	}
	if err == nil && o.ReadOnly && pendingMove(v) {
		// a move a crash interrupted is finished first, which takes the
		// write lock (a holder of it finished it when it opened)
		s.Close()
		if s, err = open(false); err != nil {
			s, err = open(true)
		}
	}
	return s, needScan, rebuild, err
}

// storeNeeds is what an open finds the store needs before it answers
// as it should: a first scan, its search index rebuilt, the review queue
// replayed from its journal (replayErr: why that could not be told).
type storeNeeds struct {
	scan, rebuild, replay bool
	replayErr             error
}

// needsOf reads what s needs (storeNeeds) in one read transaction.
func needsOf(s *store.Store, v *vault.Vault) (n storeNeeds) {
	_ = s.View(func(tx *store.Tx) error {
		_, ok := tx.LastScan()
		n.scan = !ok
		n.rebuild = ok && search.NeedsRebuild(tx)
		n.replay, n.replayErr = queueStale(tx, v.Files())
		return nil
	})
	return n
}

// ErrNeedsWriter is the error of an open with OpenOptions.NeverWrite
// that would have to write first.
var ErrNeedsWriter = errors.New("the store needs a writer first")

// openNoWrite is openEnvStore for OpenOptions.NeverWrite.
func openNoWrite(v *vault.Vault, o *OpenOptions) (*store.Store, error) {
	o.ReadOnly = true
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{ReadOnly: true, Timeout: o.Timeout, Holder: o.Holder})
	if err != nil {
		return nil, err
	}
	why := ""
	switch n := needsOf(s, v); {
	case n.scan:
		why = "never scanned"
	case n.rebuild:
		why = "its search index is to be rebuilt"
	case n.replay || n.replayErr != nil:
		why = "its review queue is behind the journal"
	}
	if why == "" && pendingMove(v) {
		why = "a move is to be finished"
	}
	if why != "" {
		s.Close()
		return nil, fmt.Errorf("%w: %s", ErrNeedsWriter, why)
	}
	return s, nil
}

// OpenEnv opens the store of v. A store that has never completed a scan is
// opened read-write and scanned first, so a new vault answers at once. So
// is one whose search index another version of synapse built (or a
// rebuild left half done), when the write lock can be had: the scan
// rebuilds the search index (search.NeedsRebuild); when it cannot, the
// store is opened as asked and search answers unavailable until the
// holder has rebuilt it.
func OpenEnv(ctx context.Context, v *vault.Vault, o OpenOptions) (*Env, error) {
	cfg, err := v.LoadConfig()
	if err != nil {
		return nil, err
	}
	lang, err := search.ConfigLanguage(cfg.Search.Language)
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "%s: %v", vault.ConfigFile, err)
	}
	if _, err := monitorSetting(cfg); err != nil {
		return nil, err
	}
	s, needScan, rebuild, err := openEnvStore(v, &o)
	if err != nil {
		return nil, err
	}
	e := NewEnv(v, s)
	e.History.SetLimits(historyLimits(cfg))
	e.git = gitWanted(cfg)
	if o.Detachable {
		e.reopen = func(ro bool, wait time.Duration) (*store.Store, error) {
			s, err := store.Open(v.Abs(vault.DBFile), store.Options{ReadOnly: ro, Timeout: wait, Holder: o.Holder})
			if err == nil {
				s.SetReviewJournal(&reviewJournal{files: v.Files()})
			}
			return s, err
		}
	}
	e.Index.Pages = vectorPages{search.Indexer{Language: lang}}
	e.Progress = o.Progress
	e.Index.Progress = o.Progress
	e.Index.Notify = o.Notify
	// a damaged file was replaced by a new store: its review queue goes
	// back first (the journal replayed over what could be salvaged), and
	// the scan below fills the rest
	if _, err := e.afterHeal(ctx); err != nil {
		s.Close()
		return nil, err
	}
	// the review queue is a cache of the journal: a store that is new,
	// rebuilt, older than this synapse or behind the journal (a git pull)
	// replays it; a journal that cannot be read fails the review verbs,
	// which say why, not every command
	if err := e.syncQueue(); err != nil && o.Notify != nil {
		o.Notify("the review queue could not be brought in step with " + vault.ReviewJournal + ": " + errs.Message(err))
	}
	if !s.ReadOnly() {
		if err := recoverMoves(ctx, e); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := e.bringUpToDate(ctx, o, cfg, (needScan || rebuild) && !o.NoInitialScan); err != nil {
		// a store found damaged on the way is rebuilt, then filled
		if reason, damaged := store.DamageReason(err); damaged {
			err = e.rebuildStore(ctx, reason, false)
		}
		if err != nil {
			e.Store.Close()
			return nil, err
		}
	}
	// a write killed after its page was written: its items are filed now;
	// a create killed while it held an item: the item is free again
	if err := e.finishInterruptedWrite(ctx); err != nil && o.Notify != nil {
		o.Notify("an interrupted write's review items could not be filed: " + errs.Message(err))
	}
	if err := e.releaseGoneClaims(); err != nil && o.Notify != nil {
		o.Notify("the claims of ended commands on review items could not be released: " + errs.Message(err))
	}
	return e, nil
}

// bringUpToDate scans a store that never completed a scan (or whose
// search index must be rebuilt), else indexes what changed since the
// last scan when asked to (OpenOptions.Fresh).
func (e *Env) bringUpToDate(ctx context.Context, o OpenOptions, cfg *vault.Config, scan bool) error {
	if scan {
		gcmode.Long() // a scan of the whole vault
		_, err := e.Index.Scan(ctx, index.ScanOptions{})
		return err
	}
	if o.Fresh && !freshOff() {
		return e.freshen(ctx, o, cfg, checkFiles(cfg, !o.ReadOnly))
	}
	return nil
}

// NewEnv wraps an already open store.
func NewEnv(v *vault.Vault, s *store.Store) *Env {
	e := &Env{Vault: v, Store: s, Now: time.Now, Embed: newEmbedState(), pageWritten: onPageWritten}
	s.SetReviewJournal(&reviewJournal{files: v.Files()}) // the review queue's changes go to the vault's journal
	e.Index = &index.Indexer{Vault: v, Store: s, Pages: vectorPages{search.Indexer{}}, Now: e.now,
		KeptIDs: func() map[string]string { return readKeptIDs(v) }}
	e.History = history.For(v.Root)
	e.History.SetClock(e.now)
	e.Index.OnChanged = e.recordEdits
	return e
}

// files is the vault's confined file layer: every read and write of a
// vault file goes through it.
func (e *Env) files() *vaultfs.FS { return e.Vault.Files() }

// writeFS is the file system the write path's steps go through: the
// vault's file layer unless a test set Env.fsys.
func (e *Env) writeFS() fileSystem {
	if e.fsys != nil {
		return e.fsys
	}
	return osFS{e.files()}
}

func (e *Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// Close closes the store.
func (e *Env) Close() error {
	if e == nil || e.Store == nil {
		return nil
	}
	if e.History != nil {
		e.History.CloseFeed() // no file of the vault stays open past its Env
	}
	return e.Store.Close()
}

// pageWrittenFunc is Env.pageWritten.
//
// why is the writer's line for log.md ("" = none): the note of the
// decisions the write makes.
type pageWrittenFunc func(tx *store.Tx, page *store.PageRec, dangling []string, why string, now time.Time) (reviewsTouched, error)

// reviewsTouched is what a page write did to the review queue: the
// targets it filed as new missing-page items, and the pending items it
// answered (auto_resolved, decided by rule).
type reviewsTouched struct {
	filed    []string
	resolved []ReviewItem
}
