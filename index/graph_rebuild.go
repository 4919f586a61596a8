package index

import (
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/synapse-wiki/synapse/store"
)

// Building the whole graph at once, after a reindex or a first index:
// every node's edges weighed from a flat snapshot on every CPU, then
// written back (graph.go keeps it current page by page afterwards).

// rebuildGraph recomputes every edge weight from one snapshot of the
// adjacency (used when most nodes are dirty, as after a reindex) and writes
// the nodes back in bounded transactions.
func (ix *Indexer) rebuildGraph(ctx context.Context, fromRecords bool) error {
	var (
		nodes []*store.AdjRec
		dirty []uint32
	)
	err := ix.Store.View(func(tx *store.Tx) error {
		nodes = make([]*store.AdjRec, tx.MetaU32("next_doc")+1)
		dirty = tx.GraphDirty(0)
		if fromRecords {
			return graphFromRecords(tx, nodes, ix.Store.ReleaseMapped)
		}
		return tx.EachAdj(func(doc uint32, a *store.AdjRec) bool {
			if int(doc) < len(nodes) {
				nodes[doc] = a
			}
			return true
		})
	})
	if err != nil {
		return err
	}
	for _, a := range nodes {
		if a != nil {
			a.Deg = uint32(len(a.Edges))
		}
	}
	if !weighAll(ctx, nodes, max(1, runtime.GOMAXPROCS(0)), func(u int) {
		// weighing is the first half of the phase, writing the second
		ix.progress("graph", u/2, len(nodes))
	}) {
		return ctx.Err()
	}
	const chunk = 20000
	for lo := 0; lo < len(nodes); lo += chunk {
		hi := min(lo+chunk, len(nodes))
		err := ix.Store.Update(func(tx *store.Tx) error {
			if lo == 0 {
				// the degree table is written whole at the end
				if err := tx.DropAdjDegrees(); err != nil {
					return err
				}
			}
			for d := lo; d < hi; d++ {
				if nodes[d] != nil {
					if err := tx.PutAdj(uint32(d), nodes[d]); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		ix.Store.ReleaseMapped()
		ix.progress("graph", (len(nodes)+hi)/2, len(nodes))
	}
	return ix.Store.Update(func(tx *store.Tx) error {
		if fromRecords {
			if err := tx.DeleteMeta(metaGraphStale); err != nil {
				return err
			}
		}
		degs := make([]uint32, len(nodes))
		for d, a := range nodes {
			if a != nil {
				degs[d] = a.Deg
			}
		}
		if err := tx.PutAdjDegrees(degs); err != nil {
			return err
		}
		return tx.ClearGraphDirty(dirty)
	})
}

// weighAll sets the weight of every edge of a snapshot of the graph (the
// nodes by doc, each Deg its degree), in parallel over node ranges, each
// edge once by its lower end, at both ends. It reports false, leaving the
// weights half set, when ctx is cancelled.
//
// It computes what weight does from the same adjacency, term by term in the
// same order (so the same float64 sums), from flat copies of what it reads:
// the neighbour lists in one array, each node's adamic_adar term
// 1/ln(deg), its type's index and its sources' numbers. The common
// neighbours of u and v are found by marking u's neighbours and walking
// v's list, or, when v's list is much longer, by looking u's neighbours up
// in it (a bit set for a hub, else a binary search): both in ascending
// order, as eachCommon yields them.
func weighAll(ctx context.Context, nodes []*store.AdjRec, workers int, progress func(u int)) bool {
	g := flattenGraph(nodes)
	n := len(nodes)
	var wg sync.WaitGroup
	for wk := 0; wk < workers; wk++ {
		wg.Add(1)
		go func(wk int) {
			defer wg.Done()
			mark := make([]uint32, n) // u+1 on u's neighbours while u is weighed
			for u := wk; u < n; u += workers {
				if wk == 0 && u%8192 == 0 {
					progress(u)
				}
				if nodes[u] != nil && ctx.Err() == nil {
					g.weighNode(uint32(u), mark)
				}
			}
		}(wk)
	}
	wg.Wait()
	if ctx.Err() != nil {
		return false
	}
	for d, a := range nodes {
		if a != nil {
			for i, w := range g.weight[g.off[d]:g.off[d+1]] {
				a.Edges[i].Weight = w
			}
		}
	}
	return true
}

// weighNode weighs the edges of node u to its higher neighbours; mark is
// the worker's scratch (u+1 on u's neighbours while u is weighed). Each
// edge is weighed by one worker, which alone writes its two weights.
func (g *flatGraph) weighNode(u uint32, mark []uint32) {
	n := len(g.nodes)
	au := g.nodes[u]
	nu := g.list(u)
	marked := false
	for i, v := range nu {
		if v < u || int(v) >= n || g.nodes[v] == nil {
			continue
		}
		if !marked {
			for _, c := range nu {
				if int(c) < n {
					mark[c] = u + 1
				}
			}
			marked = true
		}
		nv := g.list(v)
		aa := g.adamicAdar(u, v, nu, nv, mark)
		// the rest as weight computes it
		w := float32(3*float64(au.Edges[i].Direct()) + 4*float64(g.sharedSources(u, v)) + 1.5*aa + g.affinity(u, v))
		g.weight[g.off[u]+uint32(i)] = w
		if j := searchTo(nv, u); j >= 0 {
			g.weight[g.off[v]+uint32(j)] = w
		}
	}
}

// adamicAdar is Σ aaTerm over the common neighbours of u and v (lists nu
// and nv; mark holds u+1 on u's neighbours): through v's bit set when v is
// a hub, by binary search in nv when it is much the longer, else by
// walking nv against the marks.
func (g *flatGraph) adamicAdar(u, v uint32, nu, nv, mark []uint32) float64 {
	n := len(g.nodes)
	aa := 0.0
	switch bits := g.hub[v]; {
	case len(nv) > 8*len(nu) && bits != nil:
		for _, c := range nu {
			if int(c) < n && bits[c/64]&(1<<(c%64)) != 0 && c != u && c != v {
				aa += g.term[c]
			}
		}
	case len(nv) > 8*len(nu):
		lo := 0
		for _, c := range nu {
			l, h := lo, len(nv)
			for l < h {
				m := int(uint(l+h) >> 1)
				if nv[m] < c {
					l = m + 1
				} else {
					h = m
				}
			}
			if l < len(nv) && nv[l] == c && c != u && c != v {
				aa += g.term[c]
			}
			lo = l
		}
	default:
		for _, c := range nv {
			if int(c) < n && mark[c] == u+1 && c != u && c != v {
				aa += g.term[c]
			}
		}
	}
	return aa
}

// sharedSources counts the raw sources both u and v cite.
func (g *flatGraph) sharedSources(u, v uint32) int {
	shared := 0
	if sv := g.sources(v); len(sv) > 0 {
		for _, s := range g.sources(u) {
			if _, ok := slices.BinarySearch(sv, s); ok {
				shared++
			}
		}
	}
	return shared
}

// flatGraph is what weighAll reads of a graph snapshot, in flat arrays by
// doc.
type flatGraph struct {
	off    []uint32   // doc's neighbours are to[off[doc]:off[doc+1]]
	to     []uint32   // neighbour lists, each ascending
	weight []float32  // the weights of the edges in to
	term   []float64  // aaTerm(degree); 0 for a doc that is no node
	hub    [][]uint64 // a bit set of a hub's neighbours; nil for others
	nodes  []*store.AdjRec
	typ    []uint8 // index of the node's type in types
	types  []string
	aff    []float64 // typeAffinity of types i, j at i*len(types)+j; nil when types are too many
	srcOff []uint32  // doc's sources are src[srcOff[doc]:srcOff[doc+1]]
	src    []uint32  // each source's number, in the node's order
}

func (g *flatGraph) list(d uint32) []uint32    { return g.to[g.off[d]:g.off[d+1]] }
func (g *flatGraph) sources(d uint32) []uint32 { return g.src[g.srcOff[d]:g.srcOff[d+1]] }
func (g *flatGraph) affinity(u, v uint32) float64 {
	if g.aff == nil {
		return typeAffinity(g.nodes[u].Type, g.nodes[v].Type)
	}
	return g.aff[int(g.typ[u])*len(g.types)+int(g.typ[v])]
}

func flattenGraph(nodes []*store.AdjRec) *flatGraph {
	n := len(nodes)
	g := &flatGraph{nodes: nodes, off: make([]uint32, n+1), term: make([]float64, n), hub: make([][]uint64, n),
		typ: make([]uint8, n), srcOff: make([]uint32, n+1)}
	typeIdx := map[string]uint8{}
	manyTypes := false // over 256: affinity asks typeAffinity
	// source numbers in sorted order of the names, so that each node's
	// numbers are sorted as its names are (AdjRec.Sources is sorted) and
	// a binary search among them finds what one among the names does
	var names []string
	for _, a := range nodes {
		if a != nil {
			names = append(names, a.Sources...)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	for d, a := range nodes {
		g.off[d+1], g.srcOff[d+1] = g.off[d], g.srcOff[d]
		if a == nil {
			continue
		}
		g.off[d+1] += uint32(len(a.Edges))
		g.srcOff[d+1] += uint32(len(a.Sources))
		t, ok := typeIdx[a.Type]
		if !ok && len(typeIdx) < 256 {
			t, ok = uint8(len(g.types)), true
			typeIdx[a.Type] = t
			g.types = append(g.types, a.Type)
		}
		if !ok {
			manyTypes = true
		}
		g.typ[d] = t
	}
	g.to = make([]uint32, g.off[n])
	g.weight = make([]float32, g.off[n])
	g.src = make([]uint32, g.srcOff[n])
	for d, a := range nodes {
		if a == nil {
			continue
		}
		g.term[d] = aaTerm(len(a.Edges))
		l, w := g.list(uint32(d)), g.weight[g.off[d]:g.off[d+1]]
		for i, e := range a.Edges {
			l[i], w[i] = e.To, e.Weight // an edge to no node keeps its weight
		}
		// a hub has at least n/32 neighbours, so its bit set takes no
		// more room than its list
		if len(l) >= 64 && len(l) >= n/32 {
			bits := make([]uint64, (n+63)/64)
			for _, c := range l {
				if int(c) < n {
					bits[c/64] |= 1 << (c % 64)
				}
			}
			g.hub[d] = bits
		}
		s := g.sources(uint32(d))
		for i, name := range a.Sources {
			k, _ := slices.BinarySearch(names, name)
			s[i] = uint32(k)
		}
	}
	if manyTypes {
		return g
	}
	k := len(g.types)
	g.aff = make([]float64, k*k)
	for i, x := range g.types {
		for j, y := range g.types {
			g.aff[i*k+j] = typeAffinity(x, y)
		}
	}
	return g
}

// searchTo returns the index of to in a sorted list, or -1.
func searchTo(l []uint32, to uint32) int {
	i, ok := slices.BinarySearch(l, to)
	if !ok {
		return -1
	}
	return i
}

// metaGraphStale marks a store whose graph edges are rebuilt from the page
// records at the end of a full scan: while it is set, link resolution
// leaves the graph alone (an edge a link at a time costs more than one
// pass over the records).
const metaGraphStale = "graph_stale"

// graphFromRecords builds every node and edge (with link counts) from the
// page records: types, sources and resolved links. Link counts are kept in
// flat sorted lists rather than maps: at 100,000 pages there are millions.
//
// The walk reads every page record; release (called every 16,384 pages)
// keeps the mapped pages it read from piling up in the resident set.
func graphFromRecords(tx *store.Tx, nodes []*store.AdjRec, release func()) error {
	type count struct{ to, n uint32 }
	outs := make([][]count, len(nodes))
	var tos []uint32
	seen := 0
	err := tx.EachPage(func(p *store.PageRec) bool {
		if seen++; seen%16384 == 0 {
			release()
		}
		if p.Reserved || int(p.Doc) >= len(nodes) {
			return true
		}
		a := &store.AdjRec{Type: p.Type, Sources: slices.Clone(p.SourceKeys)}
		slices.Sort(a.Sources)
		nodes[p.Doc] = a
		tos = tos[:0]
		for _, l := range p.Links {
			if l.To != 0 && l.To != p.Doc && int(l.To) < len(nodes) {
				tos = append(tos, l.To)
			}
		}
		slices.Sort(tos)
		var out []count
		for i := 0; i < len(tos); {
			j := i
			for j < len(tos) && tos[j] == tos[i] {
				j++
			}
			out = append(out, count{tos[i], uint32(j - i)})
			i = j
		}
		outs[p.Doc] = out
		return true
	})
	if err != nil {
		return err
	}
	// links to reserved pages (no node) are not edges
	indeg := make([]uint32, len(nodes))
	for src, out := range outs {
		keep := out[:0]
		for _, c := range out {
			if nodes[c.to] != nil {
				keep = append(keep, c)
				indeg[c.to]++
			}
		}
		outs[src] = keep
	}
	ins := make([][]count, len(nodes))
	for d, n := range indeg {
		if n > 0 {
			ins[d] = make([]count, 0, n)
		}
	}
	for src, out := range outs { // ascending src: each ins list comes out sorted
		for _, c := range out {
			ins[c.to] = append(ins[c.to], count{uint32(src), c.n})
		}
	}
	for d, a := range nodes {
		if a == nil {
			continue
		}
		out, in := outs[d], ins[d]
		a.Edges = make([]store.Edge, 0, len(out)+len(in))
		i, j := 0, 0
		for i < len(out) || j < len(in) {
			switch {
			case j == len(in) || i < len(out) && out[i].to < in[j].to:
				a.Edges = append(a.Edges, store.Edge{To: out[i].to, Out: out[i].n})
				i++
			case i == len(out) || in[j].to < out[i].to:
				a.Edges = append(a.Edges, store.Edge{To: in[j].to, In: in[j].n})
				j++
			default:
				a.Edges = append(a.Edges, store.Edge{To: out[i].to, Out: out[i].n, In: in[j].n})
				i++
				j++
			}
		}
		outs[d], ins[d] = nil, nil
	}
	return nil
}
