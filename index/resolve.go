package index

import (
	"path"
	"sort"
	"strings"

	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// Resolution is where a link target leads.
type Resolution struct {
	Doc        uint32 // 0 when unresolved
	Candidates int    // pages that matched at the deciding step (>1: ambiguous)
	By         string // "path", "suffix", "file", "title", "alias", or ""
}

// Resolve resolves a link key (see LinkKey) written in the page at
// srcPath, as Obsidian 1.13 does (SPEC §2.2): a path relative to the
// linking page (markdown links, and wikilinks written "../x"), to the
// vault or to wiki/; a unique path suffix; then file name, title, alias —
// each case-insensitive and NFC. Several matches at one step are broken
// by pickFrom: a match in the linking page's own folder, then the shortest
// path, then the lexicographically first; the ambiguity is reported.
// Reserved top files are chosen only when nothing else matches.
func Resolve(tx *store.Tx, key, srcPath string, markdownLink bool) Resolution {
	return lookup(tx, key, srcPath, markdownLink).pickFrom(srcPath)
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

func lookup(tx *store.Tx, key, srcPath string, markdownLink bool) match {
	if key == "" {
		return match{}
	}
	rel := relativeKey(key, markdownLink)
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
			return match{cands: []store.NameCandidate{{Doc: d, Path: p}}, by: "path", relative: rel}
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
		if len(cands) > 0 {
			return match{cands: cands, by: "suffix", relative: rel}
		}
		// a title or alias may itself contain a slash
		for _, step := range []struct {
			kind byte
			by   string
		}{{store.NameTitle, "title"}, {store.NameAlias, "alias"}} {
			if c := tx.LookupName(step.kind, key); len(c) > 0 {
				return match{cands: c, by: step.by, relative: rel}
			}
		}
		return match{relative: rel}
	}
	// 3–5. file name, title, alias
	for _, step := range []struct {
		kind byte
		by   string
	}{{store.NameFile, "file"}, {store.NameTitle, "title"}, {store.NameAlias, "alias"}} {
		if c := tx.LookupName(step.kind, key); len(c) > 0 {
			return match{cands: c, by: step.by, relative: rel}
		}
	}
	return match{relative: rel}
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
		return Resolution{Doc: c[0].Doc, Candidates: 1, By: m.by}
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
	return Resolution{Doc: c[best].Doc, Candidates: len(c), By: m.by}
}

// contrib is the effect of a page's links on backlinks, dangling links and
// graph directions.
type contrib struct {
	to       map[uint32]int    // resolved target doc → link count
	dangling map[string]int    // folded key → count
	raw      map[string]string // folded key → first written form
}

func linkContrib(src *store.PageRec, isReserved func(uint32) bool) contrib {
	c := contrib{to: map[uint32]int{}, dangling: map[string]int{}, raw: map[string]string{}}
	if src.Reserved || src.LinksPending {
		return c
	}
	for _, l := range src.Links {
		switch {
		case l.To == 0:
			c.dangling[l.Key]++
			if _, ok := c.raw[l.Key]; !ok {
				c.raw[l.Key] = strings.TrimSuffix(l.Target, ".md")
			}
		case l.To == src.Doc || isReserved(l.To):
			// self links and links to index/log/overview stay out of the graph
		default:
			c.to[l.To]++
		}
	}
	return c
}

// applyContrib adds (sign +1) or removes (sign -1) a page's link effects:
// link counts on graph edges (which are also the backlinks) and buffered
// dangling counts, written in key order by finish.
func (u *updater) applyContrib(src uint32, c contrib, sign int) error {
	for k, n := range c.dangling {
		dk := danglingKey{key: k, src: src}
		if _, ok := u.dangling[dk]; !ok && sign*n > 0 {
			seg := store.LastSegment(k)
			u.danglingBySeg[seg] = append(u.danglingBySeg[seg], dk)
		}
		u.dangling[dk] += sign * n
		if _, ok := u.danglingRaw[dk]; !ok && c.raw[k] != "" {
			u.danglingRaw[dk] = c.raw[k]
		}
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

type danglingKey struct {
	key string
	src uint32
}

// flushLinkCounts writes buffered dangling counts in key order.
func (u *updater) flushLinkCounts() error {
	dks := make([]danglingKey, 0, len(u.dangling))
	for k, n := range u.dangling {
		if n != 0 {
			dks = append(dks, k)
		}
	}
	sort.Slice(dks, func(i, j int) bool {
		if dks[i].key != dks[j].key {
			return dks[i].key < dks[j].key
		}
		return dks[i].src < dks[j].src
	})
	for _, k := range dks {
		if err := u.tx.AddDangling(k.key, u.danglingRaw[k], k.src, u.dangling[k]); err != nil {
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
	d := contrib{to: map[uint32]int{}, dangling: map[string]int{}, raw: map[string]string{}}
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
	return d
}

// drainLinks resolves the links of up to max pages in links_dirty (all
// when max <= 0) and reports how many remain.
func (u *updater) drainLinks(max int) (int, error) {
	tx := u.tx
	docs := tx.LinksDirty(max)
	// names do not change during a drain, so a key that is not resolved
	// relative to its page matches the same candidates from every page;
	// only the folder tie-break (pickFrom) differs
	cache := map[string]match{}
	for _, doc := range docs {
		p, err := tx.Page(doc)
		if err != nil {
			return 0, err
		}
		if p == nil || p.Reserved {
			continue
		}
		old := linkContrib(p, u.isReserved)
		changed := p.LinksPending
		for i := range p.Links {
			l := &p.Links[i]
			m, ok := cache[l.Key]
			if !ok || relativeKey(l.Key, l.Markdown) {
				m = lookup(tx, l.Key, p.Path, l.Markdown)
				if !m.relative {
					cache[l.Key] = m
				}
			}
			r := m.pickFrom(p.Path)
			amb := 0
			if r.Candidates > 1 {
				amb = r.Candidates
			}
			if l.To != r.Doc || l.Ambiguous != amb {
				changed = true
				l.To, l.Ambiguous = r.Doc, amb
			}
		}
		if !changed {
			continue
		}
		if err := u.applyContrib(doc, old, -1); err != nil {
			return 0, err
		}
		p.LinksPending = false
		if err := u.applyContrib(doc, linkContrib(p, u.isReserved), +1); err != nil {
			return 0, err
		}
		if err := tx.PutPageLinks(p); err != nil {
			return 0, err
		}
	}
	if err := tx.ClearLinksDirty(docs); err != nil {
		return 0, err
	}
	return len(tx.LinksDirty(1)), nil
}
