package ops

import (
	"path"
	"sort"
	"strconv"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
)

// ambiguousFindings collects lint's ambiguous links: links whose target
// matches several pages where the tie-break guessed (the shortest path or
// name order chose; the linking page's folder did not), grouped by target
// and page chosen. The link still reaches the page Obsidian would open;
// the finding says which others it could have meant.
type ambiguousFindings struct {
	byKey map[string]*ambiguousGroup
	order []*ambiguousGroup
	// resolved caches a resolution by link key, folder and kind: every
	// page of a folder resolves a target the same way.
	resolved map[string]index.Resolution
}

type ambiguousGroup struct {
	LintAmbiguousLink
	key      string // the link key, to list the candidates
	from     string // a linking page's path (the candidates do not depend on it)
	markdown bool
	to       uint32
	pages    map[uint32]int // linking page → links
}

func newAmbiguousFindings() *ambiguousFindings {
	return &ambiguousFindings{byKey: map[string]*ambiguousGroup{}, resolved: map[string]index.Resolution{}}
}

// add collects the ambiguous links of one page. The stored links say
// which matched several pages; the resolution is asked again only for
// those (for all of a page whose links are still pending).
func (a *ambiguousFindings) add(tx *store.Tx, p *store.PageRec) {
	if p.Reserved {
		return
	}
	for _, l := range p.Links {
		if l.Ambiguous < 2 && !p.LinksPending {
			continue
		}
		ck := l.Key + "\x00" + path.Dir(p.Path)
		if l.Markdown {
			ck += "\x00md"
		}
		r, ok := a.resolved[ck]
		if !ok {
			r = index.Resolve(tx, l.Key, p.Path, l.Markdown)
			a.resolved[ck] = r
		}
		if r.Doc == 0 || r.Reserved || r.Candidates < 2 || !r.Guessed() {
			continue
		}
		gk := store.Fold(l.Key) + "\x00" + strconv.FormatUint(uint64(r.Doc), 10)
		g := a.byKey[gk]
		if g == nil {
			g = &ambiguousGroup{LintAmbiguousLink: LintAmbiguousLink{Target: l.Target, ChosenBy: r.Tie},
				key: l.Key, from: p.Path, markdown: l.Markdown, to: r.Doc, pages: map[uint32]int{}}
			a.byKey[gk] = g
			a.order = append(a.order, g)
		}
		g.Links++
		g.pages[p.Doc]++
	}
}

// list returns how many ambiguous targets there are and those in the
// window, most linked first, then by target: each with the page chosen,
// the others it matches and the linking pages.
func (a *ambiguousFindings) list(tx *store.Tx, w window) (int, []LintAmbiguousLink, error) {
	sort.SliceStable(a.order, func(i, j int) bool {
		x, y := a.order[i], a.order[j]
		if x.Links != y.Links {
			return x.Links > y.Links
		}
		if fx, fy := store.Fold(x.Target), store.Fold(y.Target); fx != fy {
			return fx < fy
		}
		return x.to < y.to
	})
	lo, hi := w.cut(len(a.order))
	out := make([]LintAmbiguousLink, 0, hi-lo)
	for _, g := range a.order[lo:hi] {
		f := g.LintAmbiguousLink
		f.Others = []string{}
		for _, c := range index.Matches(tx, g.key, g.from, g.markdown) {
			if c.Doc == g.to {
				f.Chosen = c.Path
			} else if c.Doc != 0 {
				f.Others = append(f.Others, c.Path)
			}
		}
		sort.Strings(f.Others)
		if f.Chosen == "" {
			if p, err := tx.Page(g.to); err == nil && p != nil {
				f.Chosen = p.Path
			}
		}
		f.PagesTotal = len(g.pages)
		for doc, n := range g.pages {
			p, err := tx.Page(doc)
			if err != nil {
				return 0, nil, err
			}
			if p != nil {
				f.Pages = append(f.Pages, BacklinkItem{PageRef: refOf(p), Count: n})
			}
		}
		sort.Slice(f.Pages, func(i, j int) bool { return lessRef(f.Pages[i].PageRef, f.Pages[j].PageRef) })
		out = append(out, f)
	}
	return len(a.order), out, nil
}
