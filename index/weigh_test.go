package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/synapse-wiki/synapse/store"
)

// randomGraph is a symmetric graph of n nodes (some absent) with a few hubs,
// edges to docs past the snapshot, random types and sources.
func randomGraph(r *rand.Rand, n int, manyTypes bool) []*store.AdjRec {
	nodes := make([]*store.AdjRec, n)
	types := []string{"note", "concept", "entity", "source", "synthesis", "query", ""}
	if manyTypes {
		// open types: more than a byte can number
		for i := 0; i < 300; i++ {
			types = append(types, fmt.Sprintf("kind-%d", i))
		}
	}
	for d := 1; d < n; d++ {
		if r.IntN(10) == 0 {
			continue // a doc that is no node (deleted, reserved)
		}
		a := &store.AdjRec{Type: types[r.IntN(len(types))]}
		for s := r.IntN(3); s > 0; s-- {
			a.Sources = append(a.Sources, string(rune('a'+r.IntN(6))))
		}
		slices.Sort(a.Sources)
		a.Sources = slices.Compact(a.Sources)
		nodes[d] = a
	}
	edges := map[[2]uint32]bool{}
	add := func(x, y uint32) {
		if x == y || nodes[x] == nil {
			return
		}
		if int(y) < n && nodes[y] == nil {
			return
		}
		edges[edgeKeyArr(x, y)] = true
	}
	hubs := []uint32{1, 2, uint32(n / 2)}
	for d := 1; d < n; d++ {
		for k := r.IntN(6); k > 0; k-- {
			add(uint32(d), uint32(1+r.IntN(n-1)))
		}
		if r.IntN(3) == 0 {
			add(uint32(d), hubs[r.IntN(len(hubs))])
		}
		if r.IntN(50) == 0 {
			add(uint32(d), uint32(n+r.IntN(5))) // a doc past the snapshot: no node
		}
	}
	for e := range edges {
		x, y := e[0], e[1]
		out, in := uint32(r.IntN(3)), uint32(r.IntN(3))
		if out == 0 && in == 0 {
			out = 1
		}
		nodes[x].Edges = append(nodes[x].Edges, store.Edge{To: y, Out: out, In: in})
		if int(y) < n {
			nodes[y].Edges = append(nodes[y].Edges, store.Edge{To: x, Out: in, In: out})
		}
	}
	for _, a := range nodes {
		if a != nil {
			slices.SortFunc(a.Edges, func(p, q store.Edge) int { return int(p.To) - int(q.To) })
			a.Edges = slices.CompactFunc(a.Edges, func(p, q store.Edge) bool { return p.To == q.To })
			a.Deg = uint32(len(a.Edges))
		}
	}
	return nodes
}

func edgeKeyArr(x, y uint32) [2]uint32 {
	if x > y {
		x, y = y, x
	}
	return [2]uint32{x, y}
}

// TestWeighAll_MatchesWeight: the bulk weighing of rebuildGraph gives every
// edge the bits weight gives it from the same adjacency (merging the two
// neighbour lists through eachCommon), hubs and absent nodes included.
func TestWeighAll_MatchesWeight(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		r := rand.New(rand.NewPCG(seed, 15))
		n := 300 + r.IntN(700)
		if seed == 4 {
			n = 3000
		}
		nodes := randomGraph(r, n, seed == 4)
		if seed == 4 {
			if g := flattenGraph(nodes); g.aff != nil {
				t.Fatalf("%d types numbered in a byte", len(g.types))
			}
		}
		degree := func(d uint32) (int, error) {
			if int(d) < len(nodes) && nodes[d] != nil {
				return int(nodes[d].Deg), nil
			}
			return 0, nil
		}
		want := map[[2]uint32]float32{}
		for u, au := range nodes {
			if au == nil {
				continue
			}
			for _, e := range au.Edges {
				v := e.To
				if v < uint32(u) || int(v) >= n || nodes[v] == nil {
					continue
				}
				w, _ := weight(au, nodes[v], uint32(u), v, degree)
				want[[2]uint32{uint32(u), v}] = float32(w)
			}
		}
		for _, workers := range []int{1, 3} {
			for _, a := range nodes {
				if a != nil {
					for i := range a.Edges {
						a.Edges[i].Weight = -1
					}
				}
			}
			if !weighAll(context.Background(), nodes, workers, func(int) {}) {
				t.Fatal("weighAll stopped")
			}
			checked := 0
			for u, au := range nodes {
				if au == nil {
					continue
				}
				for _, e := range au.Edges {
					k := edgeKeyArr(uint32(u), e.To)
					w, ok := want[k]
					if !ok {
						if e.Weight != -1 {
							t.Fatalf("seed %d: edge %d-%d past the snapshot weighed %v", seed, u, e.To, e.Weight)
						}
						continue
					}
					if e.Weight != w {
						t.Fatalf("seed %d workers %d: edge %d-%d weight %v, weight gives %v", seed, workers, u, e.To, e.Weight, w)
					}
					checked++
				}
			}
			if checked != 2*len(want) || len(want) < n {
				t.Fatalf("seed %d: checked %d edge ends of %d edges", seed, checked, len(want))
			}
		}
	}
}
