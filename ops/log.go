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
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// logHeader starts a wiki/log.md that went missing (vault.Init writes the
// same text).
const logHeader = "# Log\n\nAppend-only record of changes made through synapse.\n"

// What a wiki/log.md entry records: its heading names the kind and the
// title, `## [YYYY-MM-DD] created | Title`, so `grep '] created |'` lists the
// pages created; the lines under it (each "- key: value") say what the
// heading cannot: the sources a write cites, the writer's own note, where a
// page moved, a review decision. docs/pages.md describes the format.

// LogKind is the kind of change a log entry records.
type LogKind string

// Log kinds. A page write is created or updated (write_page decides);
// moved and restored are given by the operation that writes (WritePageIn
// Kind); a review decision is "review " and the item's new status.
const (
	LogCreated  LogKind = "created"
	LogUpdated  LogKind = "updated"
	LogMoved    LogKind = "moved"
	LogRestored LogKind = "restored"
)

// logReviewKind is the kind of a review decision's entry.
func logReviewKind(status string) LogKind { return LogKind("review " + status) }

// manualDecider reports whether by (an item's decided_by) is a person or
// an agent deciding by hand, not a producer's rule.
func manualDecider(by string) bool { return by == OriginUser || by == OriginAgent }

// maxLogNote bounds the writer's note in an entry (one line).
const maxLogNote = 500

// maxLogItems bounds the items one detail line lists (sources, review
// items); the rest are counted.
const maxLogItems = 10

// logRecord is one entry of wiki/log.md.
type logRecord struct {
	kind  LogKind
	title string
	// lines are the entry's details, each "key: value" (written "- key: value")
	lines []string
}

// detail adds a "key: value" line when value is not empty.
func (r *logRecord) detail(key, value string) {
	if value = strings.TrimSpace(oneLine(value)); value != "" {
		r.lines = append(r.lines, key+": "+value)
	}
}

// list adds a "key: a, b, c" line naming at most maxLogItems items.
func (r *logRecord) list(key string, items []string) {
	if len(items) == 0 {
		return
	}
	shown := items[:min(len(items), maxLogItems)]
	v := strings.Join(shown, ", ")
	if n := len(items) - len(shown); n > 0 {
		v += fmt.Sprintf(" and %d more", n)
	}
	r.detail(key, v)
}

// text renders the entry: the heading line, then its detail lines.
func (r logRecord) text(now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## [%s] %s | %s\n", now.Format("2006-01-02"), r.kind, oneLine(r.title))
	for _, l := range r.lines {
		b.WriteString("- " + l + "\n")
	}
	return b.String()
}

// checkLogNote checks the writer's note for a log entry: one line of text.
func checkLogNote(note string) (string, error) { return checkNote("log", note) }

// checkNote checks a note given as param (log, note): one line of text,
// at most maxLogNote characters, trimmed.
func checkNote(param, note string) (string, error) {
	note = strings.TrimSpace(note)
	if strings.ContainsAny(note, "\r\n") {
		return "", errs.E(errs.Invalid, "%s is one line; it was given %d lines", errs.Param(param), strings.Count(note, "\n")+1)
	}
	if hasControl(note) {
		return "", errs.E(errs.Invalid, "%s contains a control character", errs.Param(param))
	}
	if n := utf8.RuneCountInString(note); n > maxLogNote {
		return "", errs.E(errs.Invalid, "%s is %d characters; the limit is %d", errs.Param(param), n, maxLogNote)
	}
	return note, nil
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
func appendLog(e *Env, now time.Time, rec logRecord) (*logAppend, error) {
	return appendLogText(e, rec.text(now), true)
}

// appendLogText appends entry to wiki/log.md, after a blank line when sep
// is set (else as it is: the rest of an entry a crash cut short).
func appendLogText(e *Env, entry string, sep bool) (*logAppend, error) {
	abs := e.Vault.Abs(vault.LogPage)
	l, fsys := e.files(), e.writeFS()
	la := &logAppend{plain: true}
	if err := l.CheckWrite(vault.LogPage); err != nil {
		return nil, err
	}
	before, err := l.Stat(vault.LogPage)
	if errors.Is(err, fs.ErrNotExist) {
		err = writeAtomic(fsys, abs, []byte(logHeader+"\n"+entry), 0o644, true)
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
	gap := ""
	if sep {
		if gap, err = separator(l, before.Size()); err != nil {
			return nil, err
		}
	}
	wait, err := appendSyncing(fsys, abs, []byte(gap+entry))
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

// writeRecord is the log entry of a page write: its kind (the caller's, else
// created or updated), the title, the sources it cites and the writer's
// note. The sources a write cites are those the page gains and those the
// call names explicitly (a --source flag, the sources field), in the
// page's order: a page written back with the sources it had does not list
// them again.
func (w *pageWrite) writeRecord(t *target, m *merged, title string) logRecord {
	rec := logRecord{kind: w.c.kind, title: title}
	if rec.kind == "" {
		rec.kind = LogUpdated
		if t.rec == nil {
			rec.kind = LogCreated
		}
	}
	had := map[string]bool{}
	for _, s := range t.fm.SourceEntries("sources") {
		had[sourceIdentity(s)] = true
	}
	named := map[string]bool{}
	for _, p := range w.c.parts["sources"] {
		if ss, ok := p.value.([]string); ok && p.field {
			for _, s := range ss {
				named[sourceIdentity(s)] = true
			}
		}
	}
	var cited []string
	if !m.keepFM {
		for _, s := range m.fm.SourceEntries("sources") {
			if id := sourceIdentity(s); !had[id] || named[id] {
				cited = append(cited, s)
			}
		}
	}
	rec.list("sources", cited)
	if w.restoreFrom > 0 {
		rec.detail("from", fmt.Sprintf("revision %d", w.restoreFrom))
	}
	rec.detail("note", w.c.logNote)
	return rec
}

// logEvent appends an entry that no page write carries (a move, a review
// decision) to wiki/log.md, waits for it to be durable and brings the
// store's record of log.md in step (re-indexing it when the record was
// behind the file already).
func logEvent(ctx context.Context, e *Env, now time.Time, rec logRecord) error {
	return logText(ctx, e, rec.text(now), true)
}

// logText is logEvent of an entry's text (sep: see appendLogText).
func logText(ctx context.Context, e *Env, entry string, sep bool) error {
	la, err := appendLogText(e, entry, sep)
	if err != nil {
		return err
	}
	if err := la.wait(); err != nil {
		return err
	}
	ok := false
	if err := e.Store.Update(func(tx *store.Tx) error {
		var err error
		ok, err = la.fastForward(tx)
		return err
	}); err != nil {
		return err
	}
	if !ok {
		_, err = e.Index.Scan(ctx, index.ScanOptions{Paths: []string{vault.LogPage}})
	}
	return err
}

// checkLogWritable refuses an operation up front when log.md cannot be
// appended to (a named pipe or a symlink there), before it decides or
// writes anything.
func checkLogWritable(v *vault.Vault) error {
	if err := v.Files().CheckWrite(vault.LogPage); err != nil {
		return fileError(err, "cannot log to %s: %v; replace it with a regular file (or remove it: synapse creates a new one)", vault.LogPage, err)
	}
	return nil
}

// logDecisions logs review decisions just made: one entry for one item
// (its title, id, type and resolution), one entry for a bulk decision
// naming its items. A failure says the decisions stand.
func logDecisions(ctx context.Context, e *Env, items []ReviewItem) error {
	if len(items) == 0 {
		return nil
	}
	rec := logRecord{kind: logReviewKind(items[0].Status)}
	if by := items[0].DecidedBy; items[0].Status == StatusAutoResolved && manualDecider(by) {
		// marked resolved by hand: the status is the automatic one's,
		// the entry says who
		rec.kind = LogKind("review resolved by " + by)
	}
	if len(items) == 1 {
		it := items[0]
		rec.title = it.Title
		rec.detail("item", it.ID+" ("+it.Type+")")
		rec.detail("resolution", it.Resolution)
	} else {
		rec.title = fmt.Sprintf("%d items", len(items))
		names := make([]string, len(items))
		for i, it := range items {
			names[i] = it.Title + " (" + it.ID + ")"
		}
		rec.list("items", names)
	}
	rec.detail("note", items[0].Note)
	if err := logEvent(ctx, e, e.now(), rec); err != nil {
		return errs.Wrap(errs.Internal, err, "the review decision is recorded (%s), but appending it to %s failed: %s", rec.title, vault.LogPage, errs.Raw(err))
	}
	return nil
}
