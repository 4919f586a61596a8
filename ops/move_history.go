package ops

import (
	"context"

	"github.com/synapse-wiki/synapse/history"
	"github.com/synapse-wiki/synapse/store"
)

// A move rewrites files outside the one write path (WritePage), so it
// tells the page history and git itself (docs/history.md): once the scan
// has indexed the files (their new ids are known then), each is recorded
// in the history — the moved page's history follows it to its new id and
// gets a revision of op move, each page whose links the move rewrote a
// revision of op write — and with history.git one commit holds every
// file the move changed. Neither ever fails the move: what went wrong is
// in the result's notes.

// moveRecord is what a move's finish did beside the files: the moved
// page's history revision, the git commit, and notes on what did not go
// as it should.
type moveRecord struct {
	revision int
	commit   string
	notes    []string
	resolved []string // review items the moved page answers (auto_resolved)
}

// recordHistory records every file of the move in the page history. It
// must run after the scan that indexed them (which ran with OwnWrite, so
// that it did not record their new bytes as edits made outside synapse)
// and before the journal, which keeps their old bytes, is removed.
func (j *moveJournal) recordHistory(e *Env) *moveRecord {
	rec := &moveRecord{}
	if e.History == nil {
		return rec
	}
	type page struct{ id, title string }
	now := make([]page, len(j.Files))
	_ = e.Store.View(func(tx *store.Tx) error {
		for i, f := range j.Files {
			if r, err := pageAt(tx, f.Path); err == nil {
				now[i] = page{r.ID, r.Title}
			}
		}
		return nil
	})
	for i, f := range j.Files {
		if now[i].id == "" {
			rec.notes = append(rec.notes, "history: "+f.Path+" is not in the index: the move's change of it is not recorded")
			continue
		}
		// a page whose links the move rewrote: part of the move, not
		// a write of its own
		op, moveOf, note := history.OpRelink, j.LogTitle, ""
		if i == 0 { // the moved page
			op, moveOf, note = history.OpMove, "", j.Note
		}
		rev, notes := historyRewrite(e, pageRewrite{ID: now[i].id, FromID: f.ID, Path: f.Path, FromPath: f.From,
			Title: now[i].title, Old: f.Old, New: f.New, Op: op, MoveOf: moveOf, Note: note, Time: j.Time})
		rec.notes = append(rec.notes, notes...)
		if i == 0 {
			rec.revision = rev
		}
	}
	return rec
}

// commit makes the move's git commit when the vault commits writes: the
// moved file, the file it left, the rewritten pages, log.md, index.md and
// the state files, each when it changed.
func (j *moveJournal) commit(ctx context.Context, e *Env, rec *moveRecord) {
	if !e.git {
		return
	}
	msg := "synapse: move " + j.LogTitle
	if from := j.Files[0].From; from != "" {
		msg += " (from " + from + ")"
	}
	hash, notes := gitCommit(ctx, e.Vault.Root, withStateFiles(e.Vault.Root, j.paths()), msg)
	rec.commit = hash
	rec.notes = append(rec.notes, notes...)
}
