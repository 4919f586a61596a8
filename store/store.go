package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the layout version this build reads and writes.
const SchemaVersion = 3

// schemaVersion is SchemaVersion as a variable, so tests can exercise the
// migration path.
var schemaVersion uint32 = SchemaVersion

// Bucket names. Derived buckets are dropped and rebuilt by ResetDerived;
// kept buckets hold data that exists nowhere else.
var (
	bMeta       = []byte("meta")
	bFiles      = []byte("files")
	bPages      = []byte("pages")
	bPagePath   = []byte("page_path")
	bPageID     = []byte("page_id")
	bNames      = []byte("names")
	bDangling   = []byte("dangling")
	bAdj        = []byte("adj")
	bGraphDirty = []byte("graph_dirty")
	bLinksDirty = []byte("links_dirty")
	bTitles     = []byte("titles")
	bByType     = []byte("by_type")
	bByTag      = []byte("by_tag")
	bCites      = []byte("cites")
)

// derivedBuckets lists every bucket rebuilt from the files. Packages that
// add derived buckets register them with RegisterDerived in an init func.
var derivedBuckets = [][]byte{
	bFiles, bPages, bPagePath, bPageID, bNames, bDangling,
	bAdj, bGraphDirty, bLinksDirty, bTitles, bByType, bByTag, bCites,
}

// keptBuckets lists buckets that reindex never touches.
var keptBuckets = [][]byte{bMeta}

// RegisterDerived adds bucket names to the derived set (created on open,
// dropped by ResetDerived). Call it from an init function in this package.
func registerDerived(names ...string) {
	for _, n := range names {
		derivedBuckets = append(derivedBuckets, []byte(n))
	}
}

// registerKept adds bucket names that are created on open and never
// dropped by ResetDerived (the review queue).
func registerKept(names ...string) {
	for _, n := range names {
		keptBuckets = append(keptBuckets, []byte(n))
	}
}

// migrations[i] upgrades a store from schema version i+1 to i+2. A
// migration of derived data may simply call tx.ResetDerived: the next scan
// rebuilds it from the files.
var migrations = []func(tx *Tx) error{
	// 1→2: backlinks folded into graph edges, page records re-encoded,
	// reserved pages without links: rebuild the derived data (the next
	// scan does it; the review queue is kept)
	func(tx *Tx) error { return tx.ResetDerived() },
	// 2→3: search postings blocks carry their doc range and score bounds:
	// rebuild the derived data
	func(tx *Tx) error { return tx.ResetDerived() },
}

// Options tune Open.
type Options struct {
	// ReadOnly opens with a shared lock; writes fail.
	ReadOnly bool
	// Timeout bounds the wait for the file lock (default 2s). Open never
	// blocks longer; on timeout it returns an unavailable error naming the
	// process that holds the store.
	Timeout time.Duration
	// Holder describes this process in the holder file while the store is
	// open read-write, e.g. "synapse serve --mcp-stdio".
	Holder string
}

// Store is an open store.
type Store struct {
	// db is the bbolt file, swapped when Rebuild replaces a damaged one
	db       atomic.Pointer[bolt.DB]
	path     string
	opts     Options
	readOnly atomic.Bool
	commits  atomic.Uint64
	// rebuild serializes Rebuild
	rebuild sync.Mutex
	// healed is set when the file was found damaged and replaced
	healed *Healed
	// stageTerms are the terms this Store staged (searchstage.go), nil
	// when it staged none since the stage was last empty; used inside
	// write transactions only
	stageTerms map[string]uint32
	staging    atomic.Int32 // StageSearch calls not yet done
	// journal receives the review events of each write transaction
	// before it commits (reviews_journal.go)
	journal ReviewJournal
	// flushBytes, when set (by a test), replaces stageFlushBytes
	flushBytes int
}

// HolderInfo describes the process holding a store open for writing.
type HolderInfo struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// HolderPath returns the path of the holder file for the store at dbPath.
func HolderPath(dbPath string) string { return dbPath + ".holder" }

// ReadHolder returns the recorded holder of the store at dbPath, if any.
func ReadHolder(dbPath string) (HolderInfo, bool) {
	var h HolderInfo
	data, err := readHolderFile(HolderPath(dbPath))
	if err != nil || json.Unmarshal(data, &h) != nil || h.PID == 0 {
		return h, false
	}
	return h, true
}

// Open opens (creating if needed) the store at path, runs pending
// migrations and creates missing buckets. A held lock yields an
// errs.Unavailable error naming the holder after at most opts.Timeout.
//
// A damaged file (see damage.go) opened read-write is healed: its review
// queue is salvaged, it is moved aside and a new store is created in its
// place (Healed says so; the caller restores the queue and scans). Opened
// read-only, it is a damage error (DamageReason), which a read-write open
// heals.
func Open(path string, opts Options) (*Store, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Second
	}
	if err := checkStoreFile(path); err != nil {
		return nil, err
	}
	if opts.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return nil, permissionDenied(path, err)
			}
			if reason := checkFile(path); reason != "" {
				return nil, damagedError(path, reason)
			}
			return nil, errs.Wrap(errs.Unavailable, err, "store %s does not exist yet", path)
		}
	}
	if reason := checkFile(path); reason != "" {
		return healOpen(path, opts, reason, nil)
	}
	db, err := openDB(path, opts)
	if err != nil {
		if reason, ok := DamageReason(err); ok {
			return healOpen(path, opts, reason, nil)
		}
		return nil, err
	}
	s := &Store{path: path, opts: opts}
	s.db.Store(db)
	s.readOnly.Store(opts.ReadOnly)
	if err := s.check(); err != nil {
		if reason, ok := DamageReason(err); ok {
			return healOpen(path, opts, reason, db)
		}
		closeDB(db)
		return nil, err
	}
	if err := s.ready(); err != nil {
		closeDB(db)
		if reason, ok := DamageReason(err); ok {
			return healOpen(path, opts, reason, nil)
		}
		return nil, err
	}
	return s, nil
}

// openDB opens the bbolt file with synapse's options.
func openDB(path string, opts Options) (*bolt.DB, error) {
	db, err := openBolt(path, &bolt.Options{
		Timeout:  opts.Timeout,
		ReadOnly: opts.ReadOnly,
		// the freelist is written with every commit (a few pages: the
		// store keeps few free pages), so a read-write open reads it from
		// its page; without it bbolt rebuilds it by walking every page of
		// the store, ~0.2 s at 100,000 pages on every CLI write
		NoFreelistSync: false,
		// address space only: growing the file then never remaps it
		InitialMmapSize: 1 << 30,
		FreelistType:    bolt.FreelistMapType,
	})
	if err != nil {
		if _, ok := DamageReason(err); ok {
			return nil, err
		}
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, lockedError(path)
		}
		if errors.Is(err, fs.ErrPermission) {
			return nil, permissionDenied(path, err)
		}
		if readOnlyFS(err) {
			return nil, errs.Wrap(errs.Unavailable, ErrReadOnlyFS, "the vault's store %s cannot be written: the file system holding it is read-only", path)
		}
		return nil, errs.Wrap(errs.Internal, err, "open store %s: %v", path, err)
	}
	return db, nil
}

// ErrReadOnlyFS is the cause of the unavailable error of a read-write
// open on a read-only file system (a read-only mount): a read can open
// the store read-only instead.
var ErrReadOnlyFS = errors.New("read-only file system")

// closeDB closes a bbolt file, whatever state a damaged one is in.
func closeDB(db *bolt.DB) {
	_ = guard("", func() error { return db.Close() })
}

// ready finishes an open: buckets created and the schema migrated when
// needed, the holder file written.
func (s *Store) ready() error {
	if s.ReadOnly() {
		return s.View(func(tx *Tx) error { return tx.checkSchema() })
	}
	// a store that needs nothing (every bucket there, the schema current)
	// is not written: a write transaction commits even when it changes
	// nothing (two fdatasyncs and the freelist), and every command that
	// opens the store read-write would pay it
	var ready bool
	if err := s.View(func(tx *Tx) error {
		var err error
		ready, err = tx.ready()
		return err
	}); err != nil {
		return err
	}
	if !ready {
		if err := s.Update(func(tx *Tx) error { return tx.prepare() }); err != nil {
			return err
		}
	}
	if s.opts.Holder != "" {
		writeHolderFile(HolderPath(s.path), HolderInfo{PID: os.Getpid(), Command: s.opts.Holder, Since: time.Now().UTC().Truncate(time.Second)})
	}
	return nil
}

// healOpen heals the damaged store at path on a read-write open: db is
// the damaged file when bbolt could open it (its queue is read from it),
// nil otherwise.
func healOpen(path string, opts Options, reason string, db *bolt.DB) (*Store, error) {
	if opts.ReadOnly {
		if db != nil {
			closeDB(db)
		}
		return nil, damagedError(path, reason)
	}
	s := &Store{path: path, opts: opts}
	if err := s.replace(reason, db); err != nil {
		return nil, err
	}
	return s, nil
}

// Rebuild replaces the store's file, found damaged while in use (reason,
// from DamageReason), with a new one, as Open does with a file it finds
// damaged: the review queue is salvaged, the file moved aside. The Store
// stays the same value, now read-write; Healed describes what happened.
// It fails (unavailable) when another process holds the file.
func (s *Store) Rebuild(reason string) error {
	s.rebuild.Lock()
	defer s.rebuild.Unlock()
	old := s.db.Swap(nil)
	if old != nil && !s.ReadOnly() {
		// the write lock is ours: salvage, close, move
		return s.replace(reason, old)
	}
	if old != nil {
		closeDB(old)
	}
	// a read-only store: the damaged file is taken read-write first, so
	// that no other process is using it when it is moved
	opts := s.opts
	opts.ReadOnly = false
	s.opts = opts
	db, err := openBolt(s.path, &bolt.Options{Timeout: opts.Timeout, InitialMmapSize: 1 << 30, FreelistType: bolt.FreelistMapType})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return errs.Wrap(errs.Unavailable, ErrLocked, "%s; and another process holds it: stop it, then run `synapse reindex`", errs.Message(damagedError(s.path, reason)))
		}
		db = nil // damaged past opening: nothing holds it
	}
	return s.replace(reason, db)
}

// replace salvages the review queue of the damaged file (from db when
// open, else from the file), moves the file aside and opens a new store
// in its place.
func (s *Store) replace(reason string, db *bolt.DB) error {
	var sv *Salvage
	if db != nil {
		sv = salvageReviews(db, s.path)
		closeDB(db)
	} else {
		sv = salvageFile(s.path)
	}
	now := time.Now()
	moved, err := moveAside(s.path, now)
	if err != nil {
		return err
	}
	opts := s.opts
	opts.ReadOnly = false
	fresh, err := openDB(s.path, opts)
	if err != nil {
		return err
	}
	s.opts = opts
	s.readOnly.Store(false)
	s.db.Store(fresh)
	s.healed = &Healed{Reason: reason, MovedTo: moved, At: now.UTC(), Reviews: sv}
	if err := s.ready(); err != nil {
		closeDB(fresh)
		s.db.Store(nil)
		return err
	}
	return nil
}

// permissionDenied is the error for a store this user may not open.
func permissionDenied(path string, err error) error {
	return errs.Wrap(errs.Forbidden, err, "the vault's store %s cannot be opened: permission denied (it belongs to the vault's owner; run synapse as that user)", path)
}

// ErrLocked is the cause of the unavailable error Open returns when another
// process holds the store's lock past the timeout (errors.Is finds it), so
// a caller can tell a busy store from a broken one and try again.
var ErrLocked = errors.New("store locked by another process")

// lockedError names the process holding the lock, when it is known.
func lockedError(path string) error {
	if h, ok := ReadHolder(path); ok && processAlive(h.PID) {
		return errs.Wrap(errs.Unavailable, ErrLocked, "the vault's store is held by pid %d (%s, since %s); stop it or wait for it to finish",
			h.PID, h.Command, h.Since.Local().Format(time.DateTime))
	}
	return errs.Wrap(errs.Unavailable, ErrLocked, "the vault's store (%s) is locked by another synapse process; stop it or wait for it to finish", path)
}

// Path returns the file path of the store.
func (s *Store) Path() string { return s.path }

// ReadOnly reports whether the store was opened read-only.
func (s *Store) ReadOnly() bool { return s.readOnly.Load() }

// Close closes the store and removes its holder file.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	db := s.db.Swap(nil)
	if db == nil {
		return nil
	}
	if !s.ReadOnly() {
		if h, ok := ReadHolder(s.path); ok && h.PID == os.Getpid() {
			_ = os.Remove(HolderPath(s.path))
		}
	}
	return guard(s.path, db.Close)
}

// SizeBytes returns the apparent size of the store file (its length).
func (s *Store) SizeBytes() int64 {
	st, err := os.Stat(s.path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// DiskBytes returns the space the store's file takes on disk: its
// allocated blocks, which bbolt's preallocated, sparse file keeps well
// below SizeBytes (a 1.2 MB store in a 16 MiB file). Where the file
// system does not say, it is SizeBytes.
func (s *Store) DiskBytes() int64 {
	st, err := os.Stat(s.path)
	if err != nil {
		return 0
	}
	if n, ok := allocatedBytes(st); ok {
		return n
	}
	return st.Size()
}

// ReleaseMapped drops the store's memory-mapped pages from this process's
// resident memory (they stay in the page cache). A long bulk write (a
// reindex) calls it between transactions: otherwise every page it ever
// touched counts in its RSS, which then grows with the store (~470 MB at
// 100,000 pages). A no-op where unsupported.
func (s *Store) ReleaseMapped() {
	if s == nil || s.db.Load() == nil {
		return
	}
	s.releaseMapped()
}

// ReleaseMapped is Store.ReleaseMapped from within a transaction (one that
// reads much of the store: a reset of the derived buckets, a stage flush's
// drop of each run): the mapped pages it read leave the resident set and
// are mapped again from the page cache when read again. A no-op for a
// transaction of no Store (tests).
func (tx *Tx) ReleaseMapped() {
	if tx.s != nil {
		tx.s.ReleaseMapped()
	}
}

// Tx is a read or read-write transaction with typed accessors.
type Tx struct {
	tx  *bolt.Tx
	s   *Store    // for ReleaseMapped during long transactions; nil in tests
	deg *degTable // the degree table as this transaction sees it (degrees.go)
	rev reviewTx  // review events to journal before commit (reviews_journal.go)
}

// Commits returns the number of the last write transaction committed
// (bbolt's transaction id: it grows with every commit of this file).
func (tx *Tx) Commits() uint64 { return uint64(tx.tx.ID()) }

// errClosed is the error of a transaction on a closed store (or one
// whose damaged file could not be replaced).
func (s *Store) errClosed() error {
	return errs.E(errs.Unavailable, "the vault's store %s is not open", s.path)
}

// View runs fn in a read-only transaction. A damaged file found on the
// way is a damage error (DamageReason), whatever fn was doing.
func (s *Store) View(fn func(tx *Tx) error) error {
	db := s.db.Load()
	if db == nil {
		return s.errClosed()
	}
	return guard(s.path, func() error {
		return db.View(func(btx *bolt.Tx) error { return fn(&Tx{tx: btx, s: s}) })
	})
}

// Update runs fn in a read-write transaction, committed when fn returns
// nil and rolled back otherwise. The review events fn journaled are
// appended to the review journal before the commit (reviews_journal.go);
// when that fails the transaction rolls back with its error. A damaged
// file found on the way (in fn or in the commit) is a damage error, and
// nothing is committed.
func (s *Store) Update(fn func(tx *Tx) error) error {
	if s.ReadOnly() {
		return errs.E(errs.Internal, "store opened read-only")
	}
	db := s.db.Load()
	if db == nil {
		return s.errClosed()
	}
	err := guard(s.path, func() error {
		return db.Update(func(btx *bolt.Tx) error {
			tx := newTx(btx)
			tx.s = s
			if err := fn(tx); err != nil {
				return err
			}
			return tx.flushReviews()
		})
	})
	if err == nil {
		s.commits.Add(1)
	}
	return err
}

// Commits is the number of write transactions this Store committed (each
// costs two fdatasyncs: what a command's fixed cost is made of; tests
// count them).
func (s *Store) Commits() uint64 { return s.commits.Load() }

// sequentialBuckets are written mostly in key order (doc numbers and paths
// only grow within a scan; a folder's pages, one type, come in file-name
// order, which is their titles' order for synapse-named files), so their
// pages are filled further before a split than bbolt's default half
// (page_path, by_type and catalog were half-empty at 100,000 pages).
var sequentialBuckets = [][]byte{bPages, bFiles, bAdj, bSearchFwd, bSearchNorms, bSearchStage, bSearchStageTerms, bPagePath, bByType, bCatalog}

func newTx(btx *bolt.Tx) *Tx {
	if btx.Writable() {
		for _, name := range sequentialBuckets {
			if b := btx.Bucket(name); b != nil {
				b.FillPercent = 0.9
			}
		}
	}
	return &Tx{tx: btx}
}

// Writable reports whether tx may write.
func (tx *Tx) Writable() bool { return tx.tx.Writable() }

func (tx *Tx) b(name []byte) *bolt.Bucket { return tx.tx.Bucket(name) }

func (tx *Tx) checkSchema() error {
	m := tx.b(bMeta)
	if m == nil {
		return errs.E(errs.Unavailable, "store is not initialised yet")
	}
	v := getU32(m.Get([]byte("schema")))
	if v != schemaVersion {
		return errs.E(errs.Unavailable, "store schema is version %d, this synapse uses %d", v, schemaVersion)
	}
	return nil
}

// ready reports whether prepare has nothing to do: every bucket exists
// and the schema is this synapse's. A newer schema is the error prepare
// gives.
func (tx *Tx) ready() (bool, error) {
	for _, name := range append(append([][]byte{}, keptBuckets...), derivedBuckets...) {
		if tx.tx.Bucket(name) == nil {
			return false, nil
		}
	}
	v := getU32(tx.tx.Bucket(bMeta).Get([]byte("schema")))
	if v > schemaVersion {
		return false, errs.E(errs.Unavailable, "store schema version %d is newer than this synapse (%d); upgrade synapse", v, schemaVersion)
	}
	return v == schemaVersion, nil
}

// prepare creates buckets and migrates to schemaVersion.
func (tx *Tx) prepare() error {
	for _, name := range append(append([][]byte{}, keptBuckets...), derivedBuckets...) {
		if _, err := tx.tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	m := tx.b(bMeta)
	v := getU32(m.Get([]byte("schema")))
	if v == 0 {
		return m.Put([]byte("schema"), u32(schemaVersion))
	}
	if v > schemaVersion {
		return errs.E(errs.Unavailable, "store schema version %d is newer than this synapse (%d); upgrade synapse", v, schemaVersion)
	}
	for ; v < schemaVersion; v++ {
		if err := migrations[v-1](tx); err != nil {
			return fmt.Errorf("migrate store %d→%d: %w", v, v+1, err)
		}
		if err := m.Put([]byte("schema"), u32(v+1)); err != nil {
			return err
		}
	}
	return nil
}

// ResetDerived drops every bucket but the kept ones (so buckets of an
// older layout go too), recreates the derived buckets empty and clears the
// scan marks. The review queue and other kept buckets are untouched.
func (tx *Tx) ResetDerived() error {
	tx.forgetStagedTerms()
	kept := map[string]bool{}
	for _, name := range keptBuckets {
		kept[string(name)] = true
	}
	var drop [][]byte
	if err := tx.tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
		if !kept[string(name)] {
			drop = append(drop, append([]byte(nil), name...))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, name := range drop {
		if err := tx.tx.DeleteBucket(name); err != nil {
			return fmt.Errorf("drop %s: %w", name, err)
		}
		// dropping a bucket reads every page of it to free them; those
		// mapped pages need not stay resident (a reindex of a 100k-page
		// store would otherwise map all ~470 MB of it at once)
		tx.ReleaseMapped()
	}
	for _, name := range derivedBuckets {
		b, err := tx.tx.CreateBucket(name)
		if err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
		for _, seq := range sequentialBuckets {
			if string(seq) == string(name) {
				b.FillPercent = 0.9
			}
		}
	}
	m := tx.b(bMeta)
	for _, k := range []string{"next_doc", "pages", "links", "scanned"} {
		if err := m.Delete([]byte(k)); err != nil {
			return err
		}
	}
	tx.deg = nil // the degree table went with the derived buckets
	return nil
}

// Meta returns a raw meta value (nil when absent).
func (tx *Tx) Meta(k string) []byte {
	v := tx.b(bMeta).Get([]byte(k))
	if v == nil {
		return nil
	}
	return append([]byte(nil), v...)
}

// DeleteMeta removes a meta value.
func (tx *Tx) DeleteMeta(k string) error { return tx.b(bMeta).Delete([]byte(k)) }

// SetMeta stores a raw meta value.
func (tx *Tx) SetMeta(k string, v []byte) error { return tx.b(bMeta).Put([]byte(k), v) }

// MetaU32 returns a meta counter.
func (tx *Tx) MetaU32(k string) uint32 { return getU32(tx.b(bMeta).Get([]byte(k))) }

// AddMetaU32 adds delta to a meta counter (never below zero).
func (tx *Tx) AddMetaU32(k string, delta int) error {
	v := int64(tx.MetaU32(k)) + int64(delta)
	if v < 0 {
		v = 0
	}
	return tx.b(bMeta).Put([]byte(k), u32(uint32(v)))
}

// LastScan returns the time of the last completed full scan.
func (tx *Tx) LastScan() (time.Time, bool) {
	v := tx.b(bMeta).Get([]byte("scanned"))
	if v == nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(v))
	return t, err == nil
}

// SetLastScan records a completed full scan.
func (tx *Tx) SetLastScan(t time.Time) error {
	return tx.b(bMeta).Put([]byte("scanned"), []byte(t.UTC().Format(time.RFC3339Nano)))
}

// NextDoc hands out a fresh internal doc number.
func (tx *Tx) NextDoc() (uint32, error) {
	n := tx.MetaU32("next_doc") + 1
	return n, tx.b(bMeta).Put([]byte("next_doc"), u32(n))
}

func hasPrefixBytes(b []byte, p []byte) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == string(p)
}
