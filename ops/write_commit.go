package ops

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// Stage 5 of write_page: commit. The file is written atomically (through
// ops/atomic.go), then, in the same command: wiki/log.md gets its line,
// the page is re-indexed by the scanner, the review queue hears of its
// dangling links, and wiki/index.md is regenerated. A failure after the
// file is written says so and names the file.

func (w *pageWrite) commit(ctx context.Context, t *target, r *rendered) (res *WritePageOut, rerr error) {
	e := w.e
	defer w.historyClose()
	out := &WritePageOut{SHA256: r.sha256, Created: t.rec == nil, Dangling: []string{}, Unchanged: r.unchanged}
	var p string // the page's vault path
	var err error
	written := false // the page's file is in place
	// the folders this write changes: their freshness stamps are brought
	// forward in its transaction (index.FolderMark), so the next CLI
	// verb's check does not list them again
	w.folders = e.Index.MarkFolders()
	if !r.unchanged {
		w.folders.Before(vault.WikiDir)
		// until the commit below records it, a note says a write is under
		// way (intent.go): a kill leaves it for the next command to finish
		intentDone := e.noteIntent(w.c.title, t.path, r.m.typ)
		defer func() {
			if rerr == nil || !written {
				intentDone()
			}
		}()
	}
	switch {
	case r.unchanged:
		p = t.path
	case t.rec != nil:
		p = t.path
		w.folders.Before(path.Dir(p))
		abs := e.Vault.Abs(p)
		// the file must still be what was read (another editor may have
		// saved it meanwhile)
		if st, err := statVaultFile(abs); err != nil || st.Size() != t.info.Size() || !st.ModTime().Equal(t.info.ModTime()) {
			return nil, errs.E(errs.Conflict, "%s changed while it was being written; read it again and retry", p)
		}
		// the bytes replaced are in the history before they are replaced
		flushing := w.historyBefore(t)
		if _, err := writeAtomicHook(abs, [][]byte{r.data}, t.info.Mode().Perm(), false, flushing); err != nil {
			return nil, fileError(err, "write %s: %v (the file is unchanged)", p, err)
		}
	default:
		if p, err = w.create(r.data, t, r.m.title, r.m.typ); err != nil {
			return nil, err
		}
	}
	written = true
	w.mark("file")
	out.Path = p
	title := r.m.fm.String("title")
	if title == "" && t.rec != nil && r.m.keepFM {
		title = t.rec.Title // a broken block's plain title line
	}
	if title == "" {
		title = store.Stem(p)
	}
	if t.rec != nil && !out.Unchanged {
		w.historyAfter(t.rec.ID, p, title, r.data, false)
	}
	// from here on the page is on disk: a failure says so
	after := func(step string, err error) error {
		return errs.Wrap(errs.Internal, err, "page %q was written to %s (sha256 %s), but %s failed: %s; run `%s` to bring the index up to date", title, p, out.SHA256, step, errs.Raw(err), errs.Cmd("source.rescan"))
	}
	var logged *logAppend
	if !out.Unchanged {
		// the page is written: what fails from here on with log.md or
		// index.md is a note of the write (room.go)
		if logged, err = appendLog(e.Vault, w.now, w.writeRecord(t, r.m, title)); err != nil {
			out.Notes = append(out.Notes, fmt.Sprintf("%s was not appended to (%s): this write is not in the log", vault.LogPage, errs.Raw(err)))
			logged = nil
		} else {
			// log.md's fsync runs while the page is re-indexed; the
			// write answers once it is done
			defer func() {
				if werr := logged.wait(); werr != nil && res != nil {
					res.Notes = append(res.Notes, fmt.Sprintf("%s may not hold this write's line (%s)", vault.LogPage, errs.Raw(werr)))
				}
			}()
			if logged.created {
				w.folders.Added(vault.WikiDir, 1)
			}
		}
	}
	w.mark("log")
	// re-index the page the one way pages are always indexed: the scanner;
	// in the transaction that applies it, the rest of the write is
	// recorded (one commit): index.md regenerated from the catalogue that
	// includes the page, the folders' freshness stamps, the review queue,
	// and the store records of log.md and index.md brought in step
	// without re-parsing them
	paths := []string{p}
	if t.stale != "" && t.stale != p {
		paths = append(paths, t.stale)
	}
	paths = append(paths, w.cited...)
	var (
		rec    *store.PageRec
		cat    *catalogWrite
		rescan []string
	)
	hook := reviewHooks.OnPageWritten
	hookLater := false // after the reserved files are re-indexed
	step := "re-indexing"
	warnIndex := ""
	then := func(tx *store.Tx) error {
		rescan, hookLater, cat, warnIndex = rescan[:0], false, nil, ""
		var err error
		if rec, err = pageAt(tx, p); err != nil {
			return err
		}
		// a type no other page has: say so (types.go); a built-in type is
		// no typo, and the first entity of a new vault is no news
		out.NewType, out.Types = false, nil
		if (t.rec == nil || t.rec.Type != rec.Type) && !rec.Reserved && !vault.IsBuiltinType(rec.Type) && typeCount(tx, rec.Type) == 1 {
			out.NewType, out.Types = true, vaultTypes(tx, rec.Type, rec.Type)
		}
		out.ID, out.Title, out.Type = rec.ID, rec.Title, rec.Type
		out.Dangling, out.LinksToFiles = linkTargets(rec)
		if t.rec == nil && !out.Unchanged && w.hist.rev == 0 && len(w.hist.notes) == 0 {
			// a new page: its id is known now
			w.historyAfter(rec.ID, p, title, r.data, true)
		}
		w.mark("reindex")
		if cat, err = regenerateIndexTx(e, tx); err != nil {
			if _, damaged := store.DamageReason(err); damaged {
				return err
			}
			// the catalogue's changes stay pending in the store: the next
			// write (or source rescan) regenerates index.md
			warnIndex = fmt.Sprintf("%s was not regenerated (%s); the next write or `%s` regenerates it", vault.IndexPage, errs.Raw(err), errs.Cmd("source.rescan"))
			cat = nil
		}
		w.mark("index.md")
		step = "recording the write (review queue, log.md and index.md records)"
		if !out.Unchanged {
			if cat != nil && cat.before == nil && !cat.unchanged {
				w.folders.Added(vault.WikiDir, 1)
			}
			if err := w.folders.Stamp(tx, []string{p}); err != nil {
				return err
			}
		}
		if logged != nil {
			ok, err := logged.fastForward(tx)
			if err != nil {
				return err
			}
			if !ok {
				rescan = append(rescan, vault.LogPage)
			}
		}
		if cat != nil {
			ok, err := cat.fastForward(tx)
			if err != nil {
				return err
			}
			if !ok {
				rescan = append(rescan, vault.IndexPage)
			}
		}
		if len(rescan) > 0 && reservedLinks(rec) {
			// log.md or index.md is new (this write made it) or was
			// changed by hand: once it is indexed, the page's [[log]]
			// and [[index]] may reach it, so they are not filed as
			// missing pages
			hookLater = true
			return nil
		}
		return w.fileMissing(tx, hook, t, rec, out)
	}
	if err := w.rescanThen(ctx, paths, then); err != nil {
		return nil, after(step, err)
	}
	if warnIndex != "" {
		out.Notes = append(out.Notes, warnIndex)
	}
	w.mark("commit")
	if testHookReserved != nil {
		testHookReserved(rescan)
	}
	if len(rescan) > 0 {
		if err := w.rescan(ctx, rescan); err != nil {
			return nil, after("re-indexing "+strings.Join(rescan, " and "), err)
		}
		w.mark("rescan")
	}
	if hookLater {
		// View would do without a hook; Update keeps one path
		err := e.Store.Update(func(tx *store.Tx) error {
			var err error
			if rec, err = pageAt(tx, p); err != nil {
				return err
			}
			out.Dangling, out.LinksToFiles = linkTargets(rec)
			return w.fileMissing(tx, hook, t, rec, out)
		})
		if err != nil {
			return nil, after("recording the write in the review queue", err)
		}
	}
	w.historyDone(out)
	w.gitAfterWrite(ctx, out, t)
	return out, nil
}

// MaxFiledPerWrite caps the dangling targets one write hands to the review
// queue: a page with thousands of distinct dangling links (a generated
// citation list, a hostile body) would otherwise file as many items while
// the store is locked. The targets past the cap are counted in the result
// (WritePageOut.NotFiled); lint --to-review files them.
const MaxFiledPerWrite = 50

// fileMissing hands the review queue the dangling targets this write adds
// (those the previous version of the page did not link to: an edit does
// not file again what it did not touch), at most MaxFiledPerWrite of them,
// and lets it auto-resolve items the page answers.
func (w *pageWrite) fileMissing(tx *store.Tx, hook func(*store.Tx, *store.PageRec, []string, time.Time) ([]string, error), t *target, rec *store.PageRec, out *WritePageOut) error {
	if hook == nil {
		return nil
	}
	added := []string{}
	seen := map[string]bool{}
	for _, l := range rec.Links {
		if l.To != 0 || l.File != "" || seen[l.Key] || t.linked[l.Key] {
			continue
		}
		seen[l.Key] = true
		added = append(added, strings.TrimSuffix(l.Target, ".md"))
	}
	out.NotFiled = max(0, len(added)-MaxFiledPerWrite)
	filed, err := hook(tx, rec, added[:min(len(added), MaxFiledPerWrite)], w.now)
	out.Filed = filed
	return err
}

// reservedLinks reports whether one of a page's dangling links names a
// reserved top file (index, log, overview), which a rescan of that file
// may resolve.
func reservedLinks(rec *store.PageRec) bool {
	for _, l := range rec.Links {
		if l.To == 0 && l.File == "" && vault.IsReserved(vault.WikiDir+"/"+store.Stem(l.Key)+".md") {
			return true
		}
	}
	return false
}

// testHookReserved, when set by a test, receives the reserved files whose
// store records the scanner had to re-parse (nil or empty: none).
var testHookReserved func(rescanned []string)

// rescan re-indexes paths through the scanner. A rewrite that keeps the
// size within the file system's mtime granularity is still read: the
// scanner re-hashes every record made within two seconds of its mtime.
func (w *pageWrite) rescan(ctx context.Context, paths []string) error {
	return w.rescanThen(ctx, paths, nil)
}

// rescanThen is rescan, running then in the transaction that applies the
// paths (index.ScanOptions.Then).
func (w *pageWrite) rescanThen(ctx context.Context, paths []string, then func(tx *store.Tx) error) error {
	_, err := w.e.Index.Scan(ctx, index.ScanOptions{Paths: paths, Then: then, OwnWrite: true})
	return err
}

func pageAt(tx *store.Tx, p string) (*store.PageRec, error) {
	doc := tx.DocByPath(p)
	if doc == 0 {
		return nil, fmt.Errorf("%s is not in the index after the scan", p)
	}
	rec, err := tx.Page(doc)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, fmt.Errorf("%s is not in the index after the scan", p)
	}
	return rec, nil
}

// linkTargets lists a page's links, each target once, in order of
// appearance, as written (without ".md"): those that match no page nor
// file (dangling), and those written as a bare name (no folder) that
// reached a file that is no page (WritePageOut.LinksToFiles; a link with a
// folder, raw/sources/x, meant the file).
func linkTargets(rec *store.PageRec) (dangling []string, files []FileTarget) {
	dangling = []string{}
	seen, seenFile := map[string]bool{}, map[string]bool{}
	for _, l := range rec.Links {
		target := strings.TrimSuffix(l.Target, ".md")
		switch {
		case l.To != 0: // a page answers
		case l.File == "":
			if !seen[l.Key] {
				seen[l.Key] = true
				dangling = append(dangling, target)
			}
		case !seenFile[l.Key] && !strings.Contains(l.Target, "/"):
			seenFile[l.Key] = true
			files = append(files, FileTarget{Target: target, Path: l.File})
		}
	}
	return dangling, files
}

// ---- the review queue ----

// reviewHooks connect the write path to the review queue without an import
// cycle of intent: the review queue sets them in an init function.
var reviewHooks struct {
	// OnPageWritten runs in a write transaction after a page was written
	// and re-indexed: it files an idempotent missing-page item (origin
	// "rule") for each dangling target it is given (those the write adds,
	// at most MaxFiledPerWrite: fileMissing) and marks pending missing-page items
	// that the page satisfies (by title or alias) auto_resolved. It returns
	// the targets it filed as new items (not those already in the queue).
	OnPageWritten func(tx *store.Tx, page *store.PageRec, dangling []string, now time.Time) (filed []string, err error)
}
