package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// A move changes several files; it must happen as a whole or not at all,
// whatever moment a crash picks. Before any file changes, the whole move —
// each file's bytes before and after, and where the moved page goes — is
// written to .synapse/move.json (atomically, fsynced): that write is the
// moment the move happens. Applying it is idempotent (a file already in
// its new state is left alone), so the next open of the vault finishes a
// move a crash interrupted: the files, then the index, index.md and
// log.md, then the journal is removed. If a file is found in neither
// state (someone edited it meanwhile), the move is rolled back instead:
// each file in its new state gets its old bytes again.

// moveJournalFile is where a move in progress is recorded.
const moveJournalFile = vault.StateDir + "/move.json"

// moveJournal is a move in progress.
type moveJournal struct {
	Version int        `json:"version"`
	Time    time.Time  `json:"time"`
	Files   []moveFile `json:"files"` // the moved page first
	// the log entry that records the move
	LogKind  LogKind  `json:"log_kind"`
	LogTitle string   `json:"log_title"`
	LogLines []string `json:"log_lines"`
	// Note is the writer's note, for the moved page's history (a journal
	// written before notes were kept has none)
	Note string `json:"note,omitempty"`
}

// moveFile is one file a move changes: at Path it ends with New, and it
// held Old at From (a moved page) or at Path. ID is the page's id before
// the move (its history's key: the moved page's history follows it).
type moveFile struct {
	Path string `json:"path"`
	From string `json:"from,omitempty"`
	ID   string `json:"id,omitempty"`
	Old  []byte `json:"old"`
	New  []byte `json:"new"`
}

// journal is the plan as a journal, with its log entry.
func (m *movePlan) journal(e *Env, note string) *moveJournal {
	rec := logRecord{kind: LogMoved, title: m.toTitle}
	rec.detail("from", m.fromTi+" ("+m.fromPath+")")
	if m.toPath != m.fromPath {
		rec.detail("to", m.toPath)
	}
	if n := len(m.changed); n > 0 {
		links := 0
		for _, c := range m.changed {
			links += c.Links
		}
		rec.detail("links", fmt.Sprintf("%d rewritten in %d other %s", links, n, map[bool]string{true: "page", false: "pages"}[n == 1]))
	}
	rec.detail("note", note)
	return &moveJournal{Version: 1, Time: e.now(), Files: m.files, LogKind: rec.kind, LogTitle: rec.title, LogLines: rec.lines, Note: note}
}

// save writes the journal durably: from here on the move is done.
func (j *moveJournal) save(e *Env) error {
	data, err := json.Marshal(j)
	if err != nil {
		return errs.Wrap(errs.Internal, err, "encode the move: %v", err)
	}
	if err := writePrivate(e.Vault, moveJournalFile, data); err != nil {
		return errs.Wrap(errs.Internal, err, "record the move in %s: %v (nothing was moved)", moveJournalFile, err)
	}
	return nil
}

// The journal is synapse's private state: the vault's file layer never
// reads or writes under .synapse/, so it is written here, in a folder that
// must be a real one (not a symlink).

// stateDir returns the vault's .synapse folder, refusing a symlink.
func stateDir(v *vault.Vault) (string, error) {
	dir := v.Abs(vault.StateDir)
	st, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a folder (a symlink?)", vault.StateDir)
	}
	return dir, nil
}

// privateStep, when set by a test, runs before each write or removal of
// private state; its error fails it (a crash simulated there).
var privateStep func() error

// privateDir is stateDir for a change of private state, after privateStep.
func privateDir(v *vault.Vault) (string, error) {
	if privateStep != nil {
		if err := privateStep(); err != nil {
			return "", err
		}
	}
	return stateDir(v)
}

// writePrivate writes a file of .synapse/ atomically and durably.
func writePrivate(v *vault.Vault, rel string, data []byte) error {
	dir, err := privateDir(v)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".move-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, v.Abs(rel))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncFolder(dir)
}

// maxPrivateBytes caps what readPrivate reads: the move journal and the
// kept ids hold a line per moved page (100,000 pages: ~6 MB).
const maxPrivateBytes = 64 << 20

// readPrivate reads a file of .synapse/ (nil when it does not exist); it
// arrives with the vault, so anything but a regular file of at most
// maxPrivateBytes is refused (vault.ReadSmallFile), never waited on.
func readPrivate(v *vault.Vault, rel string) ([]byte, error) {
	if _, err := stateDir(v); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	data, err := vault.ReadSmallFile(v.Abs(rel), maxPrivateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// removePrivate removes a file of .synapse/ durably.
func removePrivate(v *vault.Vault, rel string) error {
	dir, err := privateDir(v)
	if err != nil {
		return err
	}
	if err := os.Remove(v.Abs(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncFolder(dir)
}

// syncFolder flushes a folder's entries to stable storage.
func syncFolder(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// errMoveDiverged tells that a file of a move is in neither its old nor
// its new state.
type errMoveDiverged struct{ path string }

func (e *errMoveDiverged) Error() string {
	return e.path + " changed while the page was being moved"
}

// current reads a vault file (nil when it does not exist).
func current(e *Env, p string) ([]byte, error) {
	data, err := readVaultFile(e.files(), e.Vault.Abs(p))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// apply brings every file to its new state: the moved page's new file,
// the rewritten pages, then the old file removed. Each step is skipped
// when done already. A file in neither state stops it (errMoveDiverged).
func (j *moveJournal) apply(e *Env) error {
	for _, f := range j.Files {
		cur, err := current(e, f.Path)
		switch {
		case err != nil:
			return fileError(err, "read %s: %v", f.Path, err)
		case cur != nil && bytes.Equal(cur, f.New):
		case cur == nil && f.From != "":
			if err := mkdirDurable(e.writeFS(), e.Vault.Abs(path.Dir(f.Path))); err != nil {
				return fileError(err, "create %s/: %v", path.Dir(f.Path), err)
			}
			if err := writeAtomic(e.writeFS(), e.Vault.Abs(f.Path), f.New, 0o644, true); err != nil {
				if errors.Is(err, errExists) {
					return &errMoveDiverged{f.Path}
				}
				return fileError(err, "write %s: %v", f.Path, err)
			}
		case cur != nil && f.From == "" && bytes.Equal(cur, f.Old):
			if err := replaceFile(e, f.Path, f.New); err != nil {
				return err
			}
		default:
			return &errMoveDiverged{f.Path}
		}
	}
	for _, f := range j.Files {
		if f.From == "" {
			continue
		}
		cur, err := current(e, f.From)
		switch {
		case err != nil:
			return fileError(err, "read %s: %v", f.From, err)
		case cur == nil:
		case bytes.Equal(cur, f.Old):
			if err := removeFile(e, f.From); err != nil {
				return err
			}
		default:
			return &errMoveDiverged{f.From}
		}
	}
	return nil
}

// rollBack gives every file a move changed its old bytes again (a file
// changed by someone else since is left as it is) and removes the journal.
func (j *moveJournal) rollBack(e *Env) error {
	for i := len(j.Files) - 1; i >= 0; i-- {
		f := j.Files[i]
		if f.From != "" {
			if old, err := current(e, f.From); err != nil {
				return fileError(err, "read %s: %v", f.From, err)
			} else if old == nil {
				if err := writeAtomic(e.writeFS(), e.Vault.Abs(f.From), f.Old, 0o644, true); err != nil && !errors.Is(err, errExists) {
					return fileError(err, "write %s: %v", f.From, err)
				}
			}
		}
		cur, err := current(e, f.Path)
		if err != nil {
			return fileError(err, "read %s: %v", f.Path, err)
		}
		if cur == nil || !bytes.Equal(cur, f.New) || bytes.Equal(f.New, f.Old) {
			continue
		}
		if f.From != "" {
			err = removeFile(e, f.Path)
		} else {
			err = replaceFile(e, f.Path, f.Old)
		}
		if err != nil {
			return err
		}
	}
	return removePrivate(e.Vault, moveJournalFile)
}

// replaceFile writes data over the file at p atomically, keeping its
// permissions.
func replaceFile(e *Env, p string, data []byte) error {
	abs := e.Vault.Abs(p)
	perm := fs.FileMode(0o644)
	if st, err := statVaultFile(e.files(), abs); err == nil {
		perm = st.Mode().Perm()
	}
	if err := writeAtomic(e.writeFS(), abs, data, perm, false); err != nil {
		return fileError(err, "write %s: %v", p, err)
	}
	return nil
}

// removeFile removes the file at p durably.
func removeFile(e *Env, p string) error {
	abs, fsys := e.Vault.Abs(p), e.writeFS()
	if err := fsys.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fileError(err, "remove %s: %v", p, err)
	}
	if err := fsys.SyncDir(path.Dir(abs)); err != nil {
		return fileError(err, "sync %s/: %v", path.Dir(p), err)
	}
	return nil
}

// finish brings the index, index.md and log.md in step with the moved
// files (the scan re-reads each of them; a pending missing-page item the
// page now answers is auto-resolved), records the files in the page
// history, commits them to git when the vault commits writes, then
// removes the journal. Each step may run again after a crash: none
// records anything twice.
func (j *moveJournal) finish(ctx context.Context, e *Env) (*moveRecord, error) {
	// index.md and log.md too: after a crash their store records may be
	// behind the files (a scan skips them when they are not)
	paths := append(j.paths(), vault.IndexPage, vault.LogPage)
	moved := j.Files[0].Path
	rescanIndex := false
	var resolved []ReviewItem
	then := func(tx *store.Tx) error {
		cat, err := regenerateIndexTx(e, tx)
		if err != nil {
			return err
		}
		if cat != nil {
			ok, err := cat.fastForward(tx)
			if err != nil {
				return err
			}
			rescanIndex = !ok
		}
		rec, err := pageAt(tx, moved)
		if err != nil || e.pageWritten == nil {
			return err
		}
		touched, err := e.pageWritten(tx, rec, []string{}, j.Note, j.Time)
		resolved = touched.resolved
		return err
	}
	after := func(step string, err error) (*moveRecord, error) {
		return nil, errs.Wrap(errs.Internal, err, "the page was moved to %s, but %s failed: %s; the next command finishes it", moved, step, errs.Raw(err))
	}
	// OwnWrite: the files are recorded in the history below, as
	// synapse's, not by the scan as edits made outside it
	// the moved page keeps its id (docs/pages.md#moving-and-renaming)
	var keep map[string]string
	if f := j.Files[0]; f.From != "" && f.ID != "" {
		keep = map[string]string{f.Path: f.ID}
		if err := keepMovedID(e.Vault, f.Path, f.ID); err != nil {
			return after("recording the page's id in "+keptIDsFile, err)
		}
	}
	if _, err := e.Index.Scan(ctx, index.ScanOptions{Paths: paths, Then: then, OwnWrite: true, KeepIDs: keep}); err != nil {
		return after("re-indexing", err)
	}
	if rescanIndex {
		if _, err := e.Index.Scan(ctx, index.ScanOptions{Paths: []string{vault.IndexPage}}); err != nil {
			return after("re-indexing "+vault.IndexPage, err)
		}
	}
	rec := j.recordHistory(e)
	entry := logRecord{kind: j.LogKind, title: j.LogTitle, lines: j.LogLines}.text(j.Time)
	if rest, whole := logRest(e, entry); rest != "" {
		if err := logText(ctx, e, rest, whole); err != nil {
			return after("appending to "+vault.LogPage, err)
		}
	}
	// the items the page answers under its new name: review decisions,
	// logged as every decision is
	for _, it := range resolved {
		rec.resolved = append(rec.resolved, it.ID)
	}
	if err := logDecisions(ctx, e, resolved); err != nil {
		rec.notes = append(rec.notes, errs.Message(err))
	}
	j.commit(ctx, e, rec)
	if err := removePrivate(e.Vault, moveJournalFile); err != nil {
		return after("removing "+moveJournalFile, err)
	}
	return rec, nil
}

// logRest is what of a move's log entry log.md still lacks: all of it
// (whole), nothing when it ends with the entry (a move finished after a
// crash that came after its entry), or the rest of an entry a crash cut
// short.
func logRest(e *Env, entry string) (rest string, whole bool) {
	data, err := current(e, vault.LogPage)
	if err != nil {
		return entry, true
	}
	head, _, _ := strings.Cut(entry, "\n")
	if i := bytes.LastIndex(data, []byte(head)); i >= 0 && strings.HasPrefix(entry, string(data[i:])) {
		return entry[len(data)-i:], false
	}
	return entry, true
}

// recoverMoves finishes a move a crash interrupted (or rolls it back when
// a file it changes was changed since), before anything else uses the
// vault. It says what it did through the Env's notes (Index.Notify).
func recoverMoves(ctx context.Context, e *Env) error {
	data, err := readPrivate(e.Vault, moveJournalFile)
	if err != nil || data == nil {
		return err
	}
	var j moveJournal
	if err := json.Unmarshal(data, &j); err != nil || j.Version != 1 || len(j.Files) == 0 {
		// written atomically, so never torn: not ours, or from another version
		return errs.E(errs.Internal, "%s does not describe a move this synapse can finish (%v); move it aside to go on", moveJournalFile, err)
	}
	err = j.apply(e)
	var div *errMoveDiverged
	if errors.As(err, &div) {
		if rerr := j.rollBack(e); rerr != nil {
			return rerr
		}
		e.notify("an interrupted move of %s was rolled back: %s", j.Files[0].Path, div.Error())
		_, err := e.Index.Scan(ctx, index.ScanOptions{Paths: j.paths()})
		return err
	}
	if err != nil {
		return err
	}
	rec, err := j.finish(ctx, e)
	if err != nil {
		return err
	}
	e.notify("an interrupted move to %s was finished", j.Files[0].Path)
	for _, n := range rec.notes {
		e.notify("%s", n)
	}
	return nil
}

// paths lists every file the move touches.
func (j *moveJournal) paths() []string {
	var out []string
	for _, f := range j.Files {
		out = append(out, f.Path)
		if f.From != "" {
			out = append(out, f.From)
		}
	}
	return out
}

// pendingMove reports whether a move is waiting to be finished in v.
func pendingMove(v *vault.Vault) bool {
	_, err := os.Lstat(v.Abs(moveJournalFile))
	return err == nil
}

// notify tells a person something through the open options' Notify.
func (e *Env) notify(format string, args ...any) {
	if e.Index != nil && e.Index.Notify != nil {
		e.Index.Notify(strings.TrimSpace(fmt.Sprintf(format, args...)))
	}
}
