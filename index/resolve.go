package index

import (
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// Resolution is where a link target leads.
type Resolution struct {
	Doc uint32 // 0 when no page answers
	// File is the vault path of the file that is no page (a raw source,
	// an attachment) that answers when no page does; "" otherwise.
	File       string
	Candidates int    // pages (or files) that matched at the deciding step (>1: ambiguous)
	By         string // "path", "suffix", "file", "title", "alias", or ""
	// Reserved is set when Doc is a reserved top file (no graph node).
	Reserved bool
}

// Resolved reports whether the link reaches a page or a file.
func (r Resolution) Resolved() bool { return r.Doc != 0 || r.File != "" }

// Resolve resolves a link key (see LinkKey) written in the page at
// srcPath, as Obsidian 1.13 does (docs/vault.md#links): a path relative to the
// linking page (markdown links, and wikilinks written "../x"), to the
// vault or to wiki/; a unique path suffix; then file name, title, alias —
// each case-insensitive and NFC. Several matches at one step are broken
// by pickFrom: a match in the linking page's own folder, then the shortest
// path, then the lexicographically first; the ambiguity is reported.
// For a bare name ([[index]]), the reserved top files are chosen only
// when no other page matches at any step. When no
// page answers, a tracked file that is no page may (Resolution.File): a
// raw source or an attachment, found by the same steps (path, suffix, file
// name), as Obsidian resolves any file of the vault by name; pages win.
func Resolve(tx *store.Tx, key, srcPath string, markdownLink bool) Resolution {
	return lookupAny(tx, key, srcPath, markdownLink).pickFrom(srcPath)
}

// Matches returns the pages (or, when no page matches, the files) that a
// link key matches at the step that decides its resolution: Resolve picks
// one of them, and more than one is an ambiguity worth telling.
func Matches(tx *store.Tx, key, srcPath string, markdownLink bool) []store.NameCandidate {
	return lookupAny(tx, key, srcPath, markdownLink).cands
}

// ResolveFileLink resolves a link that can name only a file that is no
// page (see linkRecs): an explicit path outside wiki/ reaches the file at
// that path (case-insensitively), if it is tracked; an attachment name is
// looked up as a page link's name is, among files.
func ResolveFileLink(tx *store.Tx, l store.LinkRec, srcPath string) Resolution {
	return lookupFileLink(tx, l, srcPath).pickFrom(srcPath)
}

func lookupFileLink(tx *store.Tx, l store.LinkRec, srcPath string) match {
	if p := fileTarget(srcPath, l.Target, l.Markdown); p != "" {
		return match{cands: tx.FilesAt(store.PathKey(p)), by: "path", relative: true}
	}
	return lookupFile(tx, l.Key, srcPath, l.Markdown)
}

// lookupAny is lookup, then lookupFile when no page matched.
func lookupAny(tx *store.Tx, key, srcPath string, markdownLink bool) match {
	return lookupAnyIn(tx, tx, key, srcPath, markdownLink)
}

// lookupAnyIn is lookupAny with the pages' paths and names read from n.
func lookupAnyIn(n names, tx *store.Tx, key, srcPath string, markdownLink bool) match {
	m := lookup(n, key, srcPath, markdownLink)
	if len(m.cands) == 0 && key != "" {
		f := lookupFile(tx, key, srcPath, markdownLink)
		f.relative = f.relative || m.relative
		return f
	}
	return m
}

// lookupFile finds the tracked files that are no page matching a key:
// exact paths (relative to the linking page for relative keys, to the
// vault, to wiki/), a unique path suffix, then the file name (".md"
// dropped from both). Candidates have Doc 0.
func lookupFile(tx *store.Tx, key, srcPath string, markdownLink bool) match {
	rel := relativeKey(key, markdownLink)
	var paths []string
	if rel && srcPath != "" {
		paths = append(paths, joinInVault(path.Dir(srcPath), key))
	}
	paths = append(paths, key, vault.WikiDir+"/"+key)
	for _, p := range paths {
		if strings.HasPrefix(p, "../") || p == ".." {
			continue
		}
		if c := tx.FilesAt(store.PathKey(p)); len(c) > 0 {
			return match{cands: c, by: "path", relative: rel}
		}
	}
	seg := store.LastSegment(key)
	if strings.Contains(key, "/") {
		var cands []store.NameCandidate
		for _, c := range tx.FilesNamed(seg) {
			if strings.HasSuffix(store.PathKey(c.Path), "/"+key) {
				cands = append(cands, c)
			}
		}
		return match{cands: cands, by: "suffix", relative: rel}
	}
	return match{cands: tx.FilesNamed(key), by: "file", relative: rel}
}

// match is what a key matches at the deciding step of resolution, before
// the linking page's folder breaks a tie: it depends on the linking page
// only through relative paths (relative reports those), so a drain can
// share it between pages.
type match struct {
	cands    []store.NameCandidate
	by       string
	relative bool // the key was tried relative to the linking page
}

// relativeKey reports whether a link is resolved against the linking
// page's folder first: markdown links always, wikilinks written "../x".
func relativeKey(key string, markdownLink bool) bool {
	return markdownLink || strings.HasPrefix(key, "../")
}

// names is where lookup finds pages by path and by name: the store, or
// the store as it will be after a move (movedNames).
type names interface {
	DocByPath(vaultPath string) uint32
	LookupName(kind byte, name string) []store.NameCandidate
}

func lookup(tx names, key, srcPath string, markdownLink bool) match {
	if key == "" {
		return match{}
	}
	rel := relativeKey(key, markdownLink)
	// for a bare name, a step that matches only reserved top files (index,
	// log, overview) decides nothing: they are chosen only when nothing
	// else matches ([[index]] reaches wiki/notes/index.md when it exists);
	// a path (markdown links, [[wiki/index]], [[../index]]) is taken as
	// written
	bare := !rel && !strings.Contains(key, "/")
	var reserved *match
	decide := func(m match) bool {
		if len(m.cands) == 0 {
			return false
		}
		if !bare {
			return true
		}
		for _, c := range m.cands {
			if !vault.IsReserved(c.Path) {
				return true
			}
		}
		if reserved == nil {
			reserved = &m
		}
		return false
	}
	last := func() match {
		if reserved != nil {
			return *reserved
		}
		return match{relative: rel}
	}
	// 1. exact paths
	var paths []string
	if rel && srcPath != "" {
		paths = append(paths, joinInVault(path.Dir(srcPath), key))
	}
	paths = append(paths, key, vault.WikiDir+"/"+key)
	for _, p := range paths {
		if strings.HasPrefix(p, "../") || p == ".." {
			continue
		}
		if d := tx.DocByPath(p); d != 0 {
			m := match{cands: []store.NameCandidate{{Doc: d, Path: reservedPath(p)}}, by: "path", relative: rel}
			if decide(m) {
				return m
			}
		}
	}
	seg := store.LastSegment(key)
	// 2. a unique path suffix (only meaningful for keys with folders)
	if strings.Contains(key, "/") {
		var cands []store.NameCandidate
		for _, c := range tx.LookupName(store.NameFile, seg) {
			pk := store.PathKey(c.Path)
			if strings.HasSuffix(pk, "/"+key) {
				cands = append(cands, c)
			}
		}
		if m := (match{cands: cands, by: "suffix", relative: rel}); decide(m) {
			return m
		}
		// a title or alias may itself contain a slash
		for _, step := range []struct {
			kind byte
			by   string
		}{{store.NameTitle, "title"}, {store.NameAlias, "alias"}} {
			if m := (match{cands: tx.LookupName(step.kind, key), by: step.by, relative: rel}); decide(m) {
				return m
			}
		}
		return last()
	}
	// 3–5. file name, title, alias
	for _, step := range []struct {
		kind byte
		by   string
	}{{store.NameFile, "file"}, {store.NameTitle, "title"}, {store.NameAlias, "alias"}} {
		if m := (match{cands: tx.LookupName(step.kind, key), by: step.by, relative: rel}); decide(m) {
			return m
		}
	}
	return last()
}

// reservedPath returns the path of the reserved top file whose page_path
// key is p's, else p (only reserved paths matter to lookup's candidates).
func reservedPath(p string) string {
	k := store.PathKey(p)
	for _, r := range []string{vault.IndexPage, vault.LogPage, vault.OverviewPage} {
		if store.PathKey(r) == k {
			return r
		}
	}
	return p
}

// pickFrom chooses among the candidates for a link in the page at
// srcPath: non-reserved pages first, then one in the linking page's own
// folder (ancestor folders count for nothing: en/x.md's [[y]] reaches
// en/y.md, ru/x.md's reaches ru/y.md), then the shortest path, then the
// lexicographically smallest. Candidates counts every match.
func (m match) pickFrom(srcPath string) Resolution {
	c := m.cands
	if len(c) == 0 {
		return Resolution{}
	}
	if len(c) == 1 {
		return m.result(0, 1)
	}
	best := -1
	dir := path.Dir(srcPath)
	rank := func(x store.NameCandidate) int {
		r := 0
		if vault.IsReserved(x.Path) {
			r += 2
		}
		if srcPath == "" || path.Dir(x.Path) != dir {
			r++
		}
		return r
	}
	for i, x := range c {
		if best < 0 {
			best = i
			continue
		}
		b := c[best]
		ri, rb := rank(x), rank(b)
		switch {
		case ri != rb:
			if ri < rb {
				best = i
			}
		case len(x.Path) != len(b.Path):
			if len(x.Path) < len(b.Path) {
				best = i
			}
		case x.Path < b.Path:
			best = i
		}
	}
	return m.result(best, len(c))
}

func (m match) result(i, n int) Resolution {
	c := m.cands[i]
	r := Resolution{Doc: c.Doc, Candidates: n, By: m.by, Reserved: vault.IsReserved(c.Path)}
	if c.Doc == 0 {
		r.File = c.Path
	}
	return r
}

// contrib is the effect of a page's links on backlinks, dangling links,
// off-graph links and graph directions.
type contrib struct {
	to       map[uint32]int    // resolved target doc → link count
	dangling map[string]int    // folded key → count
	raw      map[string]string // folded key → first written form
	offgraph map[string]int    // offKey → count (see store.AddOffGraph)
}

func newContrib() contrib {
	return contrib{to: map[uint32]int{}, dangling: map[string]int{}, raw: map[string]string{}, offgraph: map[string]int{}}
}

// offKey is the key a link is filed under among the off-graph links: its
// key, with a Windows path's backslashes as slashes so that its last
// segment is the file name it names.
func offKey(k string) string { return strings.ReplaceAll(k, "\\", "/") }

func linkContrib(src *store.PageRec, isReserved func(uint32) bool) contrib {
	c := newContrib()
	if src.Reserved || src.LinksPending {
		return c
	}
	for _, l := range src.Links {
		switch {
		case l.To == 0 && l.File == "":
			c.dangling[l.Key]++
			if _, ok := c.raw[l.Key]; !ok {
				c.raw[l.Key] = strings.TrimSuffix(l.Target, ".md")
			}
		case l.To == src.Doc:
			// a self link stays out of the graph (markLinkers finds it)
		case l.To == 0 || l.ToReserved || isReserved(l.To):
			// a file that is no page, or index/log/overview: no graph node
			c.offgraph[offKey(l.Key)]++
		default:
			c.to[l.To]++
		}
	}
	for _, l := range src.FileLinks {
		c.offgraph[offKey(l.Key)]++
	}
	return c
}

// applyContrib adds (sign +1) or removes (sign -1) a page's link effects:
// link counts on graph edges (which are also the backlinks) and buffered
// dangling and off-graph counts, written in key order by finish.
func (u *updater) applyContrib(src uint32, c contrib, sign int) error {
	for k, n := range c.dangling {
		u.bufferCount(linkCount{kind: countDangling, key: k, src: src}, sign*n, c.raw[k])
	}
	for k, n := range c.offgraph {
		u.bufferCount(linkCount{kind: countOffGraph, key: k, src: src}, sign*n, "")
	}
	if u.noGraph {
		return nil // the graph is rebuilt from the records
	}
	for dst, n := range c.to {
		if err := u.addLinks(src, dst, sign*n); err != nil {
			return err
		}
	}
	return nil
}

// Kinds of buffered link counts.
const (
	countDangling byte = 'd' // store.AddDangling
	countOffGraph byte = 'o' // store.AddOffGraph
)

// linkCount is one buffered count: links from src under a folded key.
type linkCount struct {
	kind byte
	key  string
	src  uint32
}

func (u *updater) bufferCount(k linkCount, n int, raw string) {
	if _, ok := u.dangling[k]; !ok && n > 0 {
		seg := store.LastSegment(k.key)
		u.danglingBySeg[seg] = append(u.danglingBySeg[seg], k)
	}
	u.dangling[k] += n
	if _, ok := u.danglingRaw[k]; !ok && raw != "" {
		u.danglingRaw[k] = raw
	}
}

// flushLinkCounts writes buffered dangling and off-graph counts in key
// order.
func (u *updater) flushLinkCounts() error {
	dks := make([]linkCount, 0, len(u.dangling))
	for k, n := range u.dangling {
		if n != 0 {
			dks = append(dks, k)
		}
	}
	sort.Slice(dks, func(i, j int) bool {
		if dks[i].kind != dks[j].kind {
			return dks[i].kind < dks[j].kind
		}
		if dks[i].key != dks[j].key {
			return dks[i].key < dks[j].key
		}
		return dks[i].src < dks[j].src
	})
	for _, k := range dks {
		var err error
		if k.kind == countOffGraph {
			err = u.tx.AddOffGraph(k.key, k.src, u.dangling[k])
		} else {
			err = u.tx.AddDangling(k.key, u.danglingRaw[k], k.src, u.dangling[k])
		}
		if err != nil {
			return err
		}
	}
	clear(u.dangling)
	clear(u.danglingRaw)
	clear(u.danglingBySeg)
	return nil
}

// diffContrib returns a − b, keeping the written forms of a's dangling
// targets (applied with sign +1, negative counts remove).
func diffContrib(a, b contrib) contrib {
	d := newContrib()
	for k, n := range a.to {
		d.to[k] += n
	}
	for k, n := range b.to {
		d.to[k] -= n
	}
	for k, n := range a.dangling {
		d.dangling[k] += n
		d.raw[k] = a.raw[k]
	}
	for k, n := range b.dangling {
		d.dangling[k] -= n
	}
	for k, n := range a.offgraph {
		d.offgraph[k] += n
	}
	for k, n := range b.offgraph {
		d.offgraph[k] -= n
	}
	for k, n := range d.to {
		if n == 0 {
			delete(d.to, k)
		}
	}
	for k, n := range d.dangling {
		if n == 0 {
			delete(d.dangling, k)
		}
	}
	for k, n := range d.offgraph {
		if n == 0 {
			delete(d.offgraph, k)
		}
	}
	return d
}

// drainLinks resolves the links of up to max pages in links_dirty (all
// when max <= 0) and reports how many remain.
//
// It reads the pages a chunk at a time and looks up the keys of a chunk
// that no earlier lookup answered, in sorted order (neighbouring keys
// share b-tree pages), before resolving any of its links. The store pages
// a bulk drain maps are kept in bounds by the scan's store.GovernMapped
// (each lookup maps ~128 KB of the file around the leaf it reads: 5000
// pages' lookups mapped ~270 MB of a 100k-page store); releasing them at
// fixed points instead cost more CPU in page faults for no lower peak.
func (u *updater) drainLinks(max int) (int, error) {
	tx := u.tx
	docs := tx.LinksDirty(max)
	// names do not change during a drain, so a key that is not resolved
	// relative to its page matches the same candidates from every page;
	// only the folder tie-break (pickFrom) differs. A relative key
	// matches the same from every page of one folder.
	cache, fileCache := u.keyCache, u.fileKeyCache
	if cache == nil {
		cache, fileCache = map[string]match{}, map[string]match{}
	}
	for lo := 0; lo < len(docs); lo += drainChunk {
		chunk := docs[lo:min(lo+drainChunk, len(docs))]
		pages := make([]*store.PageRec, 0, len(chunk))
		for _, doc := range chunk {
			p, err := tx.Page(doc)
			if err != nil {
				return 0, err
			}
			if p != nil && !p.Reserved {
				pages = append(pages, p)
			}
		}
		rel := prefetchLookups(tx, pages, cache)
		for _, p := range pages {
			if err := u.resolvePage(p, cache, fileCache, rel); err != nil {
				return 0, err
			}
		}
	}
	if err := tx.ClearLinksDirty(docs); err != nil {
		return 0, err
	}
	return len(tx.LinksDirty(1)), nil
}

// relLookup is a relative link key as seen from one folder (lookupAny
// depends on the linking page only through its folder).
type relLookup struct {
	dir, key string
	markdown bool
}

func relLookupOf(srcPath string, l *store.LinkRec) relLookup {
	if srcPath == "" {
		return relLookup{key: l.Key, markdown: l.Markdown} // no folder to start from
	}
	return relLookup{dir: path.Dir(srcPath) + "/", key: l.Key, markdown: l.Markdown}
}

// prefetchLookups looks up, in sorted order, the page links' keys that
// cache does not answer: plain keys into cache, relative keys into the
// map it returns.
func prefetchLookups(tx *store.Tx, pages []*store.PageRec, cache map[string]match) map[relLookup]match {
	var keys []string
	seen := map[string]bool{}
	rel := map[relLookup]match{}
	var rels []relLookup
	from := map[relLookup]string{} // a linking page in that folder
	for _, p := range pages {
		for i := range p.Links {
			l := &p.Links[i]
			if relativeKey(l.Key, l.Markdown) {
				r := relLookupOf(p.Path, l)
				if _, ok := from[r]; !ok {
					from[r] = p.Path
					rels = append(rels, r)
				}
				continue
			}
			if _, ok := cache[l.Key]; !ok && !seen[l.Key] {
				seen[l.Key] = true
				keys = append(keys, l.Key)
			}
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		cache[k] = lookupAny(tx, k, "", false)
	}
	slices.SortFunc(rels, func(a, b relLookup) int {
		return strings.Compare(a.dir+a.key, b.dir+b.key)
	})
	for _, r := range rels {
		rel[r] = lookupAny(tx, r.key, from[r], r.markdown)
	}
	return rel
}

// resolvePage resolves a page's links (and file links) from the drain's
// lookups and stores it when a resolution changed.
func (u *updater) resolvePage(p *store.PageRec, cache, fileCache map[string]match, rel map[relLookup]match) error {
	tx := u.tx
	doc := p.Doc
	old := linkContrib(p, u.isReserved)
	changed := p.LinksPending
	set := func(l *store.LinkRec, m match) {
		r := m.pickFrom(p.Path)
		amb := 0
		if r.Candidates > 1 {
			amb = r.Candidates
		}
		if l.To != r.Doc || l.File != r.File || l.Ambiguous != amb || l.ToReserved != r.Reserved {
			changed = true
			l.To, l.File, l.Ambiguous, l.ToReserved = r.Doc, r.File, amb, r.Reserved
		}
	}
	for i := range p.Links {
		l := &p.Links[i]
		var m match
		if relativeKey(l.Key, l.Markdown) {
			var ok bool
			if m, ok = rel[relLookupOf(p.Path, l)]; !ok {
				m = lookupAny(tx, l.Key, p.Path, l.Markdown)
			}
		} else {
			var ok bool
			if m, ok = cache[l.Key]; !ok {
				m = lookupAny(tx, l.Key, p.Path, l.Markdown)
				cache[l.Key] = m
			}
		}
		set(l, m)
	}
	for i := range p.FileLinks {
		l := &p.FileLinks[i]
		m, ok := fileCache[l.Key]
		if !ok {
			m = lookupFileLink(tx, *l, p.Path)
			if !m.relative {
				fileCache[l.Key] = m
			}
		}
		set(l, m)
	}
	if !changed {
		return nil
	}
	if err := u.applyContrib(doc, old, -1); err != nil {
		return err
	}
	p.LinksPending = false
	if err := u.applyContrib(doc, linkContrib(p, u.isReserved), +1); err != nil {
		return err
	}
	return u.putLinked(p)
}

// drainChunk is how many pages' links drainLinks reads and looks up
// together; a variable for tests.
var drainChunk = 1000

// putLinked stores a page whose links were just resolved. The raw
// sources it cites follow its links (sourceKeys): when they changed, its
// cites index and graph node are rewritten too.
func (u *updater) putLinked(p *store.PageRec) error {
	keys := sourceKeys(p)
	if slices.Equal(keys, p.SourceKeys) {
		return u.tx.PutPageLinks(p)
	}
	prev := *p
	p.SourceKeys = keys
	if err := u.tx.PutPage(p, &prev); err != nil {
		return err
	}
	return u.putNode(p, &prev)
}
