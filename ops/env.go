package ops

import (
	"context"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
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
}

// OpenOptions tune OpenEnv.
type OpenOptions struct {
	ReadOnly bool          // open the store with a shared lock
	Timeout  time.Duration // lock wait bound
	Holder   string        // holder description for a read-write open
	Progress index.Progress
	// NoInitialScan skips the scan of a never-scanned store (for
	// operations that scan anyway).
	NoInitialScan bool
	// Notice, when set, is told (one line, for a human) about work the
	// open does before the operation can run: finishing an index that an
	// interrupted reindex or first index left half built.
	Notice func(msg string)
}

// OpenEnv opens the store of v. A store that has never completed a scan is
// opened read-write and scanned first, so a new vault answers at once.
func OpenEnv(ctx context.Context, v *vault.Vault, o OpenOptions) (*Env, error) {
	cfg, err := v.LoadConfig()
	if err != nil {
		return nil, err
	}
	lang, err := search.ConfigLanguage(cfg.Search.Language)
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "%s: %v", vault.ConfigFile, err)
	}
	open := func(ro bool) (*store.Store, error) {
		return store.Open(v.Abs(vault.DBFile), store.Options{ReadOnly: ro, Timeout: o.Timeout, Holder: o.Holder})
	}
	s, err := open(o.ReadOnly)
	needScan, partial := false, false
	if err == nil {
		_ = s.View(func(tx *store.Tx) error {
			_, ok := tx.LastScan()
			needScan = !ok
			partial = !ok && tx.HasFiles()
			return nil
		})
		if needScan && o.ReadOnly && !o.NoInitialScan {
			s.Close()
			s, err = open(false)
		}
	} else if o.ReadOnly {
		// no store yet, or a schema to migrate: a read-write open creates it
		if s2, err2 := open(false); err2 == nil {
			s, err, needScan = s2, nil, true
		}
	}
	if err != nil {
		return nil, err
	}
	e := NewEnv(v, s)
	e.Index.Pages = vectorPages{search.Indexer{Language: lang}}
	e.Progress = o.Progress
	e.Index.Progress = o.Progress
	if needScan && !o.NoInitialScan {
		if partial && o.Notice != nil {
			o.Notice("the index was left half built (an interrupted reindex or first index); finishing it first")
		}
		if _, err := e.Index.Scan(ctx, index.ScanOptions{}); err != nil {
			s.Close()
			return nil, err
		}
	}
	return e, nil
}

// NewEnv wraps an already open store.
func NewEnv(v *vault.Vault, s *store.Store) *Env {
	vaultfs.For(v.Root) // the write primitives find the vault's file layer by path
	e := &Env{Vault: v, Store: s, Now: time.Now, Embed: newEmbedState()}
	e.Index = &index.Indexer{Vault: v, Store: s, Pages: vectorPages{search.Indexer{}}, Now: e.now}
	return e
}

// files is the vault's confined file layer: every read and write of a
// vault file goes through it.
func (e *Env) files() *vaultfs.FS { return vaultfs.For(e.Vault.Root) }

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
	return e.Store.Close()
}
