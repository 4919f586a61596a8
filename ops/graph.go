package ops

import (
	"context"
	"sort"
	"strings"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
)

// NeighborhoodIn is the input of get_graph_neighborhood.
type NeighborhoodIn struct {
	Title string `json:"title" arg:"0" words:"true" required:"true" desc:"Page at the centre, resolved like a [[link]]"`
	Depth int    `json:"depth,omitempty" default:"1" min:"1" max:"2" desc:"Hops from the centre (1..2, default 1; larger values are clamped to 2)"`
	Limit int    `json:"limit,omitempty" default:"25" min:"1" max:"500" desc:"Nodes to return at most, the nearest and strongest first (1..500, default 25); total counts them all"`
}

// GraphNode is a node of a neighbourhood.
type GraphNode struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Type  string `json:"type"`
	Hop   int    `json:"hop"`
}

// GraphEdge is a weighted, undirected edge between two page ids: the
// pair is joined by at least one link, in either direction. Source and
// Target name the two ends (in id order, not a link direction); the link
// counts say which page links to which.
//
// The desc tags are the one statement of what the fields mean: the tool's
// output schema and the skill (a generated block) quote them.
type GraphEdge struct {
	Source string  `json:"source" desc:"One page of the pair, by id. The pair is unordered: source is not the page that links"`
	Target string  `json:"target" desc:"The other page of the pair, by id"`
	Weight float64 `json:"weight" desc:"How closely the two pages are tied, higher is closer: 3 for each direction that has a link, 4 for each raw source both cite, 1.5 × the Adamic–Adar score of their common neighbours (a rare shared neighbour counts more than a hub) and 0.5 to 1.2 for how related their types are. Compare weights within one vault"`
	// SourceToTarget counts the links in the source page to the target,
	// TargetToSource those in the target to the source; one may be 0.
	SourceToTarget int `json:"source_to_target" desc:"Links written in the source page to the target page (0: source does not link to target)"`
	TargetToSource int `json:"target_to_source" desc:"Links written in the target page to the source page (0: target does not link to source)"`
}

// Center is the centre node of a neighbourhood.
type Center struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Type  string `json:"type"`
	Path  string `json:"path"`
}

// NeighborhoodOut is the result of get_graph_neighborhood.
type NeighborhoodOut struct {
	Center Center      `json:"center"`
	Depth  int         `json:"depth"`
	Nodes  []GraphNode `json:"nodes"`
	Edges  []GraphEdge `json:"edges"`
	// Total counts the nodes of the neighbourhood (the centre aside);
	// Truncated is set when Nodes holds fewer (--limit, at most 500).
	Total     int  `json:"total"`
	Truncated bool `json:"truncated"`
	// AlsoMatched are the other pages the title names (an ambiguous
	// title), as get_page reports them.
	AlsoMatched []PageRef `json:"also_matched,omitempty" desc:"Other pages that answer to the title as well (an ambiguous title); the page used was chosen as a [[link]] would choose: an exact path, then the shortest path, then the first in order. Ask for one of them by its path or id"`
}

// MaxNeighborhoodNodes bounds a neighbourhood; the strongest nodes are kept.
const MaxNeighborhoodNodes = 500

var opNeighbors = register(Op{
	Name: "graph.neighbors", Summary: "Pages around a page in the link graph, with weighted edges",
	CLI: "graph neighbors", MCP: "get_graph_neighborhood",
	REST:   []Route{{Method: "GET", Path: "/graph/neighborhood"}},
	Access: Read, Limits: "depth 1..2 (clamped); 25 nodes by default, the nearest and strongest, --limit up to 500; total counts all",
	Title: "Explore the link graph around a page",
	Examples: []Example{
		{`synapse graph neighbors "Daily notes"`, "the pages one link away, strongest first"},
		{`synapse graph neighbors "Daily notes" --depth 2 --json`, "two hops, with every edge's weight and link counts"},
	},
	Exits: map[int]string{3: "not found: no page answers to TITLE"},
}, neighbors)

func round3(f float32) float64 {
	return float64(int64(float64(f)*1000+0.5)) / 1000
}

func neighbors(ctx context.Context, e *Env, in *NeighborhoodIn) (*NeighborhoodOut, error) {
	out := &NeighborhoodOut{Depth: in.Depth, Nodes: []GraphNode{}, Edges: []GraphEdge{}}
	err := e.Store.View(func(tx *store.Tx) error {
		center, err := resolvePage(tx, in.Title)
		if err != nil {
			return err
		}
		out.Center = Center{ID: center.ID, Title: center.Title, Type: center.Type, Path: center.Path}
		out.AlsoMatched = alsoMatched(tx, in.Title, center.Doc)
		type info struct {
			hop    int
			weight float32 // strongest edge to the previous hop
			adj    *store.AdjRec
		}
		seen := map[uint32]*info{}
		ca, err := tx.Adj(center.Doc)
		if err != nil {
			return err
		}
		if ca == nil {
			return nil // reserved page or not in the graph
		}
		seen[center.Doc] = &info{hop: 0, adj: ca}
		frontier := []uint32{center.Doc}
		for hop := 1; hop <= in.Depth; hop++ {
			var next []uint32
			for _, d := range frontier {
				for _, edge := range seen[d].adj.Edges {
					if s, ok := seen[edge.To]; ok {
						if s.hop == hop && edge.Weight > s.weight {
							s.weight = edge.Weight
						}
						continue
					}
					a, err := tx.Adj(edge.To)
					if err != nil {
						return err
					}
					if a == nil {
						continue
					}
					seen[edge.To] = &info{hop: hop, weight: edge.Weight, adj: a}
					next = append(next, edge.To)
				}
			}
			frontier = next
		}
		type row struct {
			doc uint32
			inf *info
			rec *store.PageRec
		}
		rows := make([]row, 0, len(seen))
		for d, inf := range seen {
			if d == center.Doc {
				continue
			}
			p, err := tx.Page(d)
			if err != nil {
				return err
			}
			if p != nil {
				rows = append(rows, row{d, inf, p})
			}
		}
		sort.Slice(rows, func(i, j int) bool {
			a, b := rows[i], rows[j]
			if a.inf.hop != b.inf.hop {
				return a.inf.hop < b.inf.hop
			}
			if a.inf.weight != b.inf.weight {
				return a.inf.weight > b.inf.weight
			}
			fa, fb := store.Fold(a.rec.Title), store.Fold(b.rec.Title)
			if fa != fb {
				return fa < fb
			}
			return a.rec.Path < b.rec.Path
		})
		out.Total = len(rows)
		if limit := min(max(in.Limit, 1), MaxNeighborhoodNodes); len(rows) > limit {
			rows, out.Truncated = rows[:limit], true
		}
		ids := map[uint32]string{center.Doc: center.ID}
		for _, r := range rows {
			ids[r.doc] = r.rec.ID
			out.Nodes = append(out.Nodes, GraphNode{ID: r.rec.ID, Title: r.rec.Title, Type: r.rec.Type, Hop: r.inf.hop})
		}
		// every persisted edge between two returned nodes, once
		order := append([]uint32{center.Doc}, make([]uint32, 0, len(rows))...)
		for _, r := range rows {
			order = append(order, r.doc)
		}
		for _, d := range order {
			for _, edge := range seen[d].adj.Edges {
				if _, ok := ids[edge.To]; ok && d < edge.To {
					out.Edges = append(out.Edges, GraphEdge{Source: ids[d], Target: ids[edge.To], Weight: round3(edge.Weight),
						SourceToTarget: int(edge.Out), TargetToSource: int(edge.In)})
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BacklinksIn is the input of graph backlinks.
type BacklinksIn struct {
	Title  string `json:"title" arg:"0" words:"true" required:"true" desc:"Page whose backlinks to list"`
	Limit  int    `json:"limit,omitempty" default:"100" min:"1" max:"1000" desc:"Maximum pages to return (1..1000, default 100; larger values are clamped)"`
	Offset int    `json:"offset,omitempty" min:"0" desc:"Pages to skip"`
}

// BacklinkItem is a page linking to another, with its link count.
type BacklinkItem struct {
	PageRef
	Count int `json:"count"`
}

// BacklinksOut is the result of graph backlinks.
type BacklinksOut struct {
	Page      PageRef        `json:"page"`
	Total     int            `json:"total"`
	Backlinks []BacklinkItem `json:"backlinks"`
	// NextOffset is the offset of the next part while more remain.
	NextOffset int `json:"next_offset,omitempty" desc:"Where the next part starts (the offset to ask for) while more remain; absent on the last part"`
	// AlsoMatched are the other pages the title names (an ambiguous
	// title): the backlinks are those of Page only.
	AlsoMatched []PageRef `json:"also_matched,omitempty" desc:"Other pages that answer to the title as well (an ambiguous title); the page used was chosen as a [[link]] would choose: an exact path, then the shortest path, then the first in order. Ask for one of them by its path or id"`
}

var opBacklinks = register(Op{
	Name: "graph.backlinks", Summary: "Pages that link to a page",
	CLI: "graph backlinks", REST: []Route{{Method: "GET", Path: "/graph/backlinks"}},
	Access: Read, Limits: "limit 1..1000 (default 100); total counts all",
	Examples: []Example{{`synapse graph backlinks "Daily notes"`, "the pages linking to it, with their link counts"}},
	Exits:    map[int]string{3: "not found: no page answers to TITLE"},
}, backlinks)

func backlinks(ctx context.Context, e *Env, in *BacklinksIn) (*BacklinksOut, error) {
	out := &BacklinksOut{Backlinks: []BacklinkItem{}}
	err := e.Store.View(func(tx *store.Tx) error {
		p, err := resolvePage(tx, in.Title)
		if err != nil {
			return err
		}
		out.Page = refOf(p)
		out.AlsoMatched = alsoMatched(tx, in.Title, p.Doc)
		for _, b := range tx.Backlinks(p.Doc) {
			src, ok, err := refOfDoc(tx, b.Src)
			if err != nil {
				return err
			}
			if ok {
				out.Backlinks = append(out.Backlinks, BacklinkItem{PageRef: src, Count: b.Count})
			}
		}
		sort.Slice(out.Backlinks, func(i, j int) bool {
			return lessRef(out.Backlinks[i].PageRef, out.Backlinks[j].PageRef)
		})
		out.Total = len(out.Backlinks)
		lo, hi := window{offset: in.Offset, limit: in.Limit}.cut(out.Total)
		out.Backlinks = out.Backlinks[lo:hi]
		out.NextOffset = nextOffset(in.Offset, len(out.Backlinks), out.Total)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func lessRef(a, b PageRef) bool {
	fa, fb := store.Fold(a.Title), store.Fold(b.Title)
	if fa != fb {
		return fa < fb
	}
	return a.Path < b.Path
}

// OrphansIn is the input of graph orphans.
type OrphansIn struct {
	Limit  int `json:"limit,omitempty" default:"100" min:"1" max:"1000" desc:"Maximum pages to return (1..1000, default 100; larger values are clamped)"`
	Offset int `json:"offset,omitempty" min:"0" desc:"Pages to skip"`
}

// PagesOut is a list of pages with a total.
type PagesOut struct {
	Total int       `json:"total"`
	Pages []PageRef `json:"pages"`
	// NextOffset is the offset of the next part while more remain.
	NextOffset int `json:"next_offset,omitempty" desc:"Where the next part starts (the offset to ask for) while more remain; absent on the last part"`
}

var opOrphans = register(Op{
	Name: "graph.orphans", Summary: "Pages no other page links to",
	CLI: "graph orphans", REST: []Route{{Method: "GET", Path: "/graph/orphans"}},
	Access: Read, Limits: "limit 1..1000 (default 100); total counts all",
	Examples: []Example{{`synapse graph orphans --json`, "pages no other page links to"}},
}, orphans)

// orphans lists the pages without backlinks in title order; page records
// are read for the listed ones only.
func orphans(ctx context.Context, e *Env, in *OrphansIn) (*PagesOut, error) {
	out := &PagesOut{Pages: []PageRef{}}
	w := window{offset: in.Offset, limit: in.Limit}
	err := e.Store.View(func(tx *store.Tx) error {
		var err error
		tx.EachTitle(func(doc uint32, _ string) bool {
			if tx.HasBacklinks(doc) {
				return true
			}
			err = listRef(tx, doc, w.has(out.Total), &out.Pages)
			out.Total++
			return err == nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	out.NextOffset = nextOffset(in.Offset, len(out.Pages), out.Total)
	return out, nil
}

// MissingIn is the input of graph missing.
type MissingIn struct {
	Page   string `json:"page,omitempty" desc:"Only the targets this page links to (resolved like a [[link]]), with its own link counts"`
	Limit  int    `json:"limit,omitempty" default:"25" min:"1" max:"1000" desc:"Maximum targets to return (1..1000, default 25, and then at most 16 KiB of JSON; larger values are clamped)"`
	Offset int    `json:"offset,omitempty" min:"0" desc:"Targets to skip"`
}

// MissingTarget is an unresolved link target.
type MissingTarget struct {
	Target string `json:"target"` // as first written
	Links  int    `json:"links"`  // links to it (from the page of --page only, with --page)
	// PagesTotal counts the linking pages; Pages lists them with their
	// counts, at most MaxMissingPages of them.
	PagesTotal int            `json:"pages_total"`
	Pages      []BacklinkItem `json:"pages"`
}

// defaultMissingLimit is graph missing's default limit, under which the
// answer is also bounded in size (MaxListBytes).
const defaultMissingLimit = 25

// MaxMissingPages bounds the linking pages graph missing lists per
// target (a target hundreds of pages link to).
const MaxMissingPages = 20

// MissingOut is the result of graph missing: the targets, most linked
// first, and how many there are in all.
type MissingOut struct {
	Total   int             `json:"total"`
	Page    *PageRef        `json:"page,omitempty"` // the page of --page
	Targets []MissingTarget `json:"targets"`
	// NextOffset is the offset of the next part while more remain.
	NextOffset int `json:"next_offset,omitempty" desc:"Where the next part starts (the offset to ask for) while more remain; absent on the last part"`
	// Cut is set when the size bound of the default answer (16 KiB of
	// JSON) left out targets the limit allowed; read on with offset.
	Cut bool `json:"cut,omitempty"`
	// AlsoMatched are the other pages --page names (an ambiguous title).
	AlsoMatched []PageRef `json:"also_matched,omitempty" desc:"Other pages that answer to the title as well (an ambiguous title); the page used was chosen as a [[link]] would choose: an exact path, then the shortest path, then the first in order. Ask for one of them by its path or id"`
}

var opMissing = register(Op{
	Name: "graph.missing", Summary: "Link targets that match no page (dangling links), most linked first",
	CLI: "graph missing", REST: []Route{{Method: "GET", Path: "/graph/missing"}},
	Access: Read, Limits: "limit 1..1000 (default 25, and then at most 16 KiB: cut: true says targets were left out); at most 20 linking pages per target (pages_total counts all); total counts all",
	Examples: []Example{
		{`synapse graph missing`, "link targets that match no page, and who links to them"},
		{`synapse graph missing --page "Internal links"`, "the dangling links of one page"},
	},
	Exits: map[int]string{3: "not found: no page answers to --page"},
	VerbHelp: "COLUMNS:\n" +
		"   TARGET       the link target, as first written ([[Target]])\n" +
		"   TOTAL        links to the target from every page (with --page: from that page); most first\n" +
		"   LINKED FROM  a page that links to it (one row per linking page)\n" +
		"   PATH         that page's file\n" +
		"   LINKS        links to the target from that page",
}, missing)

func missing(ctx context.Context, e *Env, in *MissingIn) (*MissingOut, error) {
	out := &MissingOut{Targets: []MissingTarget{}}
	w := window{offset: in.Offset, limit: in.Limit}
	err := e.Store.View(func(tx *store.Tx) error {
		if in.Page == "" {
			var err error
			out.Total, out.Targets, err = vaultDangling(tx, w)
			return err
		}
		p, err := resolvePage(tx, in.Page)
		if err != nil {
			return err
		}
		ref := refOf(p)
		out.Page = &ref
		out.AlsoMatched = alsoMatched(tx, in.Page, p.Doc)
		if p.Reserved {
			return nil // index, log and overview keep no links
		}
		all, err := danglingFrom(tx, p)
		if err != nil {
			return err
		}
		out.Total = len(all)
		lo, hi := w.cut(len(all))
		out.Targets = append(out.Targets, all[lo:hi]...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range out.Targets {
		out.Targets[i].Pages = firstN(out.Targets[i].Pages, MaxMissingPages)
	}
	if in.Limit == defaultMissingLimit {
		out.Cut = fitList(out, &out.Targets)
	}
	out.NextOffset = nextOffset(in.Offset, len(out.Targets), out.Total)
	return out, nil
}

// vaultDangling returns how many link targets of the vault match no
// page, and those of the window, most linked first (then in key order),
// with their linking pages. Page records are read for the window only.
func vaultDangling(tx *store.Tx, w window) (int, []MissingTarget, error) {
	refs := tx.Dangling()
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].Count > refs[j].Count })
	lo, hi := w.cut(len(refs))
	out := make([]MissingTarget, 0, hi-lo)
	for _, d := range refs[lo:hi] {
		t := MissingTarget{Target: d.Raw, Links: d.Count, Pages: []BacklinkItem{}}
		if t.Target == "" {
			t.Target = d.Key
		}
		for _, s := range d.Sources {
			p, ok, err := refOfDoc(tx, s.Src)
			if err != nil {
				return 0, nil, err
			}
			if ok {
				t.Pages = append(t.Pages, BacklinkItem{PageRef: p, Count: s.Count})
			}
		}
		sort.Slice(t.Pages, func(i, j int) bool { return lessRef(t.Pages[i].PageRef, t.Pages[j].PageRef) })
		t.PagesTotal = len(t.Pages)
		out = append(out, t)
	}
	return len(refs), out, nil
}

// danglingFrom returns the link targets of one page that match no page,
// most linked first, then by target. Links still pending resolution are
// resolved here.
func danglingFrom(tx *store.Tx, p *store.PageRec) ([]MissingTarget, error) {
	ref := refOf(p)
	byKey := map[string]int{}
	var out []MissingTarget
	for _, l := range p.Links {
		reached := l.To != 0 || l.File != ""
		if p.LinksPending {
			reached = index.Resolve(tx, l.Key, p.Path, l.Markdown).Resolved()
		}
		if reached {
			continue // a page, or a file that is no page (a raw source, an attachment)
		}
		i, ok := byKey[l.Key]
		if !ok {
			i = len(out)
			byKey[l.Key] = i
			out = append(out, MissingTarget{Target: strings.TrimSuffix(l.Target, ".md")})
		}
		out[i].Links++
	}
	for i := range out {
		out[i].Pages, out[i].PagesTotal = []BacklinkItem{{PageRef: ref, Count: out[i].Links}}, 1
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Links != out[j].Links {
			return out[i].Links > out[j].Links
		}
		return store.Fold(out[i].Target) < store.Fold(out[j].Target)
	})
	return out, nil
}
