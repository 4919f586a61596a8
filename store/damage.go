package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// A damaged store (a file cut short, pages overwritten, a disk that
// flipped bits, a 0-byte file, a folder in its place) is found at open by
// cheap checks, and on use by bbolt's own panics and by memory faults on
// the mapped file (debug.SetPanicOnFault turns the SIGBUS of a read past a
// truncated file's end into a panic), recovered at View and Update. Either
// way the store is rebuilt (heal): what can be read of the review queue is
// salvaged, the damaged file is moved aside as synapse.db.damaged-<time>,
// and a new store is created for a scan of the vault's files to fill.

// ErrDamaged is the cause (errors.Is) of every error that says the store
// file is damaged.
var ErrDamaged = errors.New("the store file is damaged")

type damageError struct {
	reason string
	cause  error // bbolt's, when it gave one
}

func (e *damageError) Error() string   { return "the store file is damaged: " + e.reason }
func (e *damageError) Unwrap() []error { return []error{ErrDamaged, e.cause} }

// damagedError is the error for a damaged store at path: unavailable,
// saying how to recover.
func damagedError(path, reason string) error { return damagedBy(path, reason, nil) }

func damagedBy(path, reason string, cause error) error {
	return errs.Wrap(errs.Unavailable, &damageError{reason, cause},
		"the vault's store %s is damaged (%s); `synapse reindex` moves it aside and rebuilds it from the vault's files, keeping what can be read of the review queue", path, reason)
}

// DamageReason returns what is wrong with the store when err says it is
// damaged.
func DamageReason(err error) (string, bool) {
	var d *damageError
	if errors.As(err, &d) {
		return d.reason, true
	}
	return "", false
}

// guard runs fn with memory faults turned into panics and turns a panic
// that comes of a damaged file (bbolt's own checks, a fault on the mapped
// file, a corrupt value) into a damage error; any other panic is an
// internal error with a short message (a bug, not the file).
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		v := recover()
		if v == nil {
			if errors.Is(err, errCorrupt) {
				err = damagedError(path, "a stored value does not decode")
			}
			return
		}
		if reason, ok := fileDamage(v, debug.Stack()); ok {
			err = damagedError(path, reason)
			return
		}
		err = errs.E(errs.Internal, "internal error: %v (a bug in synapse; please report it with the command that failed)", v)
	}()
	return fn()
}

// fileDamage tells a panic the store file caused from a bug: a memory
// fault away from address zero (a read of a mapped page the file no
// longer has), or a panic raised in bbolt itself (its assertions, and the
// index errors of its unchecked page reads).
func fileDamage(v any, stack []byte) (string, bool) {
	if f, ok := v.(interface{ Addr() uintptr }); ok && f.Addr() >= 1<<16 {
		return fmt.Sprintf("a read of its pages at %#x faulted: the file is shorter than its pages say, or a page is garbled", f.Addr()), true
	}
	if raisedIn(stack, "go.etcd.io/bbolt") {
		return "bbolt: " + firstLine(fmt.Sprint(v)), true
	}
	return "", false
}

// raisedIn reports whether the innermost frame of a goroutine's stack
// under its panic, past the runtime's own frames, is in package pkg.
func raisedIn(stack []byte, pkg string) bool {
	i := bytes.Index(stack, []byte("\npanic("))
	if i < 0 {
		return false
	}
	for _, line := range strings.Split(string(stack[i+1:]), "\n")[1:] {
		if line == "" || line[0] == '\t' || strings.HasPrefix(line, "runtime.") || strings.HasPrefix(line, "panic(") {
			continue
		}
		return strings.HasPrefix(line, pkg)
	}
	return false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// openBolt opens the bbolt file with the panics and faults of a damaged
// file recovered: such a file, and one bbolt refuses as no database of its
// (bad magic, a version or checksum it does not know, too small), gives a
// damage error. A panic inside bbolt.Open leaves its descriptor open with
// the file's lock; both are released here.
func openBolt(path string, o *bolt.Options) (db *bolt.DB, err error) {
	var f *os.File
	o.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		var err error
		f, err = os.OpenFile(name, flag, perm)
		return f, err
	}
	err = guard(path, func() error {
		var err error
		db, err = bolt.Open(path, 0o600, o)
		return err
	})
	if err == nil {
		return db, nil
	}
	if _, ok := DamageReason(err); ok && db == nil && f != nil {
		// a panic in bbolt.Open: its lock is dropped and its descriptor
		// closed (the mapping it made stays, unused)
		unlock(f)
		f.Close()
	}
	for _, known := range []error{berrors.ErrInvalid, berrors.ErrVersionMismatch, berrors.ErrChecksum} {
		if errors.Is(err, known) {
			return nil, damagedBy(path, "bbolt: "+known.Error(), known)
		}
	}
	if strings.HasPrefix(err.Error(), "file size too small") {
		return nil, damagedError(path, "bbolt: "+err.Error())
	}
	return nil, err
}

// checkFile finds what is wrong with the store's file before bbolt opens
// it: "" when nothing (or when it does not exist yet). A 0-byte file is
// damage, not a new store: bbolt would make it a new, empty store, and
// the review queue it held would be gone without a word.
func checkFile(path string) string {
	st, err := os.Lstat(path)
	switch {
	case err != nil:
		return ""
	case st.IsDir():
		return "a folder is where the file should be"
	case !st.Mode().IsRegular():
		return fmt.Sprintf("it is not a regular file (%s)", st.Mode().Type())
	case st.Size() == 0:
		return "the file is empty (0 bytes)"
	}
	return ""
}

// check reads what every open can afford: the file reaches as far as its
// pages say, and the root page and the first and last leaves of every
// bucket read. A failure is the damage error.
//
// A process that opens the same file again (the vault's file monitor
// opens it for every verb it answers) reads the leaves again only when
// the file changed since it last read them whole: another file, size,
// mtime or last transaction.
func (s *Store) check() error {
	return s.View(func(tx *Tx) error {
		st, err := os.Stat(s.path)
		if err == nil && st.Size() < tx.tx.Size() {
			return damagedError(s.path, fmt.Sprintf("the file was cut short: %d bytes where its pages reach %d", st.Size(), tx.tx.Size()))
		}
		if err == nil && checked.same(s.path, st, tx.tx.ID()) {
			return nil
		}
		err = tx.tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			c := b.Cursor()
			c.First()
			c.Last()
			return nil
		})
		if err == nil && st != nil {
			checked.set(s.path, st, tx.tx.ID())
		}
		return err
	})
}

// checked is the file this process last checked whole (Store.check).
var checked checkMemo

type checkMemo struct {
	mu   sync.Mutex
	path string
	st   os.FileInfo
	txid int
}

func (m *checkMemo) same(path string, st os.FileInfo, txid int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st != nil && m.path == path && m.txid == txid && os.SameFile(m.st, st) &&
		m.st.Size() == st.Size() && m.st.ModTime().Equal(st.ModTime())
}

func (m *checkMemo) set(path string, st os.FileInfo, txid int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.path, m.st, m.txid = path, st, txid
}

// Healed describes a store rebuilt because its file was damaged.
type Healed struct {
	// Reason is what was wrong with the file.
	Reason string `json:"reason"`
	// MovedTo is where the damaged file was moved (kept for inspection).
	MovedTo string `json:"moved_to"`
	At      time.Time
	// Reviews is what could be read of the review queue it held.
	Reviews *Salvage `json:"-"`
}

// Salvage is what could be read of a damaged store's review queue.
type Salvage struct {
	Items []*ReviewRec
	// Expected is the number of items the damaged store's counters gave
	// (-1 when they could not be read).
	Expected int
	// Problem says why the queue could not be read whole ("" when it was).
	Problem string
}

// Lost reports whether items are known or likely to be missing from the
// salvage.
func (sv *Salvage) Lost() bool {
	return sv == nil || sv.Problem != "" || sv.Expected < 0 || len(sv.Items) < sv.Expected
}

// salvageReviews reads the review items of an open (damaged) bbolt file,
// as many as can be read before it fails.
func salvageReviews(db *bolt.DB, path string) *Salvage {
	sv := &Salvage{Expected: -1}
	err := guard(path, func() error {
		return db.View(func(btx *bolt.Tx) error {
			tx := &Tx{tx: btx}
			if tx.b(bReviews) == nil {
				// every store has the bucket from its first open on: a
				// damaged one without it lost it
				sv.Problem = "the review queue's bucket could not be found"
				return nil
			}
			// items are never deleted, so the queue's sequence (kept in
			// the bucket's header, apart from its pages) counts them too
			sv.Expected = int(tx.b(bReviews).Sequence())
			if tx.b(bReviewCounts) != nil {
				total := 0
				for _, byStatus := range tx.reviewCounts() {
					for _, n := range byStatus {
						total += n
					}
				}
				sv.Expected = max(sv.Expected, total)
			}
			c := tx.b(bReviews).Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if len(k) != 8 {
					continue
				}
				r, err := decodeReview(binary.BigEndian.Uint64(k), v)
				if err != nil {
					sv.Problem = fmt.Sprintf("an item does not decode (%v)", err)
					continue
				}
				sv.Items = append(sv.Items, r)
			}
			return nil
		})
	})
	if err != nil {
		sv.Problem = errs.Message(err)
	}
	return sv
}

// salvageFile opens a damaged file read-only to salvage its review queue;
// a file bbolt cannot open gives an empty salvage saying why. A file
// whose two meta pages carry a wrong magic number, version or checksum
// (the rest intact) is read through a copy with those fields repaired.
func salvageFile(path string) *Salvage {
	if checkFile(path) != "" {
		return &Salvage{Expected: -1, Problem: checkFile(path)}
	}
	db, err := openBolt(path, &bolt.Options{ReadOnly: true, Timeout: 100 * time.Millisecond})
	if err != nil {
		if db, err = openRepaired(path, err); err != nil {
			return &Salvage{Expected: -1, Problem: errs.Message(err)}
		}
	}
	defer closeDB(db)
	return salvageReviews(db, path)
}

// openRepaired opens, read-only, a copy of the file at path whose meta
// pages have their magic number, version and checksum set right, when
// bbolt refused the file for one of those (why). The copy is removed as
// soon as it is open: its mapping keeps it readable until it is closed.
func openRepaired(path string, why error) (*bolt.DB, error) {
	if !errors.Is(why, berrors.ErrInvalid) && !errors.Is(why, berrors.ErrVersionMismatch) && !errors.Is(why, berrors.ErrChecksum) {
		return nil, why
	}
	src, err := os.Open(path)
	if err != nil {
		return nil, why
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), ".salvage-*")
	if err != nil {
		return nil, why
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := io.Copy(tmp, src); err != nil {
		return nil, why
	}
	const page, metaAt = 4096, 16 // bbolt's meta follows a 16-byte page header
	for p := int64(0); p < 2; p++ {
		m := make([]byte, 64)
		if _, err := tmp.ReadAt(m, p*page+metaAt); err != nil {
			return nil, why
		}
		binary.LittleEndian.PutUint32(m[0:], 0xED0CDAED) // magic
		binary.LittleEndian.PutUint32(m[4:], 2)          // version
		h := fnv.New64a()
		h.Write(m[:56])
		binary.LittleEndian.PutUint64(m[56:], h.Sum64())
		if _, err := tmp.WriteAt(m, p*page+metaAt); err != nil {
			return nil, why
		}
	}
	db, err := openBolt(tmp.Name(), &bolt.Options{ReadOnly: true, Timeout: 100 * time.Millisecond})
	if err != nil {
		return nil, why
	}
	return db, nil
}

// moveAside renames the damaged file (or folder) at path to
// path.damaged-<UTC time> and returns the new name.
func moveAside(path string, now time.Time) (string, error) {
	base := path + ".damaged-" + now.UTC().Format("20060102T150405Z")
	to := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			break
		}
		to = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Rename(path, to); err != nil {
		return "", errs.Wrap(errs.Internal, err, "move the damaged store %s aside: %v", path, err)
	}
	return to, nil
}

// TakeHealed returns, once, what the store was rebuilt from when Open (or
// Rebuild) found its file damaged and made a new one; nil otherwise. The
// caller puts the review queue back (PutSalvagedReviews, or the review
// journal) and scans the vault to fill the rest.
func (s *Store) TakeHealed() *Healed {
	if s == nil {
		return nil
	}
	s.rebuild.Lock()
	defer s.rebuild.Unlock()
	h := s.healed
	s.healed = nil
	return h
}
