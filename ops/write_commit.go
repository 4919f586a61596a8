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
	out := &WritePageOut{SHA256: r.sha256, Created: t.rec == nil, Dangling: []string{}, DanglingAdded: []string{}, Unchanged: r.unchanged}
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
		if st, err := statVaultFile(e.files(), abs); err != nil || st.Size() != t.info.Size() || !st.ModTime().Equal(t.info.ModTime()) {
			return nil, errs.E(errs.Conflict, "%s changed while it was being written; read it again and retry", p)
		}
		// the bytes replaced are in the history before they are replaced
		flushing := w.historyBefore(t)
		if _, err := writeAtomicHook(e.writeFS(), abs, [][]byte{r.data}, t.info.Mode().Perm(), false, flushing); err != nil {
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
		if logged, err = appendLog(e, w.now, w.writeRecord(t, r.m, title)); err != nil {
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
	rc := &recording{t: t, r: r, out: out, path: p, title: title, logged: logged, hook: e.pageWritten, step: "re-indexing"}
	if err := w.rescanThen(ctx, paths, func(tx *store.Tx) error { return w.record(tx, rc) }); err != nil {
		return nil, after(rc.step, err)
	}
	if rc.warnIndex != "" {
		out.Notes = append(out.Notes, rc.warnIndex)
	}
	w.mark("commit")
	if err := w.afterCommit(ctx, rc); err != nil {
		return nil, after(rc.step, err)
	}
	w.historyDone(out)
	// the items the write answered are review decisions: logged as
	// every decision is (after the write's own entry)
	if err := logDecisions(ctx, e, w.resolved); err != nil {
		out.Notes = append(out.Notes, errs.Message(err))
	}
	w.gitAfterWrite(ctx, out, t)
	return out, nil
}

// recording is what a page write records in the transaction that
// re-indexes the page, and what is left for after it.
type recording struct {
	t      *target
	r      *rendered
	out    *WritePageOut
	path   string // the page's vault path
	title  string
	logged *logAppend // nil: log.md was not appended to
	hook   pageWrittenFunc

	rec       *store.PageRec
	cat       *catalogWrite
	rescan    []string // reserved files the scanner must parse again
	hookLater bool     // file the dangling links after the reserved files are re-indexed
	step      string   // what was being done, for the error
	// warnIndex says index.md was not regenerated (the write stands)
	warnIndex string
}

// record runs in the transaction that applies the page: index.md
// regenerated from the catalogue that includes the page, the folders'
// freshness stamps, the store records of log.md and index.md brought in
// step without re-parsing them, and the review queue.
func (w *pageWrite) record(tx *store.Tx, rc *recording) error {
	e, t, out := w.e, rc.t, rc.out
	rc.rescan, rc.hookLater, rc.cat, rc.warnIndex = rc.rescan[:0], false, nil, ""
	rec, err := pageAt(tx, rc.path)
	if err != nil {
		return err
	}
	rc.rec = rec
	// a type no other page has: say so (types.go); a built-in type is
	// no typo, and the first entity of a new vault is no news
	out.NewType, out.Types = false, nil
	if (t.rec == nil || t.rec.Type != rec.Type) && !rec.Reserved && !vault.IsBuiltinType(rec.Type) && typeCount(tx, rec.Type) == 1 {
		out.NewType, out.Types = true, vaultTypes(tx, rec.Type, rec.Type)
	}
	out.ID, out.Title, out.Type = rec.ID, rec.Title, rec.Type
	linkResults(tx, rec, out, t.linked)
	out.AliasShared = sharedAliases(tx, t.rec, rec)
	if t.rec == nil && !out.Unchanged && w.hist.rev == 0 && len(w.hist.notes) == 0 {
		// a new page: its id is known now
		w.historyAfter(rec.ID, rc.path, rc.title, rc.r.data, true)
	}
	w.mark("reindex")
	if rc.cat, err = regenerateIndexTx(e, tx); err != nil {
		if _, damaged := store.DamageReason(err); damaged {
			return err
		}
		// the catalogue's changes stay pending in the store: the next
		// write (or source rescan) regenerates index.md
		rc.warnIndex = fmt.Sprintf("%s was not regenerated (%s); the next write or `%s` regenerates it", vault.IndexPage, errs.Raw(err), errs.Cmd("source.rescan"))
		rc.cat = nil
	}
	w.mark("index.md")
	rc.step = "recording the write (review queue, log.md and index.md records)"
	if !out.Unchanged {
		if rc.cat != nil && rc.cat.before == nil && !rc.cat.unchanged {
			w.folders.Added(vault.WikiDir, 1)
		}
		if err := w.folders.Stamp(tx, []string{rc.path}); err != nil {
			return err
		}
	}
	if err := rc.fastForward(tx); err != nil {
		return err
	}
	if len(rc.rescan) > 0 && reservedLinks(rec) {
		// log.md or index.md is new (this write made it) or was
		// changed by hand: once it is indexed, the page's [[log]]
		// and [[index]] may reach it, so they are not filed as
		// missing pages
		rc.hookLater = true
		return nil
	}
	return w.fileMissing(tx, rc.hook, t, rec, out)
}

// fastForward brings the store records of log.md and index.md in step
// with what this write made of them, or lists them for a rescan.
func (rc *recording) fastForward(tx *store.Tx) error {
	if rc.logged != nil {
		ok, err := rc.logged.fastForward(tx)
		if err != nil {
			return err
		}
		if !ok {
			rc.rescan = append(rc.rescan, vault.LogPage)
		}
	}
	if rc.cat != nil {
		ok, err := rc.cat.fastForward(tx)
		if err != nil {
			return err
		}
		if !ok {
			rc.rescan = append(rc.rescan, vault.IndexPage)
		}
	}
	return nil
}

// afterCommit re-indexes the reserved files the commit could not bring in
// step, then files the page's dangling links if that waited for them.
func (w *pageWrite) afterCommit(ctx context.Context, rc *recording) error {
	e, out := w.e, rc.out
	if hook := e.observe.reserved; hook != nil {
		hook(rc.rescan)
	}
	if len(rc.rescan) > 0 {
		rc.step = "re-indexing " + strings.Join(rc.rescan, " and ")
		if err := w.rescan(ctx, rc.rescan); err != nil {
			return err
		}
		w.mark("rescan")
	}
	if !rc.hookLater {
		return nil
	}
	rc.step = "recording the write in the review queue"
	// View would do without a hook; Update keeps one path
	return e.Store.Update(func(tx *store.Tx) error {
		rec, err := pageAt(tx, rc.path)
		if err != nil {
			return err
		}
		linkResults(tx, rec, out, rc.t.linked)
		return w.fileMissing(tx, rc.hook, rc.t, rec, out)
	})
}

// MaxFiledPerWrite caps the dangling targets one write hands to the review
// queue: a page with thousands of distinct dangling links (a generated
// citation list, a hostile body) would otherwise file as many items while
// the store is locked. The targets past the cap are counted in the result
// (WritePageOut.NotFiled); lint --to-review files them.
const MaxFiledPerWrite = 50

// fileMissing hands the review queue the dangling targets this write adds
// (out.DanglingAdded, which linkResults filled from rec: an edit does not
// file again what it did not touch), at most MaxFiledPerWrite of them,
// and lets it auto-resolve items the page answers.
func (w *pageWrite) fileMissing(tx *store.Tx, hook pageWrittenFunc, t *target, rec *store.PageRec, out *WritePageOut) error {
	if hook == nil {
		return nil
	}
	added, more := capFiled(out.DanglingAdded)
	out.NotFiled = more
	touched, err := hook(tx, rec, added, w.c.logNote, w.now)
	if err == nil {
		var unlinked []ReviewItem
		unlinked, err = resolveUnlinked(tx, unlinkedTargets(t, rec), rec, w.now)
		touched.resolved = append(touched.resolved, unlinked...)
	}
	out.Filed, out.AutoResolved, w.resolved = touched.filed, nil, touched.resolved
	for _, it := range touched.resolved {
		out.AutoResolved = append(out.AutoResolved, it.ID)
	}
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

// linkResults fills what a write's result says of the page's links:
// those matching no page, those reaching a file, and those matching
// several pages (the total only when it is more than the list holds).
func linkResults(tx *store.Tx, rec *store.PageRec, out *WritePageOut, linked map[string]bool) {
	out.Dangling, out.LinksToFiles = linkTargets(rec)
	out.Ambiguous, out.AmbiguousTotal = pageAmbiguous(tx, rec)
	if out.AmbiguousTotal <= len(out.Ambiguous) {
		out.AmbiguousTotal = 0
	}
	out.DanglingAdded = addedDangling(rec, linked)
	for i := range out.Ambiguous {
		out.Ambiguous[i].Added = !linked[index.LinkKey(out.Ambiguous[i].Target)]
	}
}

// addedDangling returns the targets of rec's links that reach nothing
// and that the page as last indexed (linked: its link keys) did not link
// to, once each, in the order of the page.
func addedDangling(rec *store.PageRec, linked map[string]bool) []string {
	added := []string{}
	seen := map[string]bool{}
	for _, l := range rec.Links {
		if l.To != 0 || l.File != "" || seen[l.Key] || linked[l.Key] {
			continue
		}
		seen[l.Key] = true
		added = append(added, strings.TrimSuffix(l.Target, ".md"))
	}
	return added
}

// capFiled returns the first MaxFiledPerWrite of the dangling targets a
// write added, the ones it files, and how many more there are.
func capFiled(added []string) ([]string, int) {
	return added[:min(len(added), MaxFiledPerWrite)], max(0, len(added)-MaxFiledPerWrite)
}

// MaxUnlinkedPerWrite caps the missing-page items one write closes because
// it removed the last link to them (the rest stay pending).
const MaxUnlinkedPerWrite = 200

// unlinkedTargets are the dangling link targets of the page's previous
// version that this version no longer links to, at most
// MaxUnlinkedPerWrite.
func unlinkedTargets(t *target, rec *store.PageRec) []string {
	if t.rec == nil {
		return nil
	}
	now := make(map[string]bool, len(rec.Links))
	for _, l := range rec.Links {
		now[l.Key] = true
	}
	var out []string
	for _, l := range t.rec.Links {
		if l.To != 0 || l.File != "" || now[l.Key] || len(out) == MaxUnlinkedPerWrite {
			continue
		}
		now[l.Key] = true // once
		out = append(out, strings.TrimSuffix(l.Target, ".md"))
	}
	return out
}

// resolveUnlinked closes, as auto_resolved decided by rule, the pending
// missing-page items of targets that no page links to any more: the
// write removed the last link, so no page is missing. An item still
// linked from another page stays pending, and so does one a person or an
// agent proposed (review add): their reason is not the link.
func resolveUnlinked(tx *store.Tx, targets []string, page *store.PageRec, now time.Time) ([]ReviewItem, error) {
	var out []ReviewItem
	for _, name := range targets {
		r, err := tx.ReviewByKey(ReviewKey(TypeMissingPage, name))
		if err != nil {
			return out, err
		}
		if r == nil || r.Terminal() || claimed(r, now) || !producerFiled(r) || tx.HasDangling(index.LinkKey(ProposedTitle(r.Title))) {
			continue
		}
		if err := decide(tx, r, StatusAutoResolved, "no page links to it: the last link was removed from "+page.Path, OriginRule, now); err != nil {
			return out, err
		}
		out = append(out, itemOf(r))
	}
	return out, nil
}

// producerFiled reports whether synapse's own producers (a write's rule,
// lint) filed the item, not a person or an agent.
func producerFiled(r *store.ReviewRec) bool {
	return r.Origin == OriginRule || r.Origin == OriginLint
}
