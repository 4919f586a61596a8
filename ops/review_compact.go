package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// Compaction, export and import of the review journal (docs/review.md).

// Automatic compaction: a journal past compactBytes that holds more than
// compactLinesPerItem lines per item is compacted by the next command that
// brings the queue in step (most of its lines are then superseded
// proposals: the compacted journal is a quarter of it or less).
var (
	compactBytes        int64 = 4 << 20 // a variable: tests lower it
	compactLinesPerItem       = 4
)

// CompactReviewsIn is the (empty) input of review compact.
type CompactReviewsIn struct{}

// CompactReviewsOut says what a compaction did.
type CompactReviewsOut struct {
	Items       int   `json:"items"` // items in the queue, one line each now
	LinesBefore int64 `json:"lines_before"`
	BytesBefore int64 `json:"bytes_before"`
	Lines       int64 `json:"lines"`
	Bytes       int64 `json:"bytes"`
	// Dropped counts lines that did not parse: they are not in the
	// compacted journal but kept in DroppedTo (under .synapse/).
	Dropped   int    `json:"dropped"`
	DroppedTo string `json:"dropped_to,omitempty"`
}

var opCompactReviews = register(Op{
	Name: "review.compact", Summary: "Rewrite the review journal as one line per item, keeping each item's decisions",
	CLI:    "review compact",
	Access: Write, Limits: "atomic: a crash leaves the journal before or after; lines that do not parse are moved to .synapse/",
	Examples: []Example{{`synapse review compact`, "rewrite reviews.jsonl as one line per item (also done on its own past 4 MiB)"}},
	VerbHelp: "Each item's line keeps who wrote its fields and every decision it had. The queue replayed from the compacted journal is the same (docs/review.md).",
}, func(ctx context.Context, e *Env, in *CompactReviewsIn) (*CompactReviewsOut, error) {
	if err := e.syncQueue(); err != nil {
		return nil, err
	}
	var out *CompactReviewsOut
	err := e.Store.Update(func(tx *store.Tx) error {
		var err error
		out, err = compactTx(tx, e.files(), e.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
})

// compactTx rewrites the journal as one line per item (itemLine: the
// item's fields with who wrote them, every decision it had, a live
// claim), atomically, and stores the queue it folds to. Lines of a later
// format are kept as they are (a newer synapse sharing the vault reads
// them); other unparseable lines go to a file under .synapse/ rather than
// away.
func compactTx(tx *store.Tx, l *vaultfs.FS, now time.Time) (*CompactReviewsOut, error) {
	data, err := readJournal(l)
	if err != nil {
		return nil, err
	}
	p := parseLines(data)
	f := foldEvents(p.events)
	var buf bytes.Buffer
	for _, r := range f.items {
		line, err := f.line(r, now)
		if err != nil {
			return nil, err
		}
		buf.Write(line)
	}
	// lines a newer synapse wrote stay, as they are: it reads them
	for _, line := range p.newer {
		buf.Write(line)
		buf.WriteByte('\n')
	}
	out := &CompactReviewsOut{Items: len(f.items), LinesBefore: p.lines, BytesBefore: int64(len(data)),
		Lines: int64(len(f.items) + len(p.newer)), Bytes: int64(buf.Len()), Dropped: len(p.bad)}
	if len(p.bad) > 0 {
		name := fmt.Sprintf("reviews-dropped-%d.jsonl", now.UnixNano())
		if err := writeStateFile(l.Root(), name, append(bytes.Join(p.bad, []byte("\n")), '\n')); err != nil {
			return nil, journalError(err, "keep the unparseable lines of")
		}
		out.DroppedTo = vault.StateDir + "/" + name
	}
	perm := fs.FileMode(0o644)
	if st, err := l.Stat(vault.ReviewJournal); err == nil {
		perm = st.Mode().Perm()
	}
	if err := writeAtomic(osFS{l}, l.Abs(vault.ReviewJournal), buf.Bytes(), perm, false); err != nil {
		return nil, journalError(err, "compact")
	}
	if err := storeFolded(tx, f); err != nil {
		return nil, err
	}
	m := markOf(buf.Bytes(), out.Lines)
	m.CompactedNS, m.ReplayedNS = now.UnixNano(), now.UnixNano()
	probs := &JournalProblems{BadLineNumbers: []int{}, ConflictList: []JournalConflict{}}
	f.report(probs)
	for i := range p.newer { // still lines this synapse does not read
		probs.BadLines++
		if i < maxReported {
			probs.BadLineNumbers = append(probs.BadLineNumbers, len(f.items)+i+1)
		}
	}
	if !probs.empty() {
		m.Problems = probs
	}
	return out, writeMark(tx, m)
}

// compactDue reports whether the journal is due for an automatic
// compaction.
func compactDue(tx *store.Tx) bool {
	m, have := readMark(tx)
	return have && !m.Stale && m.Size > compactBytes && m.Lines > int64(compactLinesPerItem*max(tx.ReviewCount(), 1))
}

// ---- export ----

// ExportReviewsIn is the input of review export.
type ExportReviewsIn struct {
	Status string `json:"status,omitempty" default:"all" desc:"Only items in this status: pending (open is an alias), created, skipped, dismissed, deep_researched, auto_resolved, resolved (every decided item) or all (default)"`
}

// ExportReviewsOut is the queue as journal lines, one per item (what
// review import takes): the CLI prints the lines, one a line (JSON
// Lines), --json the object.
type ExportReviewsOut struct {
	Count int               `json:"count"`
	Lines []json.RawMessage `json:"lines"`
}

var opExportReviews = register(Op{
	Name: "review.export", Summary: "Print the review queue as journal lines (one per item), for review import in another vault",
	CLI:    "review export",
	Access: Read,
	Examples: []Example{
		{`synapse review export > queue.jsonl`, "the whole queue, one JSON line per item"},
		{`synapse review export --status resolved > decided.jsonl`, "only the decided items"},
	},
}, exportReviews)

func exportReviews(ctx context.Context, e *Env, in *ExportReviewsIn) (*ExportReviewsOut, error) {
	class, err := listClass(in.Status)
	if err != nil {
		return nil, err
	}
	if err := e.syncQueue(); err != nil {
		return nil, err
	}
	out := &ExportReviewsOut{Lines: []json.RawMessage{}}
	now := e.now()
	err = e.Store.View(func(tx *store.Tx) error {
		var lerr error
		err := tx.EachReview(func(r *store.ReviewRec) bool {
			if !inClass(r, class) {
				return true
			}
			var line []byte
			if line, lerr = itemLine(r, nil, false, now); lerr == nil {
				out.Lines = append(out.Lines, json.RawMessage(bytes.TrimSuffix(line, []byte("\n"))))
			}
			return lerr == nil
		})
		if err != nil {
			return err
		}
		return lerr
	})
	if err != nil {
		return nil, err
	}
	out.Count = len(out.Lines)
	return out, nil
}

// inClass reports whether r is in a listing class (a status, resolved or
// all).
func inClass(r *store.ReviewRec, class string) bool {
	switch class {
	case store.ReviewClassAll:
		return true
	case store.ReviewClassResolved:
		return r.Terminal()
	}
	return r.Status == class
}

// ---- import ----

// ImportReviewsIn is the input of review import.
type ImportReviewsIn struct {
	Journal string `json:"journal" arg:"0" required:"true" cli:"stdin" raw:"true" desc:"Journal lines to import: what review export prints (JSON Lines, or its --json object), or another vault's reviews.jsonl"`
}

// ImportReviewsOut says what an import did.
type ImportReviewsOut struct {
	Lines    int `json:"lines"`    // lines read
	Appended int `json:"appended"` // lines added to the journal
	Added    int `json:"added"`    // items new to this vault
	// Duplicates counts lines whose events the journal holds already (an
	// import run twice adds nothing).
	Duplicates int `json:"duplicates"`
	// KeptDecided counts lines about items decided here: left out, this
	// vault's decisions stand.
	KeptDecided int   `json:"kept_decided"`
	BadLines    int   `json:"bad_lines"`
	BadLineNums []int `json:"bad_line_numbers"`
	Items       int   `json:"items"` // items in the queue after it
}

var opImportReviews = register(Op{
	Name: "review.import", Summary: "Merge journal lines from another vault into the review queue (idempotent; this vault's decisions stand)",
	CLI:    "review import",
	Access: Write, Limits: "lines about items decided here are left out; lines already in the journal are not added again",
	Examples: []Example{
		{`synapse review import decided.jsonl`, "merge another vault's export into this queue"},
		{`synapse review export --vault ../other | synapse review import -`, "from standard input"},
	},
}, importReviews)

func importReviews(ctx context.Context, e *Env, in *ImportReviewsIn) (*ImportReviewsOut, error) {
	p := parseLines(importText(in.Journal))
	if err := e.syncQueue(); err != nil {
		return nil, err
	}
	out := &ImportReviewsOut{Lines: int(p.lines), BadLines: p.probs.BadLines, BadLineNums: p.probs.BadLineNumbers}
	l := e.files()
	err := e.Store.Update(func(tx *store.Tx) error {
		data, err := readJournal(l)
		if err != nil {
			return err
		}
		here := foldEvents(parseLines(data).events)
		add, err := importLines(here, p, out)
		if err != nil || len(add) == 0 {
			return err
		}
		end, err := readEnd(l)
		if err != nil {
			return journalError(err, "read")
		}
		if err := upgradeAppend(l, end, add); err != nil {
			return err
		}
		rep, err := replayTx(tx, l, e.now())
		if err == nil {
			out.Items = rep.Items
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if out.Items == 0 {
		err = e.Store.View(func(tx *store.Tx) error { out.Items = tx.ReviewCount(); return nil })
	}
	return out, err
}

// importText is the journal lines of an import: the text as given, or the
// lines of export's --json object.
func importText(s string) []byte {
	var obj ExportReviewsOut
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") && json.Unmarshal([]byte(t), &obj) == nil && obj.Lines != nil {
		var b bytes.Buffer
		for _, l := range obj.Lines {
			b.Write(l)
			b.WriteByte('\n')
		}
		return b.Bytes()
	}
	return []byte(s)
}

// importLines picks the lines of an import that this vault lacks: not
// about an item decided here, not already in the journal. An imported
// item whose id an item here has is given another id (ids stay stable
// here). It counts what it did in out.
func importLines(here *folded, p *parsedLines, out *ImportReviewsOut) ([][]byte, error) {
	taken := map[string]uint64{}
	for _, r := range here.items {
		taken[r.ID] = r.Key
	}
	newKeys := map[uint64]bool{}
	var add [][]byte
	for i, raw := range p.raw {
		evs := p.byLine[i]
		k := evs[0].Key
		if r := here.byKey[k]; r != nil && r.Terminal() {
			out.KeptDecided++
			continue
		}
		fresh := false
		for _, ev := range evs {
			if !here.seen[k][ev.identity()] {
				fresh = true
			}
		}
		if !fresh {
			out.Duplicates++
			continue
		}
		if owner, ok := taken[evs[0].ID]; ok && owner != k {
			var err error
			if raw, err = withID(raw, ""); err != nil {
				return nil, err
			}
		} else {
			taken[evs[0].ID] = k
		}
		if here.byKey[k] == nil && !newKeys[k] {
			newKeys[k] = true
			out.Added++
		}
		add = append(add, append(append([]byte(nil), raw...), '\n'))
		out.Appended++
	}
	return add, nil
}

// withID rewrites a line's id (the events' identities do not include it);
// "" makes the store derive one from the key.
func withID(raw []byte, id string) ([]byte, error) {
	var l journalLine
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, err
	}
	l.ID = id
	b, err := marshalLine(&l)
	return bytes.TrimSuffix(b, []byte("\n")), err
}

// writeStateFile creates a new file in the vault's .synapse folder (which
// the vault's file layer never writes: it is synapse's own), durably. A
// .synapse that is not a folder, or a name taken, is refused.
func writeStateFile(root, name string, data []byte) error {
	dir := filepath.Join(root, vault.StateDir)
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not a folder", vault.StateDir)
	}
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
