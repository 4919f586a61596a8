package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/history"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// The write path's part of the page history (docs/history.md). The order
// of a write of an existing page:
//
//  1. before the file is replaced: when the bytes on disk are not the
//     page's newest revision (the file was changed outside synapse since,
//     or synapse never wrote it), they are appended as a revision of
//     origin "file"; either way the page's pack is flushed to disk, beside
//     the flush of the page's temporary file, and the rename waits for
//     both — so the version being replaced is on disk in the history
//     before the file is, whatever an earlier write left unflushed;
//  2. the file is replaced (writeAtomic);
//  3. the new bytes are appended as the newest revision, not flushed: the
//     file holds them durably, and the next write flushes them in its
//     step 1 before it replaces them.
//
// A new page is recorded once it is indexed (its id is known then),
// likewise unflushed. A crash that loses an unflushed revision loses no
// bytes: the next write finds the file's bytes missing from the history
// and records them as in 1 (with origin file instead of synapse). A
// failure of the history never fails the write: the write stands and the
// result says what went wrong (notes).

// histWrite is the history's share of one page write.
type histWrite struct {
	page  *history.Page
	rev   int
	notes []string
}

// note records a problem of the history (never fatal to the write).
func (h *histWrite) note(format string, args ...any) {
	h.notes = append(h.notes, "history: "+fmt.Sprintf(format, args...))
}

// historyBefore opens the history of the page t is and appends its bytes
// (origin file) when they are not the newest revision: step 1 above. It
// returns what the write calls as its temporary file's flush starts: the
// start of the flush of the pack, which returns the wait for it, called
// before the rename (nil when there is nothing to flush). The page stays
// open for historyAfter.
func (w *pageWrite) historyBefore(t *target) (flushing func() (wait func())) {
	h := &w.hist
	if w.e.History == nil {
		return nil // no history (benchmarks compare without it)
	}
	p, err := w.e.History.Edit(t.rec.ID)
	if err != nil {
		h.note("%v (the replaced version of %s is not kept)", err, t.path)
		return nil
	}
	h.page = p
	for _, pr := range p.Problems {
		h.note("%s", pr)
	}
	sum := sha256.Sum256(t.old)
	if n := p.Newest(); n == nil || n.SHA256 != hex.EncodeToString(sum[:]) {
		if _, err = p.Append(history.Entry{Content: t.old, Time: t.info.ModTime(), Op: history.OpEdit,
			Origin: history.OriginFile, Path: t.path, Title: t.rec.Title}); err != nil {
			h.note("%v (the replaced version of %s is not kept)", err, t.path)
			return nil
		}
	}
	return func() func() {
		wait := p.Sync()
		return func() {
			if err := wait(); err != nil {
				h.note("%v (the replaced version of %s may not be kept)", err, t.path)
			}
		}
	}
}

// historyAfter records the bytes just written as the page's newest
// revision (step 3), opening the history of page id unless historyBefore
// did. The history is closed (pruned and accounted) before it returns.
func (w *pageWrite) historyAfter(id, p, title string, data []byte, created bool) {
	h := &w.hist
	if w.e.History == nil {
		return
	}
	if h.page == nil {
		pg, err := w.e.History.Edit(id)
		if err != nil {
			h.note("%v (this version of %s is not kept)", err, p)
			return
		}
		h.page = pg
	}
	op := w.op
	if op == "" {
		op = history.OpWrite
		if created {
			op = history.OpCreate
		}
	}
	rev, err := h.page.Append(history.Entry{Content: data, Time: w.now, Op: op, Origin: history.OriginSynapse,
		Path: p, Title: title, From: w.restoreFrom, MovedFrom: w.movedFrom, Note: w.c.logNote})
	if err != nil {
		h.note("%v (this version of %s is not kept)", err, p)
	} else {
		h.rev = rev.Rev
	}
	w.historyClose()
}

// historyClose closes the page's history if it is open.
func (w *pageWrite) historyClose() {
	h := &w.hist
	if h.page == nil {
		return
	}
	if err := h.page.Close(); err != nil {
		h.note("%v", err)
	}
	h.page = nil
}

// historyDone puts what the history did into the write's result.
func (w *pageWrite) historyDone(out *WritePageOut) {
	h := &w.hist
	w.historyClose()
	if out != nil {
		out.Revision = h.rev
		out.Notes = append(out.Notes, h.notes...)
	}
}

// recordEdits is the scanner's Indexer.OnChanged: a page changed outside
// synapse (an editor's save, git, a sync tool) that has a history gets a
// revision of origin file, so the history holds what the person wrote
// between two writes. Pages without a history are left alone (the first
// write through synapse records the file as it then is). Nothing here
// is flushed: the next write checks again before it replaces the file.
func (e *Env) recordEdits(pages []index.ChangedPage) {
	if e.History == nil {
		return
	}
	type page struct {
		id, title string
	}
	found := make([]page, len(pages))
	_ = e.Store.View(func(tx *store.Tx) error {
		for i, c := range pages {
			if rec, err := tx.Page(tx.DocByPath(c.Path)); err == nil && rec != nil {
				found[i] = page{rec.ID, rec.Title}
			}
		}
		return nil
	})
	for i, c := range pages {
		if found[i].id == "" || vault.IsReserved(c.Path) || !e.History.Has(found[i].id) {
			continue
		}
		p, err := e.History.Edit(found[i].id)
		if err != nil {
			e.historyProblem(c.Path, err)
			continue
		}
		sum := sha256.Sum256(c.Data)
		if n := p.Newest(); n != nil && n.SHA256 != hex.EncodeToString(sum[:]) {
			if _, err := p.Append(history.Entry{Content: c.Data, Time: time.Unix(0, c.MtimeNS), Op: history.OpEdit,
				Origin: history.OriginFile, Path: c.Path, Title: found[i].title}); err != nil {
				e.historyProblem(c.Path, err)
			}
		}
		if err := p.Close(); err != nil {
			e.historyProblem(c.Path, err)
		}
	}
}

// historyProblem tells a person (stderr, serve's log) that the history
// could not record an edit of a page.
func (e *Env) historyProblem(p string, err error) {
	if e.Index.Notify != nil {
		e.Index.Notify(fmt.Sprintf("history: the edit of %s was not recorded: %v", p, err))
	}
}

// historyLimits are the bounds the vault's config gives the history.
func historyLimits(cfg *vault.Config) history.Limits {
	h := cfg.History
	return history.Limits{PageRevisions: h.PageRevisions, PageBytes: int64(h.PageMB) << 20, TotalBytes: int64(h.TotalMB) << 20}
}

// HistoryStatus is the page history in status: its totals (pages,
// revisions, bytes, pruning done), its bounds, and the git mode.
type HistoryStatus struct {
	history.Summary
	Limits history.Limits `json:"limits"`
	// Git is "off", or "on" when each write commits to git; GitNote says
	// why commits cannot be made when they are on (no git program, not a
	// git work tree).
	Git     string `json:"git"`
	GitNote string `json:"git_note,omitempty"`
	// Problem says why the totals could not be read.
	Problem string `json:"problem,omitempty"`
}

func historyStatus(ctx context.Context, e *Env) *HistoryStatus {
	hs := &HistoryStatus{Limits: e.History.Limits(), Git: "off"}
	sum, err := e.History.Summary()
	if err != nil {
		hs.Problem = err.Error()
	}
	hs.Summary = sum
	if e.git {
		hs.Git = "on"
		if _, err := exec.LookPath("git"); err != nil {
			hs.GitNote = "no git program found: writes are not committed"
		} else if out, err := (&gitRun{ctx: ctx, dir: e.Vault.Root}).run(nil, "rev-parse", "--is-inside-work-tree"); err != nil || strings.TrimSpace(out) != "true" {
			hs.GitNote = "the vault is not inside a git work tree: writes are not committed"
		}
	}
	return hs
}

// pageRewrite is a page file that an operation rewrote other than
// through WritePage (a page move: the moved page, and the pages whose
// links it rewrote), for historyRewrite.
type pageRewrite struct {
	// ID is the page's id now; FromID its id before the operation when
	// that differs (a move: the history follows the page).
	ID, FromID string
	// Path is the page's file now; FromPath the file it left (a move).
	Path, FromPath string
	Title          string
	// Old are the bytes the operation replaced (nil: none), New the bytes
	// it wrote.
	Old, New []byte
	Op       string // history.OpMove, history.OpRelink…
	MoveOf   string // the moved page's title (OpRelink)
	Note     string // the writer's note (the log entry's)
	Time     time.Time
}

// historyRewrite records a rewrite in the page's history once the file
// holds its new bytes: the replaced bytes when they are not the page's
// newest revision (origin file, as a write does before it replaces
// them), then the new bytes (stored as a reference when they repeat a
// revision, as a move that changes no byte does), flushed before it
// returns. A rewrite recorded already (the page's newest revision is
// this one: its new bytes, path, op and time) is not recorded again. It returns the new revision and notes on what went wrong
// (never an error: the operation stands). The operation must keep the
// replaced bytes safe itself until then (a move's journal does), and
// either call this before it scans the files it wrote or scan them with
// index.ScanOptions.OwnWrite: otherwise the scan records the new bytes
// first, as an edit made outside synapse.
func historyRewrite(e *Env, rw pageRewrite) (rev int, notes []string) {
	if e.History == nil {
		return 0, nil
	}
	from := rw.FromID
	if from == "" {
		from = rw.ID
	}
	p, err := e.History.EditMoved(from, rw.ID)
	if err != nil {
		return 0, []string{fmt.Sprintf("history: %v (the change of %s is not recorded)", err, rw.Path)}
	}
	if n := p.Newest(); n != nil && n.Path == rw.Path && n.SHA256 == sumHex(rw.New) && n.Op == rw.Op && n.Time.Equal(rw.Time) {
		// recorded already: an operation finished again after a crash
		if err := p.Close(); err != nil {
			return n.Rev, []string{fmt.Sprintf("history: %v", err)}
		}
		return n.Rev, nil
	}
	if rw.Old != nil {
		sum := sha256.Sum256(rw.Old)
		if n := p.Newest(); n == nil || n.SHA256 != hex.EncodeToString(sum[:]) {
			oldPath := rw.FromPath
			if oldPath == "" {
				oldPath = rw.Path
			}
			_, err = p.Append(history.Entry{Content: rw.Old, Time: rw.Time, Op: history.OpEdit, Origin: history.OriginFile, Path: oldPath, Title: rw.Title})
		}
	}
	var r history.Revision
	if err == nil {
		r, err = p.Append(history.Entry{Content: rw.New, Time: rw.Time, Op: rw.Op, Origin: history.OriginSynapse,
			Path: rw.Path, Title: rw.Title, MovedFrom: rw.FromPath, MoveOf: rw.MoveOf, Note: rw.Note})
	}
	if err == nil {
		err = p.Sync()()
	}
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		notes = append(notes, fmt.Sprintf("history: %v (the change of %s is not fully recorded)", err, rw.Path))
	}
	return r.Rev, notes
}
