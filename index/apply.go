package index

import (
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// PageIndexer receives every page change inside the scanner's write
// transaction (the search index implements it). Reserved pages are never
// passed.
type PageIndexer interface {
	IndexPages(tx *store.Tx, pages []IndexedPage) error
	RemovePages(tx *store.Tx, docs []uint32) error
}

// IndexedPage is a page as handed to a PageIndexer.
type IndexedPage struct {
	Doc    uint32
	Rec    *store.PageRec
	Parsed *markdown.Page
	// Prepared is what the PageIndexer's PreparePages made of the page
	// before the transaction (nil: nothing; see PagePreparer).
	Prepared any
}

// A PagePreparer is a PageIndexer (or wraps one, see Unwrap) that can do
// its work on pages before the write transaction that indexes them: a bulk
// scan calls PreparePages from the goroutine that reads the next batch,
// beside the transaction applying the one before, with pages that have no
// doc yet and the record fields their file determines; IndexPages then
// gets each page's value back as IndexedPage.Prepared.
type PagePreparer interface {
	PreparePages(pages []IndexedPage) []any
}

// updater applies changes inside one write transaction.
type updater struct {
	tx       *store.Tx
	tune     tuning
	keepID   func(path string) string // ScanOptions.KeepIDs, then Indexer.KeptIDs
	reserved map[uint32]bool
	adjCache map[uint32]*store.AdjRec // nil entry: node absent
	adjDirty map[uint32]bool
	// buffered dangling and off-graph counts, written sorted by
	// flushLinkCounts
	dangling    map[linkCount]int
	danglingRaw map[linkCount]string
	// danglingBySeg indexes the buffered counts by last segment
	danglingBySeg map[string][]linkCount
	applied       bool // a page was applied or removed in this transaction
	// bulk: every page of the store is being applied afresh (a full
	// reindex) and marks its own links dirty, so re-resolving the linkers
	// of each new page is redundant
	bulk bool
	// dirty marks, written sorted by finish
	linksDirty map[uint32]bool
	graphDirty map[uint32]bool
	// noGraph: the graph is rebuilt from the page records at the end of a
	// full scan (metaGraphStale), so links leave it alone meanwhile
	noGraph bool
	// ev records this transaction's graph changes when track is set (a
	// transaction that settles itself; see applyGraphEvents)
	ev      graphEvents
	track   bool
	indexed []IndexedPage
	removed []uint32
	// keyCache and fileKeyCache, when set, are drainLinks' lookups kept
	// across the transactions of one settle (no name changes meanwhile)
	keyCache, fileKeyCache map[string]match
}

func (ix *Indexer) newUpdater(tx *store.Tx) *updater {
	u := &updater{tx: tx, tune: ix.tune, reserved: map[uint32]bool{},
		adjCache: map[uint32]*store.AdjRec{}, adjDirty: map[uint32]bool{},
		linksDirty: map[uint32]bool{}, graphDirty: map[uint32]bool{}, ev: newGraphEvents(),
		keepID:   func(string) string { return "" },
		dangling: map[linkCount]int{}, danglingRaw: map[linkCount]string{},
		danglingBySeg: map[string][]linkCount{}}
	for _, p := range []string{vault.IndexPage, vault.LogPage, vault.OverviewPage} {
		if d := tx.DocByPath(p); d != 0 {
			u.reserved[d] = true
		}
	}
	u.noGraph = tx.Meta(metaGraphStale) != nil
	return u
}

func (u *updater) isReserved(doc uint32) bool { return u.reserved[doc] }

// pageChange is a parsed page ready to apply.
type pageChange struct {
	path   string
	file   store.FileRec
	parsed *markdown.Page
	pre    any // the PagePreparer's (IndexedPage.Prepared)
}

// applyPage inserts or replaces the page at c.path.
func (u *updater) applyPage(c pageChange) error {
	u.applied = true
	tx := u.tx
	doc := tx.DocByPath(c.path)
	var old *store.PageRec
	if doc != 0 {
		var err error
		if old, err = tx.Page(doc); err != nil {
			return err
		}
	}
	reserved := vault.IsReserved(c.path)
	rec := pageFields(c.path, c.parsed)
	rec.MtimeNS, rec.Size = c.file.MtimeNS, c.file.Size
	rec.SHA256 = hex.EncodeToString(c.file.SHA256[:])
	rec.ChangedNS = c.file.LastChanged
	if reserved {
		// the reserved top files (index.md links every page) keep no links
		// or tags: they are not part of the graph, backlinks, lists or
		// lint, and get_page reads their links from the file
		rec.Tags = nil
	} else {
		rec.Links, rec.FileLinks = linkRecs(c.path, c.parsed.Links)
		rec.SourceKeys = sourceKeys(rec) // before resolution: the explicit ones
	}
	// In a bulk (full) scan the other pages' names are not all present yet:
	// links stay pending until the links drain. Otherwise they are resolved
	// now, and only the difference to the old links touches the graph.
	rec.LinksPending = !reserved && u.bulk
	if old != nil {
		rec.Doc, rec.ID = old.Doc, old.ID
	} else {
		var err error
		if id := u.keepID(c.path); id != "" {
			rec.Doc, rec.ID, err = tx.NewPageWithID(c.path, id)
		} else {
			rec.Doc, rec.ID, err = tx.NewPage(c.path)
		}
		if err != nil {
			return err
		}
	}
	c.file.Doc = rec.Doc
	if reserved {
		u.reserved[rec.Doc] = true
	}
	namesChanged := old == nil || !sameNames(old, rec)
	if namesChanged {
		if err := u.markLinkers(old); err != nil {
			return err
		}
	}
	if err := tx.PutPage(rec, old); err != nil {
		return err
	}
	if err := tx.PutFile(c.path, c.file); err != nil {
		return err
	}
	if err := tx.PutCapped(c.path, cappedText(c.path, c.parsed, c.file.Size, reserved)); err != nil {
		return err
	}
	if !reserved {
		if err := u.putNode(rec, old); err != nil {
			return err
		}
		if rec.LinksPending {
			// what the old version's resolved links counted goes now
			// (a bulk scan over a store that has pages: the first scan
			// after an interrupted one)
			if old != nil && !old.LinksPending && !old.Reserved {
				if err := u.applyContrib(rec.Doc, linkContrib(old, u.isReserved), -1); err != nil {
					return err
				}
			}
			u.markLinks(rec.Doc)
		} else if err := u.resolveApplied(rec, old); err != nil {
			return err
		}
		u.indexed = append(u.indexed, IndexedPage{Doc: rec.Doc, Rec: rec, Parsed: c.parsed, Prepared: c.pre})
	}
	if namesChanged {
		return u.markLinkers(rec)
	}
	return nil
}

// pageFields returns the record fields a page's file determines (no doc,
// id, file stat or links).
func pageFields(path string, parsed *markdown.Page) *store.PageRec {
	reserved := vault.IsReserved(path)
	rec := &store.PageRec{
		Path:     path,
		Title:    parsed.Title,
		Type:     parsed.Type,
		Aliases:  parsed.Aliases,
		Tags:     parsed.Tags,
		Sources:  parsed.Sources,
		Created:  parsed.Created,
		Updated:  parsed.Updated,
		Reserved: reserved,
		FMError:  parsed.FMError,
	}
	// open types (docs/vault.md#pages): the frontmatter's well-formed type, else the
	// folder's
	if rec.Type = vault.NormalizeType(parsed.Type); reserved || rec.Type == "" {
		rec.Type = vault.TypeFromPath(path)
	} else {
		rec.TypeDeclared = true
	}
	rec.SourceKeys = sourceKeys(rec) // links add theirs (applyPage, putLinked)
	return rec
}

// linkSig identifies links that resolve alike from the same page.
type linkSig struct {
	key      string
	markdown bool
}

// resolveApplied resolves the links of a page just stored (its names are
// indexed, so self-links resolve) and applies only the difference between
// its old and new link effects: an edit that keeps its links leaves the
// graph alone. Links whose key the old version also had keep their
// resolution, which markLinkers (and the file events) keep current
// whenever names change.
func (u *updater) resolveApplied(rec, old *store.PageRec) error {
	var prev, prevFiles map[linkSig]store.LinkRec
	oldC := newContrib()
	if old != nil && !old.LinksPending && !old.Reserved {
		oldC = linkContrib(old, u.isReserved)
		if old.Path == rec.Path {
			prev = make(map[linkSig]store.LinkRec, len(old.Links))
			for _, l := range old.Links {
				prev[linkSig{l.Key, l.Markdown}] = l
			}
			prevFiles = make(map[linkSig]store.LinkRec, len(old.FileLinks))
			for _, l := range old.FileLinks {
				prevFiles[linkSig{l.Key, l.Markdown}] = l
			}
		}
	}
	set := func(l *store.LinkRec, r Resolution) {
		l.To, l.File, l.ToReserved = r.Doc, r.File, r.Reserved
		if r.Candidates > 1 {
			l.Ambiguous = r.Candidates
		}
	}
	for i := range rec.Links {
		l := &rec.Links[i]
		if p, ok := prev[linkSig{l.Key, l.Markdown}]; ok && p.To != rec.Doc {
			l.To, l.File, l.Ambiguous, l.ToReserved = p.To, p.File, p.Ambiguous, p.ToReserved
			continue
		}
		set(l, Resolve(u.tx, l.Key, rec.Path, l.Markdown))
	}
	for i := range rec.FileLinks {
		l := &rec.FileLinks[i]
		if p, ok := prevFiles[linkSig{l.Key, l.Markdown}]; ok {
			l.File, l.Ambiguous = p.File, p.Ambiguous
			continue
		}
		set(l, ResolveFileLink(u.tx, *l, rec.Path))
	}
	if err := u.applyContrib(rec.Doc, diffContrib(linkContrib(rec, u.isReserved), oldC), +1); err != nil {
		return err
	}
	return u.putLinked(rec)
}

// markLinkers queues for re-resolution every page whose links could
// resolve differently now that a page with these names appeared, changed or
// vanished: pages linking to any page that shares one of the names (a new
// page may now win, a vanished one may leave a rival), and pages with
// unresolved links to those names. Call it while the names are indexed
// (before removing an old version, after adding a new one).
func (u *updater) markLinkers(r *store.PageRec) error {
	if r == nil || u.bulk {
		return nil
	}
	names := append([]string{store.Stem(r.Path), r.Title}, r.Aliases...)
	seenDoc := map[uint32]bool{}
	seenName := map[string]bool{}
	for _, n := range names {
		f := store.Fold(n)
		if seenName[f] {
			continue
		}
		seenName[f] = true
		for _, kind := range []byte{store.NameFile, store.NameTitle, store.NameAlias} {
			for _, c := range u.tx.LookupName(kind, f) {
				if seenDoc[c.Doc] {
					continue
				}
				seenDoc[c.Doc] = true
				// the page itself: a link of its own that reaches it (a
				// self-link, which is no graph edge) may now reach the
				// other page, or the reverse
				if !vault.IsReserved(c.Path) {
					u.markLinks(c.Doc)
				}
				// the node as this transaction left it: links resolved
				// earlier in the same transaction count too
				a, err := u.adj(c.Doc)
				if err != nil {
					return err
				}
				if a != nil {
					for _, e := range a.Edges {
						if e.In > 0 {
							u.markLinks(e.To)
						}
					}
				}
			}
		}
		u.markBySegment(store.LastSegment(f))
	}
	return nil
}

// markBySegment queues for re-resolution the pages whose links with this
// last segment reach no page (dangling) or no graph node (a reserved top
// file, a file that is no page, a file link): a page or a file with that
// name that appears or vanishes may change where they lead.
func (u *updater) markBySegment(seg string) {
	for _, d := range u.tx.DanglingBySegment(seg) {
		u.markLinks(d)
	}
	for _, d := range u.tx.OffGraphBySegment(seg) {
		u.markLinks(d)
	}
	for _, k := range u.danglingBySeg[seg] {
		if u.dangling[k] > 0 {
			u.markLinks(k.src) // such links added in this transaction
		}
	}
}

// putFile stores the record of a tracked file that is no page (a raw
// source, an attachment); a new one is indexed by name and path, and the
// links that may reach it now are re-resolved.
func (u *updater) putFile(p string, f store.FileRec) error {
	if err := u.tx.PutFile(p, f); err != nil {
		return err
	}
	if vault.IsPagePath(p) || u.tx.HasFileName(p) {
		return nil
	}
	if err := u.tx.PutFileName(p); err != nil {
		return err
	}
	u.fileNamesChanged(p)
	return nil
}

// removeFile forgets a tracked file that is no page; the links that
// reached it (or could have) are re-resolved.
func (u *updater) removeFile(p string) error {
	if err := u.tx.DeleteFile(p); err != nil {
		return err
	}
	if !u.tx.HasFileName(p) {
		return nil
	}
	if err := u.tx.DeleteFileName(p); err != nil {
		return err
	}
	u.fileNamesChanged(p)
	return nil
}

func (u *updater) fileNamesChanged(p string) {
	if !u.bulk {
		u.markBySegment(store.FileName(p))
	}
}

// removePage deletes the page at path (a no-op when unknown).
func (u *updater) removePage(path string) error {
	u.applied = true
	if !vault.IsPagePath(path) {
		return u.removeFile(path) // a raw source or an attachment
	}
	tx := u.tx
	doc := tx.DocByPath(path)
	if doc == 0 {
		return tx.DeleteFile(path)
	}
	old, err := tx.Page(doc)
	if err != nil {
		return err
	}
	if old == nil || old.Path != path {
		// no page, or the page of a twin (a name that differs only by
		// case or normalization): only this file's record goes
		return tx.DeleteFile(path)
	}
	if err := u.markLinkers(old); err != nil {
		return err
	}
	if err := u.applyContrib(doc, linkContrib(old, u.isReserved), -1); err != nil {
		return err
	}
	if !old.Reserved {
		if err := u.dropNode(doc); err != nil {
			return err
		}
		u.removed = append(u.removed, doc)
	}
	if err := tx.DeletePage(old); err != nil {
		return err
	}
	delete(u.linksDirty, doc)
	if err := tx.ClearLinksDirty([]uint32{doc}); err != nil {
		return err
	}
	delete(u.reserved, doc)
	if err := tx.PutCapped(path, ""); err != nil {
		return err
	}
	return tx.DeleteFile(path)
}

// cappedText is what a page left out past the parse limits, as the store
// lists it ("" when nothing), and a page of size bytes over the write cap.
// The reserved top files keep no links, so the links they hold past the
// limit are no loss, and page writes never replace them.
func cappedText(path string, p *markdown.Page, size int64, reserved bool) string {
	cs := p.Capped
	if reserved {
		cs = slices.DeleteFunc(slices.Clone(cs), func(c markdown.Capped) bool { return c.Limit == "links" || c.Limit == "scan_bytes" })
	} else if size > MaxWriteBytes {
		cs = append(slices.Clone(cs), markdown.Capped{Limit: "write_bytes", Message: fmt.Sprintf(
			"%d bytes, over the %d bytes (1 MiB) a write may replace: page get returns its outline, a section at a time with --section; "+
				"frontmatter-only writes and section writes that do not lengthen it work; split it into pages of at most 1 MiB", size, MaxWriteBytes)})
	}
	if len(cs) == 0 {
		return ""
	}
	return path + ": " + markdown.CappedText(cs)
}

// finish writes everything the updater buffered; call it last in every
// transaction that used the updater.
func (u *updater) finish(ix PageIndexer) error {
	if err := u.flushIndexer(ix); err != nil {
		return err
	}
	if err := u.flushLinkCounts(); err != nil {
		return err
	}
	if err := u.flushAdj(); err != nil {
		return err
	}
	if err := flushMarks(u.linksDirty, u.tx.MarkLinksDirty); err != nil {
		return err
	}
	return flushMarks(u.graphDirty, u.tx.MarkGraphDirty)
}

func (u *updater) markLinks(doc uint32) { u.linksDirty[doc] = true }

// smallSettle bounds the link resolutions and graph nodes that a scan's
// batch transaction settles itself; larger sets are drained by settle in
// bounded transactions of their own.
const smallSettle = 500

// settleSmall drains the links and graph work of this transaction when it
// is small, so a single page change commits once: its graph changes are
// re-weighed exactly where they matter (applyGraphEvents) instead of
// around every node they touched.
func (u *updater) settleSmall() error {
	if err := flushMarks(u.linksDirty, u.tx.MarkLinksDirty); err != nil {
		return err
	}
	if n := len(u.tx.LinksDirty(smallSettle + 1)); n > 0 && n <= smallSettle {
		if _, err := u.drainLinks(0); err != nil {
			return err
		}
	}
	if u.track && len(u.graphDirty) <= smallSettle {
		if err := u.applyGraphEvents(); err != nil {
			return err
		}
	}
	if err := flushMarks(u.graphDirty, u.tx.MarkGraphDirty); err != nil {
		return err
	}
	if n := len(u.tx.GraphDirty(smallSettle + 1)); n > 0 && n <= smallSettle {
		if _, err := u.drainGraph(0); err != nil {
			return err
		}
	}
	return nil
}
func (u *updater) markGraph(doc uint32) { u.graphDirty[doc] = true }

// flushMarks writes a set of doc marks in key order and empties it.
func flushMarks(set map[uint32]bool, put func(uint32) error) error {
	docs := make([]uint32, 0, len(set))
	for d := range set {
		docs = append(docs, d)
	}
	slices.Sort(docs)
	for _, d := range docs {
		if err := put(d); err != nil {
			return err
		}
	}
	clear(set)
	return nil
}

// flushIndexer hands the batch's page changes to the search indexer.
func (u *updater) flushIndexer(ix PageIndexer) error {
	if ix == nil {
		return nil
	}
	if len(u.removed) > 0 {
		if err := ix.RemovePages(u.tx, u.removed); err != nil {
			return err
		}
	}
	if len(u.indexed) > 0 {
		if err := ix.IndexPages(u.tx, u.indexed); err != nil {
			return err
		}
	}
	u.indexed, u.removed = nil, nil
	return nil
}
