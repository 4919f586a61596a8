package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"io/fs"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// The review journal's file (docs/review.md): reviews.jsonl at the top of
// the vault, beside schema.md, where git, sync tools and backups carry it.
// Lines are only ever appended to it, each change to the queue before the
// command that makes it answers (fsync'd); a compaction replaces it
// atomically. Only a process holding the store's write lock writes it
// (bbolt's exclusive file lock), so appends of two synapse processes never
// interleave.

// tailBytes is how much of the journal's end its fingerprint hashes.
const tailBytes = 4096

// metaJournal is the meta key of the journal mark.
const metaJournal = "review_journal"

// journalMark is what the store knows of the journal it holds the queue
// of: the journal's size and a hash of its last tailBytes when they last
// matched, so that one stat and one read of the file's end tell a command
// whether the queue is the journal's.
type journalMark struct {
	Size  int64  `json:"size"`
	Tail  uint64 `json:"tail"`
	Lines int64  `json:"lines"`
	// Stale: the journal changed outside this store (a git pull, another
	// machine's sync) while a command appended to it: replay it.
	Stale       bool             `json:"stale,omitempty"`
	CompactedNS int64            `json:"compacted,omitempty"`
	ReplayedNS  int64            `json:"replayed,omitempty"`
	Problems    *JournalProblems `json:"problems,omitempty"` // what the last replay found
}

func readMark(tx *store.Tx) (journalMark, bool) {
	var m journalMark
	v := tx.Meta(metaJournal)
	if v == nil || json.Unmarshal(v, &m) != nil {
		return journalMark{}, false
	}
	return m, true
}

func writeMark(tx *store.Tx, m journalMark) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return tx.SetMeta(metaJournal, b)
}

// journalEnd is the journal file as one stat and one read of its end see
// it.
type journalEnd struct {
	exists bool
	size   int64
	tail   []byte // the last min(size, tailBytes) bytes
}

func (j journalEnd) hash() uint64 { return tailHash(j.tail) }

func tailHash(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// matches reports whether the journal is the one the mark describes. A
// store that never met a journal matches an empty or absent one.
func (j journalEnd) matches(m journalMark, have bool) bool {
	if !have {
		return j.size == 0
	}
	return !m.Stale && j.size == m.Size && (j.size == 0 || j.hash() == m.Tail)
}

// endsLine reports whether the journal's last line is complete.
func (j journalEnd) endsLine() bool {
	return j.size == 0 || (len(j.tail) > 0 && j.tail[len(j.tail)-1] == '\n')
}

// readEnd stats the journal and reads its end through the vault's file
// layer (a symlink out of the vault or a special file there is refused).
func readEnd(l *vaultfs.FS) (journalEnd, error) {
	f, st, err := l.Open(vault.ReviewJournal)
	if errors.Is(err, fs.ErrNotExist) {
		return journalEnd{}, nil
	}
	if err != nil {
		return journalEnd{}, err
	}
	defer f.Close()
	end := journalEnd{exists: true, size: st.Size()}
	n := min(end.size, tailBytes)
	end.tail = make([]byte, n)
	if _, err := f.ReadAt(end.tail, end.size-n); err != nil && !errors.Is(err, io.EOF) {
		return journalEnd{}, err
	}
	return end, nil
}

// journalError is the error of a journal that cannot be read or written.
func journalError(err error, doing string) error {
	return fileError(err, "%s the review journal %s: %v", doing, vault.ReviewJournal, err)
}

// reviewJournal appends a store's review events to its vault's journal
// (store.ReviewJournal).
type reviewJournal struct {
	files *vaultfs.FS // the vault's file layer
}

// Append writes the transaction's events at the end of the journal, then
// fsyncs it, and records the mark of the journal it leaves. An unfinished
// last line after what the store knew (an append that a crash cut short,
// never acknowledged) is cut off first; an unfinished line the store did
// not know of gets its line ended, so that it stays one bad line. When the
// journal had changed outside the store, the mark says stale: the next
// command replays it. A journal that went missing is written again whole
// from the queue as the transaction leaves it.
func (j *reviewJournal) Append(tx *store.Tx, lines [][]byte) error {
	l := j.files
	m, have := readMark(tx)
	end, err := readEnd(l)
	if err != nil {
		return journalError(err, "read")
	}
	if !end.exists {
		return j.recreate(tx, l, lines, m, have)
	}
	if !end.matches(m, have) && !end.endsLine() && have && !m.Stale {
		if end, err = cutTorn(l, end, m.Size); err != nil {
			return journalError(err, "repair")
		}
	}
	match := end.matches(m, have)
	var data bytes.Buffer
	added := int64(len(lines))
	if !end.endsLine() {
		data.WriteByte('\n') // a line we did not write stays a line of its own
	}
	for _, line := range lines {
		data.Write(line)
	}
	if err := appendDurably(l, data.Bytes()); err != nil {
		return journalError(err, "append to")
	}
	tail := append(append([]byte(nil), end.tail...), data.Bytes()...)
	m.Size, m.Tail, m.Lines, m.Stale = end.size+int64(data.Len()), tailHash(tail[max(0, len(tail)-tailBytes):]), m.Lines+added, !match
	return writeMark(tx, m)
}

// recreate writes a journal that is missing: the transaction's lines when
// the store never had a journal with anything in it, else every item of
// the queue as the transaction leaves it (compacted lines), so that the
// queue this store held is not lost with the file.
func (j *reviewJournal) recreate(tx *store.Tx, l *vaultfs.FS, lines [][]byte, m journalMark, have bool) error {
	var data bytes.Buffer
	n := int64(0)
	if have && m.Size > 0 {
		err := tx.EachReview(func(r *store.ReviewRec) bool {
			line, err := itemLine(r, nil, false, time.Now())
			if err == nil {
				data.Write(line)
				n++
			}
			return err == nil
		})
		if err != nil {
			return err
		}
	} else {
		for _, line := range lines {
			data.Write(line)
			n++
		}
	}
	if err := createJournal(l, data.Bytes()); err != nil {
		return err
	}
	b := data.Bytes()
	return writeMark(tx, journalMark{Size: int64(len(b)), Tail: tailHash(b[max(0, len(b)-tailBytes):]), Lines: n,
		CompactedNS: m.CompactedNS})
}

// createJournal writes a new journal atomically (and .gitattributes, when
// the vault has none, so that git merges the journal by keeping both
// sides' lines). A journal that appeared meanwhile is an error: nothing is
// replaced.
func createJournal(l *vaultfs.FS, data []byte) error {
	if err := writeAtomic(osFS{l}, l.Abs(vault.ReviewJournal), data, 0o644, true); err != nil {
		return journalError(err, "create")
	}
	_ = writeAtomic(osFS{l}, l.Abs(vault.GitAttributesFile), []byte(vault.GitAttributes), 0o644, true)
	return nil
}

// appendDurably appends data to the journal in one write and fsyncs it.
func appendDurably(l *vaultfs.FS, data []byte) error {
	f, err := l.OpenAppend(vault.ReviewJournal)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cutTorn truncates an unfinished last line that starts at or after known
// (the size of the journal the store matched: the line is what a crashed
// append left, never acknowledged) and returns the journal's end after
// it. An unfinished line that starts before known is left alone.
func cutTorn(l *vaultfs.FS, end journalEnd, known int64) (journalEnd, error) {
	start, err := lastLineStart(l, end)
	if err != nil || start < known {
		return end, err
	}
	f, err := l.OpenAppend(vault.ReviewJournal)
	if err != nil {
		return end, err
	}
	err = f.Truncate(start)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return end, err
	}
	return readEnd(l)
}

// lastLineStart is the offset just after the journal's last '\n' (0 when
// it has none).
func lastLineStart(l *vaultfs.FS, end journalEnd) (int64, error) {
	if i := bytes.LastIndexByte(end.tail, '\n'); i >= 0 {
		return end.size - int64(len(end.tail)) + int64(i) + 1, nil
	}
	f, _, err := l.Open(vault.ReviewJournal)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for off := end.size - int64(len(end.tail)); off > 0; {
		n := min(off, int64(len(buf)))
		off -= n
		if _, err := f.ReadAt(buf[:n], off); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return off + int64(i) + 1, nil
		}
	}
	return 0, nil
}

// maxJournalRead bounds the journal a replay reads (a compaction keeps it
// far smaller: one line per item).
const maxJournalRead = 512 << 20

// readJournal reads the whole journal (nil when there is none).
func readJournal(l *vaultfs.FS) ([]byte, error) {
	data, _, err := l.ReadFile(context.Background(), vault.ReviewJournal, maxJournalRead)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if rf, ok := vaultfs.AsRefusal(err); ok && rf.Reason == vaultfs.TooLarge {
		return nil, errs.Wrap(errs.TooLarge, err, "the review journal %s is larger than %d MiB, more than synapse reads; it grows only when compaction cannot run: split it by hand", vault.ReviewJournal, maxJournalRead>>20)
	}
	if err != nil {
		return nil, journalError(err, "read")
	}
	return data, nil
}

// markOf is the mark of a journal read whole.
func markOf(data []byte, lines int64) journalMark {
	return journalMark{Size: int64(len(data)), Tail: tailHash(data[max(0, len(data)-tailBytes):]), Lines: lines}
}

// JournalStatus describes the review journal (status).
type JournalStatus struct {
	Path  string `json:"path"`  // vault-relative
	Lines int64  `json:"lines"` // as of the last command that read or wrote it
	Bytes int64  `json:"bytes"`
	// InStep is false when the queue is behind the journal (changed since
	// by git or a sync tool, or unreadable: Error says why); the next
	// command that can write replays it.
	InStep      bool   `json:"in_step"`
	Error       string `json:"error,omitempty"`
	CompactedAt string `json:"compacted_at"` // RFC 3339; "" = never
	ReplayedAt  string `json:"replayed_at"`  // the last replay; "" = never
	// Problems is what the last replay found (lines skipped, items decided
	// twice, differently), null when nothing.
	Problems *JournalProblems `json:"problems"`
}

// journalStatus describes the journal as tx and the file see it.
func journalStatus(tx *store.Tx, l *vaultfs.FS) *JournalStatus {
	m, have := readMark(tx)
	js := &JournalStatus{Path: vault.ReviewJournal, Lines: m.Lines, Bytes: m.Size,
		CompactedAt: rfc3339(m.CompactedNS), ReplayedAt: rfc3339(m.ReplayedNS)}
	if !m.Problems.empty() {
		js.Problems = m.Problems
	}
	stale, err := queueStale(tx, l)
	js.InStep = err == nil && !stale
	if err != nil {
		js.Error = errs.Message(err)
	}
	if !have {
		js.Lines = 0
	}
	return js
}

// journalProblems is what the last replay of the journal found, nil when
// nothing (lint reports it).
func journalProblems(e *Env) *JournalProblems {
	var p *JournalProblems
	_ = e.Store.View(func(tx *store.Tx) error {
		if m, ok := readMark(tx); ok && !m.Problems.empty() {
			p = m.Problems
		}
		return nil
	})
	return p
}
