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
		f.Chosen, f.Others = g.candidates(tx)
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

// candidates returns the page a group's links reach and the others its
// target matches, by path, sorted.
func (g *ambiguousGroup) candidates(tx *store.Tx) (chosen string, others []string) {
	others = []string{}
	for _, c := range index.Matches(tx, g.key, g.from, g.markdown) {
		if c.Doc == g.to {
			chosen = c.Path
		} else if c.Doc != 0 {
			others = append(others, c.Path)
		}
	}
	sort.Strings(others)
	if chosen == "" {
		if p, err := tx.Page(g.to); err == nil && p != nil {
			chosen = p.Path
		}
	}
	return chosen, others
}

// Caps of the ambiguous links a write reports.
const (
	// MaxWriteAmbiguous bounds the ambiguous targets one write lists.
	MaxWriteAmbiguous = 20
	// MaxAmbiguousOthers bounds the other pages listed per target.
	MaxAmbiguousOthers = 5
)

// AmbiguousLink is a link of a written page whose target matches
// several pages where the tie-break guessed (as lint's ambiguous_links,
// for this page alone).
type AmbiguousLink struct {
	Target string `json:"target" desc:"The link target, as first written in the page"`
	Chosen string `json:"chosen" desc:"The page the link reaches, by path"`
	// ChosenBy is the rule that chose it: "shortest path" or "name order".
	ChosenBy string `json:"chosen_by" desc:"How it was chosen among the matches: shortest path, or name order"`
	// Others are the other pages the target matches, by path: the first
	// MaxAmbiguousOthers, OthersTotal counting them all.
	Others      []string `json:"others" desc:"Other pages the target matches, by path (the first 5)"`
	OthersTotal int      `json:"others_total" desc:"How many other pages the target matches"`
	// Added is set when the page did not link to the target before the
	// write (an edit's own links, told from those the page had).
	Added bool `json:"added,omitempty" desc:"The write added this link (the page did not link to the target before)"`
}

// pageAmbiguous returns the ambiguous links of one page, in the order
// they first appear, at most MaxWriteAmbiguous, and how many there are.
// It reads only that page's links and their candidates.
func pageAmbiguous(tx *store.Tx, p *store.PageRec) ([]AmbiguousLink, int) {
	a := newAmbiguousFindings()
	a.add(tx, p)
	var out []AmbiguousLink
	for _, g := range a.order[:min(len(a.order), MaxWriteAmbiguous)] {
		chosen, others := g.candidates(tx)
		out = append(out, AmbiguousLink{Target: g.Target, Chosen: chosen, ChosenBy: g.ChosenBy,
			Others: others[:min(len(others), MaxAmbiguousOthers)], OthersTotal: len(others)})
	}
	return out, len(a.order)
}
