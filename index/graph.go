package index

import (
	"context"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/synapse-wiki/synapse/store"
)

// adj returns a node's adjacency through the updater's cache (nil when the
// node is not in the graph).
func (u *updater) adj(doc uint32) (*store.AdjRec, error) {
	if a, ok := u.adjCache[doc]; ok {
		return a, nil
	}
	a, err := u.tx.Adj(doc)
	if err != nil {
		return nil, err
	}
	u.adjCache[doc] = a
	return a, nil
}

// adjPair returns both ends of an edge pair (nil for an absent node).
func (u *updater) adjPair(p edgePair) (*store.AdjRec, *store.AdjRec, error) {
	a, err := u.adj(p.a)
	if err != nil {
		return nil, nil, err
	}
	b, err := u.adj(p.b)
	return a, b, err
}

func (u *updater) touch(doc uint32) { u.adjDirty[doc] = true }

// accountedDegree is a node's Deg: from the cache when this transaction
// loaded the node, else from the store's degree table (weights need the
// degrees of many common neighbours: tens of thousands for a relink at
// 100k pages).
func (u *updater) accountedDegree(doc uint32) (int, error) {
	if a, ok := u.adjCache[doc]; ok {
		if a == nil {
			return 0, nil
		}
		return int(a.Deg), nil
	}
	if !u.tx.AdjDegreesComplete() {
		// a store indexed before the degree table: completed once
		if err := u.tx.BuildAdjDegrees(); err != nil {
			return 0, err
		}
	}
	return int(u.tx.AdjDeg(doc)), nil
}

// flushAdj writes every modified node and marks it for weight
// recomputation where needed.
func (u *updater) flushAdj() error {
	docs := make([]uint32, 0, len(u.adjDirty))
	for d := range u.adjDirty {
		docs = append(docs, d)
	}
	slices.Sort(docs)
	for _, d := range docs {
		a := u.adjCache[d]
		var err error
		if a == nil {
			err = u.tx.DeleteAdj(d)
		} else {
			err = u.tx.PutAdj(d, a)
		}
		if err != nil {
			return err
		}
	}
	clear(u.adjDirty)
	if len(u.adjCache) > 200000 {
		clear(u.adjCache)
	}
	return nil
}

// putNode creates or updates a page's graph node (type and sources).
func (u *updater) putNode(rec, old *store.PageRec) error {
	a, err := u.adj(rec.Doc)
	if err != nil {
		return err
	}
	if a == nil {
		a = &store.AdjRec{}
		u.adjCache[rec.Doc] = a
	} else if a.Type == rec.Type && slices.Equal(a.Sources, rec.SourceKeys) {
		return nil
	}
	a.Type = rec.Type
	a.Sources = slices.Clone(rec.SourceKeys)
	slices.Sort(a.Sources)
	u.touch(rec.Doc)
	u.markGraph(rec.Doc)
	if u.track {
		u.ev.attr[rec.Doc] = true
	}
	return nil
}

// dropNode removes a node and its edges, marking former neighbours.
func (u *updater) dropNode(doc uint32) error {
	a, err := u.adj(doc)
	if err != nil || a == nil {
		return err
	}
	nbrs := make([]uint32, 0, len(a.Edges))
	for _, e := range a.Edges {
		b, err := u.adj(e.To)
		if err != nil {
			return err
		}
		if b != nil {
			b.Edges = slices.DeleteFunc(b.Edges, func(x store.Edge) bool { return x.To == doc })
			u.touch(e.To)
			u.markGraph(e.To)
			if u.track {
				u.ev.degree[e.To] = true
			}
			nbrs = append(nbrs, e.To)
		}
	}
	if u.track {
		u.ev.dropped = append(u.ev.dropped, nbrs)
	}
	delete(u.ev.attr, doc)
	delete(u.ev.degree, doc)
	u.adjCache[doc] = nil
	u.touch(doc)
	delete(u.graphDirty, doc)
	return u.tx.ClearGraphDirty([]uint32{doc})
}

// addLinks adds n (possibly negative) links from src to dst on the edge
// between them (out on src's side, in on dst's), creating or removing the
// edge as the counts demand. The weight changes only when a direction
// appears or disappears; then both nodes are marked for recomputation.
func (u *updater) addLinks(src, dst uint32, n int) error {
	for _, side := range []struct {
		a, b uint32
		out  bool
	}{{src, dst, true}, {dst, src, false}} {
		a, err := u.adj(side.a)
		if err != nil {
			return err
		}
		if a == nil {
			continue // a dropped node: its edges went with it
		}
		i := sort.Search(len(a.Edges), func(i int) bool { return a.Edges[i].To >= side.b })
		found := i < len(a.Edges) && a.Edges[i].To == side.b
		if !found {
			if n <= 0 {
				continue
			}
			a.Edges = slices.Insert(a.Edges, i, store.Edge{To: side.b})
			if u.track {
				u.ev.exist[edgeKey(side.a, side.b)] = true
				u.ev.added[edgeKey(side.a, side.b)] = true
				u.ev.degree[side.a] = true
			}
		}
		e := &a.Edges[i]
		count := &e.In
		if side.out {
			count = &e.Out
		}
		before := *count
		after := uint32(max(0, int(before)+n))
		*count = after
		if e.Out == 0 && e.In == 0 {
			a.Edges = slices.Delete(a.Edges, i, i+1) // e and count are stale from here
			if u.track {
				u.ev.exist[edgeKey(side.a, side.b)] = true
				u.ev.degree[side.a] = true
			}
		}
		u.touch(side.a)
		if (before > 0) != (after > 0) {
			if u.track {
				u.ev.direct[edgeKey(side.a, side.b)] = true
			}
			u.markGraph(side.a)
		}
	}
	return nil
}

func edgeTo(a *store.AdjRec, to uint32) (store.Edge, bool) {
	i := sort.Search(len(a.Edges), func(i int) bool { return a.Edges[i].To >= to })
	if i < len(a.Edges) && a.Edges[i].To == to {
		return a.Edges[i], true
	}
	return store.Edge{}, false
}

// weight computes the weight of the edge u–v from persisted
// adjacency: 3·direct + 4·shared_sources + 1.5·adamic_adar + type_affinity.
func weight(au, av *store.AdjRec, u, v uint32, degree func(uint32) (int, error)) (float64, error) {
	e, _ := edgeTo(au, v)
	shared := 0
	for _, s := range au.Sources {
		if _, ok := slices.BinarySearch(av.Sources, s); ok {
			shared++
		}
	}
	aa, err := adamicAdar(au.Edges, av.Edges, u, v, degree)
	if err != nil {
		return 0, err
	}
	return 3*float64(e.Direct()) + 4*float64(shared) + 1.5*aa + typeAffinity(au.Type, av.Type), nil
}

// adamicAdar sums 1/ln(deg c) over the common neighbours c of u and v with
// deg c > 1.
func adamicAdar(a, b []store.Edge, u, v uint32, degree func(uint32) (int, error)) (float64, error) {
	sum := 0.0
	err := eachCommon(a, b, func(i, _ int) error {
		c := a[i].To
		if c == u || c == v {
			return nil
		}
		d, err := degree(c)
		if err != nil {
			return err
		}
		sum += aaTerm(d)
		return nil
	})
	return sum, err
}

// eachCommon calls fn with the indexes in a and b of every neighbour the
// two sorted lists share, in ascending order. Two lists of like length
// are merged; when one is much longer, the short one is searched in the
// long one (galloping from the last hit), so a hub's list costs
// O(short·log long), not its length.
func eachCommon(a, b []store.Edge, fn func(i, j int) error) error {
	if len(a) > 8*len(b) {
		return eachCommon(b, a, func(i, j int) error { return fn(j, i) })
	}
	if len(b) > 8*len(a) {
		lo := 0
		for i, x := range a {
			// binary search for x.To in b[lo:]
			l, h := lo, len(b)
			for l < h {
				m := int(uint(l+h) >> 1)
				if b[m].To < x.To {
					l = m + 1
				} else {
					h = m
				}
			}
			if l < len(b) && b[l].To == x.To {
				if err := fn(i, l); err != nil {
					return err
				}
			}
			lo = l
		}
		return nil
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i].To, b[j].To
		switch {
		case x < y:
			i++
		case x > y:
			j++
		default:
			if err := fn(i, j); err != nil {
				return err
			}
			i++
			j++
		}
	}
	return nil
}

// aaTerm is a common neighbour's adamic_adar contribution: 1/ln(deg) for
// deg > 1.
func aaTerm(deg int) float64 {
	if deg > 1 {
		return 1 / math.Log(float64(deg))
	}
	return 0
}

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
				au := nodes[u]
				if au == nil || ctx.Err() != nil {
					continue
				}
				nu := g.list(uint32(u))
				marked := false
				for i, v := range nu {
					if v < uint32(u) || int(v) >= n || nodes[v] == nil {
						continue
					}
					if !marked {
						for _, c := range nu {
							if int(c) < n {
								mark[c] = uint32(u) + 1
							}
						}
						marked = true
					}
					nv := g.list(v)
					aa := 0.0
					switch bits := g.hub[v]; {
					case len(nv) > 8*len(nu) && bits != nil:
						for _, c := range nu {
							if int(c) < n && bits[c/64]&(1<<(c%64)) != 0 && c != uint32(u) && c != v {
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
							if l < len(nv) && nv[l] == c && c != uint32(u) && c != v {
								aa += g.term[c]
							}
							lo = l
						}
					default:
						for _, c := range nv {
							if int(c) < n && mark[c] == uint32(u)+1 && c != uint32(u) && c != v {
								aa += g.term[c]
							}
						}
					}
					// the rest as weight computes it
					shared := 0
					if sv := g.sources(v); len(sv) > 0 {
						for _, s := range g.sources(uint32(u)) {
							if _, ok := slices.BinarySearch(sv, s); ok {
								shared++
							}
						}
					}
					w := float32(3*float64(au.Edges[i].Direct()) + 4*float64(shared) + 1.5*aa + g.affinity(uint32(u), v))
					// each edge is weighed by one worker, which alone
					// writes its two weights
					g.weight[g.off[u]+uint32(i)] = w
					if j := searchTo(nv, uint32(u)); j >= 0 {
						g.weight[g.off[v]+uint32(j)] = w
					}
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

// drainGraph brings the weights around up to max dirty nodes (all when
// max <= 0) up to date and reports whether dirty nodes remain.
//
// A dirty node's own edges are recomputed. Its degree change shifts the
// adamic_adar term of every edge between two of its neighbours by the same
// amount, 1.5·(1/ln d' − 1/ln d), which is added without recomputing those
// edges (an edge whose end is itself in this chunk is recomputed instead).
// Each node's Deg records the degree its neighbours' weights account for,
// so the shift is exact across chunks and interrupted drains.
func (u *updater) drainGraph(max int) (bool, error) {
	tx := u.tx
	dirty := tx.GraphDirty(max)
	if len(dirty) == 0 {
		return false, nil
	}
	inChunk := make(map[uint32]bool, len(dirty))
	for _, d := range dirty {
		inChunk[d] = true
	}
	// 1. degree shifts, except on edges this chunk recomputes
	for _, c := range dirty {
		a, err := u.adj(c)
		if err != nil {
			return false, err
		}
		if a == nil || int(a.Deg) == len(a.Edges) {
			continue
		}
		err = u.shiftDegree(c, a, func(x, y uint32) bool { return inChunk[x] || inChunk[y] })
		if err != nil {
			return false, err
		}
	}
	// 2. the chunk's own edges, recomputed from the accounted degrees
	pairs := map[edgePair]bool{}
	for _, d := range dirty {
		a, err := u.adj(d)
		if err != nil {
			return false, err
		}
		if a != nil {
			for _, e := range a.Edges {
				pairs[edgeKey(d, e.To)] = true
			}
		}
	}
	for p := range pairs {
		if err := u.reweigh(p); err != nil {
			return false, err
		}
	}
	if err := tx.ClearGraphDirty(dirty); err != nil {
		return false, err
	}
	if err := u.finish(nil); err != nil {
		return false, err
	}
	return len(tx.GraphDirty(1)) > 0, nil
}

// shiftDegree brings node c's accounted degree to its degree: every edge
// x–y between two of its neighbours (c is their common neighbour) shifts
// by 1.5·(1/ln d' − 1/ln d), except the edges skip names (they are
// recomputed whole).
func (u *updater) shiftDegree(c uint32, a *store.AdjRec, skip func(x, y uint32) bool) error {
	delta := float32(1.5 * (aaTerm(len(a.Edges)) - aaTerm(int(a.Deg))))
	a.Deg = uint32(len(a.Edges))
	u.touch(c)
	if delta == 0 {
		return nil
	}
	for _, e := range a.Edges {
		x := e.To
		ax, err := u.adj(x)
		if err != nil {
			return err
		}
		if ax == nil {
			continue
		}
		// the edges x–y between two of c's neighbours, each once (y > x)
		err = eachCommon(ax.Edges, a.Edges, func(i, _ int) error {
			y := ax.Edges[i].To
			if y <= x || y == c || skip(x, y) {
				return nil
			}
			ay, err := u.adj(y)
			if err != nil || ay == nil {
				return err
			}
			ax.Edges[i].Weight += delta
			if j := searchEdge(ay.Edges, x); j >= 0 {
				ay.Edges[j].Weight += delta
			}
			u.touch(x)
			u.touch(y)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// reweigh recomputes the weight of the edge p from the accounted degrees
// and writes it to both ends (nothing when the edge is gone).
func (u *updater) reweigh(p edgePair) error {
	a, b, err := u.adjPair(p)
	if err != nil {
		return err
	}
	if a == nil || b == nil {
		return nil
	}
	i, j := searchEdge(a.Edges, p.b), searchEdge(b.Edges, p.a)
	if i < 0 || j < 0 {
		return nil
	}
	w, err := weight(a, b, p.a, p.b, u.accountedDegree)
	if err != nil {
		return err
	}
	if a.Edges[i].Weight != float32(w) || b.Edges[j].Weight != float32(w) {
		a.Edges[i].Weight, b.Edges[j].Weight = float32(w), float32(w)
		u.touch(p.a)
		u.touch(p.b)
	}
	return nil
}

// searchEdge returns the index of the edge to `to` in a sorted list, or -1.
func searchEdge(es []store.Edge, to uint32) int {
	l, h := 0, len(es)
	for l < h {
		m := int(uint(l+h) >> 1)
		if es[m].To < to {
			l = m + 1
		} else {
			h = m
		}
	}
	if l < len(es) && es[l].To == to {
		return l
	}
	return -1
}

// graphEpsilon is how far a stored weight may lag a node's degree change
// (store.GraphEpsilon; tests raise it to exercise the lag).
var graphEpsilon = store.GraphEpsilon

type edgePair struct{ a, b uint32 }

func edgeKey(x, y uint32) edgePair {
	if x > y {
		x, y = y, x
	}
	return edgePair{x, y}
}

// graphEvents records, within one transaction, what changed in the graph
// so that a small change can re-weigh exactly the edges it affects.
type graphEvents struct {
	exist   map[edgePair]bool // an edge appeared or disappeared
	added   map[edgePair]bool // an edge appeared (it may have gone again)
	direct  map[edgePair]bool // a link direction appeared or disappeared
	attr    map[uint32]bool   // a node's type or sources changed
	degree  map[uint32]bool   // a node's degree may have changed
	dropped [][]uint32        // the former neighbours of each dropped node
}

func newGraphEvents() graphEvents {
	return graphEvents{exist: map[edgePair]bool{}, added: map[edgePair]bool{}, direct: map[edgePair]bool{},
		attr: map[uint32]bool{}, degree: map[uint32]bool{}}
}

func (g *graphEvents) reset() {
	clear(g.exist)
	clear(g.added)
	clear(g.direct)
	clear(g.attr)
	clear(g.degree)
	g.dropped = nil
}

// fewOldEdges reports whether node c has at most one edge that did not
// appear in this transaction (so no two of its neighbours were both its
// neighbours before). It stops at the second old edge.
func (u *updater) fewOldEdges(c uint32, a *store.AdjRec) bool {
	old := 0
	for _, e := range a.Edges {
		if !u.ev.added[edgeKey(c, e.To)] {
			if old++; old > 1 {
				return false
			}
		}
	}
	return true
}

// applyGraphEvents re-weighs, inside the transaction that changed them,
// exactly the edges a small graph change affects:
//   - an edge that appeared, disappeared or changed direction, and the
//     edges from its ends to their common neighbours, before or after
//     (whose adamic_adar gained or lost a term);
//   - every edge of a node whose type or sources changed;
//   - the edges between the former neighbours of a dropped node;
//   - a node's degree change shifts the weights between its neighbours by
//     1.5·(1/ln d' − 1/ln d); the shift is applied once it exceeds
//     graphEpsilon, and the node's Deg records the degree the weights
//     account for, so a lagging degree never compounds.
//
// Then the nodes it handled are no longer graph-dirty.
func (u *updater) applyGraphEvents() error {
	ev := &u.ev
	full := map[edgePair]bool{}
	for p := range ev.direct {
		full[p] = true
	}
	// an edge a–b that appeared or disappeared changes the common
	// neighbours of (a, x) for every neighbour x of a that is, or was
	// until this transaction, a neighbour of b
	partners := map[uint32][]uint32{}
	for p := range ev.exist {
		partners[p.a] = append(partners[p.a], p.b)
		partners[p.b] = append(partners[p.b], p.a)
	}
	side := func(x uint32, ax *store.AdjRec, y uint32, ay *store.AdjRec) {
		if ax == nil {
			return
		}
		if ay != nil {
			_ = eachCommon(ay.Edges, ax.Edges, func(i, _ int) error {
				if z := ay.Edges[i].To; z != x {
					full[edgeKey(x, z)] = true
				}
				return nil
			})
		}
		for _, z := range partners[y] {
			if z != x && searchEdge(ax.Edges, z) >= 0 {
				full[edgeKey(x, z)] = true
			}
		}
	}
	for p := range ev.exist {
		a, b, err := u.adjPair(p)
		if err != nil {
			return err
		}
		if a != nil && b != nil {
			full[p] = true
		}
		side(p.a, a, p.b, b)
		side(p.b, b, p.a, a)
	}
	for c := range ev.attr {
		a, err := u.adj(c)
		if err != nil {
			return err
		}
		if a != nil {
			for _, e := range a.Edges {
				full[edgeKey(c, e.To)] = true
			}
		}
	}
	for _, nbrs := range ev.dropped {
		set := make(map[uint32]bool, len(nbrs))
		for _, x := range nbrs {
			set[x] = true
		}
		for _, x := range nbrs {
			ax, err := u.adj(x)
			if err != nil {
				return err
			}
			if ax == nil {
				continue
			}
			for _, e := range ax.Edges {
				if e.To > x && set[e.To] {
					full[edgeKey(x, e.To)] = true
				}
			}
		}
	}
	// degree shifts, lazily
	for c := range ev.degree {
		a, err := u.adj(c)
		if err != nil {
			return err
		}
		if a == nil || int(a.Deg) == len(a.Edges) {
			continue
		}
		if math.Abs(1.5*(aaTerm(len(a.Edges))-aaTerm(int(a.Deg)))) < graphEpsilon {
			continue
		}
		if u.fewOldEdges(c, a) {
			// every edge between two of c's neighbours has an end whose
			// edge to c is new, so it is re-weighed whole above (full):
			// nothing to shift (a new page, whose neighbours may be hubs)
			a.Deg = uint32(len(a.Edges))
			u.touch(c)
			continue
		}
		if err := u.shiftDegree(c, a, func(x, y uint32) bool { return full[edgePair{x, y}] }); err != nil {
			return err
		}
	}
	for p := range full {
		if err := u.reweigh(p); err != nil {
			return err
		}
	}
	ev.reset()
	clear(u.graphDirty)
	return nil
}
