package ops

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// logHeader starts a wiki/log.md that went missing (vault.Init writes the
// same text).
const logHeader = "# Log\n\nAppend-only record of changes made through synapse.\n"

// LogEntry is the line write_page appends to wiki/log.md.
func LogEntry(now time.Time, title string) string {
	return fmt.Sprintf("## [%s] write | %s\n", now.Format("2006-01-02"), oneLine(title))
}

// oneLine replaces control characters (a hand-written title may hold a
// newline) with spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// logAppend is an append to wiki/log.md, remembered so that the store's
// record of log.md can be brought in step without re-parsing the file.
type logAppend struct {
	created bool         // log.md did not exist: the scanner indexes it
	plain   bool         // the appended file is exactly what was read back (the store keeps no links or tags for log.md, so an entry changes no stored field)
	before  os.FileInfo  // log.md before the append
	synced  func() error // waits for the append's fsync (nil: durable already)
	size    int64        // after the append
	mtimeNS int64
	sum     [32]byte
}

// maxReservedRead bounds the reads of log.md and index.md that keep the
// store's record of them current: a bigger file is left to the scanner.
const maxReservedRead = 256 << 20

// appendLog appends the write's entry to wiki/log.md, separated from what
// is there by a blank line, in one write followed by fsync (a rewrite of a
// growing log on every write would cost O(log)). A missing log.md is
// created atomically. Everything goes through the vault's file layer: a
// log.md that is a symlink, a named pipe or another special file is
// refused (a vaultfs.Refusal), never opened, waited on or written through.
func appendLog(v *vault.Vault, now time.Time, title string) (*logAppend, error) {
	abs := v.Abs(vault.LogPage)
	l := vaultfs.For(v.Root)
	entry := LogEntry(now, title)
	la := &logAppend{plain: true}
	if err := l.CheckWrite(vault.LogPage); err != nil {
		return nil, err
	}
	before, err := l.Stat(vault.LogPage)
	if errors.Is(err, fs.ErrNotExist) {
		err = writeAtomic(abs, []byte(logHeader+"\n"+entry), 0o644, true)
		if err == nil {
			la.created = true
			return la, nil
		}
		if !errors.Is(err, errExists) {
			return nil, err
		}
		before, err = l.Stat(vault.LogPage) // created meanwhile: append to it
	}
	if err != nil {
		return nil, err
	}
	la.before = before
	sep, err := separator(l, before.Size())
	if err != nil {
		return nil, err
	}
	wait, err := appendSyncing(abs, []byte(sep+entry))
	if err != nil {
		return nil, err
	}
	la.synced = wait
	// from here on the caller waits for the fsync (la.wait)
	// hash the whole log for the store record (read, then check that the
	// stat did not move meanwhile)
	data, _, err := l.ReadFile(context.Background(), vault.LogPage, maxReservedRead)
	if rf, ok := vaultfs.AsRefusal(err); ok && rf.Reason == vaultfs.TooLarge {
		la.plain = false // too big to hash here: the scanner looks
		return la, nil
	}
	if err != nil {
		return nil, errors.Join(err, la.wait())
	}
	after, err := l.Stat(vault.LogPage)
	if err != nil {
		return nil, errors.Join(err, la.wait())
	}
	if after.Size() != int64(len(data)) {
		la.plain = false // changed under us: let the scanner look
	}
	la.size, la.mtimeNS, la.sum = after.Size(), after.ModTime().UnixNano(), sha256.Sum256(data)
	return la, nil
}

// wait waits for the append's fsync.
func (la *logAppend) wait() error {
	if la == nil || la.synced == nil {
		return nil
	}
	return la.synced()
}

// separator is what goes before an entry so that it starts after a blank
// line.
func separator(l *vaultfs.FS, size int64) (string, error) {
	if size == 0 {
		return "", nil
	}
	f, _, err := l.Open(vault.LogPage)
	if err != nil {
		return "", err
	}
	defer f.Close()
	n := min(size, 2)
	tail := make([]byte, n)
	if _, err := f.ReadAt(tail, size-n); err != nil {
		return "", err
	}
	switch {
	case tail[n-1] != '\n':
		return "\n\n", nil
	case n == 2 && tail[0] == '\n':
		return "", nil
	}
	return "\n", nil
}

// fastForward updates the store's records of log.md to the appended file
// when they described the file before the append: an entry without links
// or tags changes only its size, mtime and hash. It reports false when the
// scanner must look at the file instead.
func (la *logAppend) fastForward(tx *store.Tx) (bool, error) {
	if la.created || !la.plain || la.before == nil {
		return false, nil
	}
	f, ok, err := tx.File(vault.LogPage)
	if err != nil || !ok {
		return false, err
	}
	if f.Size != la.before.Size() || f.MtimeNS != la.before.ModTime().UnixNano() || f.Kind != store.KindPage {
		return false, nil // the store was behind the file already
	}
	return fastForwardFile(tx, vault.LogPage, f, la.size, la.mtimeNS, la.sum)
}

// fastForwardFile stores a new size, mtime and hash for a reserved page
// whose parsed fields are otherwise unchanged (the store keeps no links or
// tags for reserved pages), the way the scanner would after re-reading it.
func fastForwardFile(tx *store.Tx, p string, f store.FileRec, size, mtimeNS int64, sum [32]byte) (bool, error) {
	doc := tx.DocByPath(p)
	if doc == 0 || doc != f.Doc {
		return false, nil
	}
	old, err := tx.Page(doc)
	if err != nil || old == nil || !old.Reserved {
		return false, err
	}
	rec := *old
	rec.Size, rec.MtimeNS, rec.ChangedNS = size, mtimeNS, mtimeNS
	rec.SHA256 = fmt.Sprintf("%x", sum)
	if err := tx.PutPage(&rec, old); err != nil {
		return false, err
	}
	f.Size, f.MtimeNS, f.SHA256, f.LastChanged = size, mtimeNS, sum, mtimeNS
	return true, tx.PutFile(p, f)
}
