// Package storecheck renders the derived content of a store as canonical
// text keyed by paths (never by internal doc numbers), so tests can compare
// a store built incrementally, or after a crash, with one built from
// scratch. It also recomputes the graph naively from the page records to
// check the incrementally maintained weights.
package storecheck

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/synapse-wiki/synapse/store"
)

// Fingerprint lists pages (path, title, type, names, sources, resolved
// links), backlinks, dangling links and graph edges with weights rounded to
// 1e-4, and the search index: each term's postings by path, and the
// collection statistics (not how the postings are cut into blocks).
func Fingerprint(s *store.Store) (string, error) {
	var lines []string
	err := s.View(func(tx *store.Tx) error {
		paths := map[uint32]string{}
		var pages []*store.PageRec
		if err := tx.EachPage(func(p *store.PageRec) bool {
			paths[p.Doc] = p.Path
			pages = append(pages, p)
			return true
		}); err != nil {
			return err
		}
		for _, p := range pages {
			var links []string
			for _, l := range p.Links {
				links = append(links, fmt.Sprintf("%s→%s%s(%d)", l.Key, paths[l.To], l.File, l.Ambiguous))
			}
			var files []string
			for _, l := range p.FileLinks {
				files = append(files, fmt.Sprintf("%s→%s(%d)", l.Key, l.File, l.Ambiguous))
			}
			lines = append(lines, fmt.Sprintf("page %s title=%q type=%s aliases=%q tags=%q sources=%q pending=%v links=[%s] file_links=[%s]",
				p.Path, p.Title, p.Type, p.Aliases, p.Tags, p.SourceKeys, p.LinksPending, strings.Join(links, " "), strings.Join(files, " ")))
			var bl []string
			for _, b := range tx.Backlinks(p.Doc) {
				bl = append(bl, fmt.Sprintf("%s×%d", paths[b.Src], b.Count))
			}
			sort.Strings(bl)
			if len(bl) > 0 {
				lines = append(lines, fmt.Sprintf("backlinks %s <- %s", p.Path, strings.Join(bl, " ")))
			}
			a, err := tx.Adj(p.Doc)
			if err != nil {
				return err
			}
			if a != nil {
				var es []string
				for _, e := range a.Edges {
					es = append(es, fmt.Sprintf("%s out=%d in=%d w=%.4f", paths[e.To], e.Out, e.In, e.Weight))
				}
				sort.Strings(es)
				lines = append(lines, fmt.Sprintf("node %s type=%s sources=%q edges=[%s]", p.Path, a.Type, a.Sources, strings.Join(es, "; ")))
			}
		}
		for _, set := range []struct {
			name string
			refs []store.DanglingRef
		}{{"dangling", tx.Dangling()}, {"offgraph", tx.OffGraph()}} {
			for _, d := range set.refs {
				var srcs []string
				for _, b := range d.Sources {
					srcs = append(srcs, fmt.Sprintf("%s×%d", paths[b.Src], b.Count))
				}
				sort.Strings(srcs)
				lines = append(lines, fmt.Sprintf("%s %q <- %s", set.name, d.Key, strings.Join(srcs, " ")))
			}
		}
		if err := tx.EachFile("", func(p string, f store.FileRec) bool {
			lines = append(lines, fmt.Sprintf("file %s kind=%d size=%d sha=%x named=%v", p, f.Kind, f.Size, f.SHA256[:6], tx.HasFileName(p)))
			return true
		}); err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("counts pages=%d links=%d pending_links=%d pending_graph=%d",
			tx.PageCount(), tx.LinkCount(), len(tx.LinksDirty(0)), tx.GraphDirtyCount()))
		return searchLines(tx, paths, &lines)
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n", err
}

// Affinity mirrors the type affinity table (written out again
// here on purpose: the check must not share code with what it checks).
func Affinity(a, b string) float64 {
	pair := map[[2]string]float64{}
	set := func(v float64, ps ...string) {
		for _, p := range ps {
			x, y, _ := strings.Cut(p, "-")
			pair[[2]string{x, y}] = v
			pair[[2]string{y, x}] = v
		}
	}
	set(1.2, "entity-concept", "concept-synthesis")
	set(1.0, "entity-source", "entity-synthesis", "concept-source", "concept-query", "source-synthesis", "query-synthesis")
	set(0.8, "entity-entity", "entity-query", "concept-concept", "source-query", "synthesis-synthesis")
	if v, ok := pair[[2]string{a, b}]; ok {
		return v
	}
	return 0.5
}

// CheckGraph recomputes every edge and weight from the page records alone
// (resolved links, sources, types) and compares them with the persisted
// adjacency, allowing the adamic_adar lag of store.GraphEpsilon. It
// returns one line per difference.
func CheckGraph(s *store.Store) ([]string, error) { return CheckGraphLag(s, store.GraphEpsilon) }

// CheckGraphLag is CheckGraph with a given lag bound: every node's
// accounted degree (AdjRec.Deg) must move its adamic_adar term, 1.5/ln(deg),
// by less than eps from its true degree, and every weight must be exact
// with the accounted degrees.
func CheckGraphLag(s *store.Store, eps float64) ([]string, error) {
	var diffs []string
	err := s.View(func(tx *store.Tx) error {
		type node struct {
			typ     string
			sources map[string]bool
			out     map[uint32]bool
			count   map[uint32]int // links to each target
		}
		nodes := map[uint32]*node{}
		reserved := map[uint32]bool{}
		if err := tx.EachPage(func(p *store.PageRec) bool {
			if p.Reserved {
				reserved[p.Doc] = true
				return true
			}
			n := &node{typ: p.Type, sources: map[string]bool{}, out: map[uint32]bool{}, count: map[uint32]int{}}
			for _, src := range p.SourceKeys {
				n.sources[src] = true
			}
			for _, l := range p.Links {
				if l.To != 0 && l.To != p.Doc {
					n.out[l.To] = true
					n.count[l.To]++
				}
			}
			nodes[p.Doc] = n
			return true
		}); err != nil {
			return err
		}
		accounted := map[uint32]int{}
		if err := tx.EachAdj(func(doc uint32, a *store.AdjRec) bool {
			accounted[doc] = int(a.Deg)
			return true
		}); err != nil {
			return err
		}
		// the degree table, when complete, holds exactly every node's Deg
		// (0 for a doc that is no node)
		if tx.AdjDegreesComplete() {
			for doc := uint32(1); doc <= tx.MetaU32("next_doc")+1; doc++ {
				if got := int(tx.AdjDeg(doc)); got != accounted[doc] {
					diffs = append(diffs, fmt.Sprintf("degree table: doc %d has %d, its adjacency record %d", doc, got, accounted[doc]))
				}
			}
		}
		nb := map[uint32]map[uint32]bool{}
		for d, n := range nodes {
			for t := range n.out {
				if reserved[t] || nodes[t] == nil {
					continue
				}
				if nb[d] == nil {
					nb[d] = map[uint32]bool{}
				}
				if nb[t] == nil {
					nb[t] = map[uint32]bool{}
				}
				nb[d][t], nb[t][d] = true, true
			}
		}
		want := map[[2]uint32]float64{}
		for u, ns := range nb {
			for v := range ns {
				if u >= v {
					continue
				}
				direct := 0
				if nodes[u].out[v] {
					direct++
				}
				if nodes[v].out[u] {
					direct++
				}
				shared := 0
				for src := range nodes[u].sources {
					if nodes[v].sources[src] {
						shared++
					}
				}
				aa := 0.0
				for c := range nb[u] {
					if nb[v][c] && c != u && c != v {
						aa += aaTerm(accounted[c])
					}
				}
				want[[2]uint32{u, v}] = 3*float64(direct) + 4*float64(shared) + 1.5*aa + Affinity(nodes[u].typ, nodes[v].typ)
			}
		}
		got := map[[2]uint32]float64{}
		if err := tx.EachAdj(func(doc uint32, a *store.AdjRec) bool {
			if nodes[doc] == nil {
				diffs = append(diffs, fmt.Sprintf("adjacency for doc %d that is not a page", doc))
			} else if a.Type != nodes[doc].typ {
				diffs = append(diffs, fmt.Sprintf("doc %d type %q, page says %q", doc, a.Type, nodes[doc].typ))
			}
			for _, e := range a.Edges {
				if n := nodes[doc]; n != nil && nodes[e.To] != nil && !reserved[e.To] {
					if int(e.Out) != n.count[e.To] || int(e.In) != nodes[e.To].count[doc] {
						diffs = append(diffs, fmt.Sprintf("edge %d→%d counts out=%d in=%d, pages say %d and %d", doc, e.To, e.Out, e.In, n.count[e.To], nodes[e.To].count[doc]))
					}
				}
				k := [2]uint32{min(doc, e.To), max(doc, e.To)}
				if old, ok := got[k]; ok && math.Abs(old-float64(e.Weight)) > 1e-4 {
					diffs = append(diffs, fmt.Sprintf("edge %v weight differs between its ends: %v vs %v", k, old, e.Weight))
				}
				got[k] = float64(e.Weight)
			}
			return true
		}); err != nil {
			return err
		}
		for d, deg := range accounted {
			if lag := 1.5 * math.Abs(aaTerm(len(nb[d]))-aaTerm(deg)); lag >= eps+1e-9 {
				diffs = append(diffs, fmt.Sprintf("node %d accounts for degree %d, has %d: adamic_adar lag %.6f ≥ %g", d, deg, len(nb[d]), lag, eps))
			}
		}
		for k, w := range want {
			g, ok := got[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("missing edge %v (want weight %.4f)", k, w))
			} else if math.Abs(g-w) > 1e-3 {
				diffs = append(diffs, fmt.Sprintf("edge %v weight %.4f, want %.4f", k, g, w))
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("extra edge %v", k))
			}
		}
		return nil
	})
	sort.Strings(diffs)
	return diffs, err
}

func aaTerm(deg int) float64 {
	if deg > 1 {
		return 1 / math.Log(float64(deg))
	}
	return 0
}

// DiffLines lists the lines of b missing from a ("+ ") and of a missing
// from b ("- "), as multisets.
func DiffLines(a, b string) []string {
	in := map[string]int{}
	for _, l := range strings.Split(a, "\n") {
		in[l]++
	}
	var out []string
	for _, l := range strings.Split(b, "\n") {
		if in[l] > 0 {
			in[l]--
			continue
		}
		out = append(out, "+ "+l)
	}
	for l, n := range in {
		for ; n > 0; n-- {
			out = append(out, "- "+l)
		}
	}
	sort.Strings(out)
	return out
}

// searchLines adds the search index to lines: a line per term with its
// postings (path and field frequencies, in path order), and the collection
// statistics; or why it cannot be read.
func searchLines(tx *store.Tx, paths map[uint32]string, lines *[]string) error {
	if !tx.SearchReady() {
		*lines = append(*lines, "search not built")
		return nil
	}
	st := tx.SearchStats()
	*lines = append(*lines, fmt.Sprintf("search docs=%d lengths=%v staged=%v version=%q", st.Docs, st.Len, tx.SearchStaged(), tx.SearchVersion()))
	for _, t := range tx.SearchTermsWithPrefix("", math.MaxInt) {
		var ps []string
		if err := tx.SearchPostings(t.ID, func(doc uint32, tf [store.SearchFields]uint32) {
			ps = append(ps, fmt.Sprintf("%s%v", paths[doc], tf))
		}); err != nil {
			return fmt.Errorf("postings of %q: %w", t.Term, err)
		}
		sort.Strings(ps)
		*lines = append(*lines, fmt.Sprintf("term %q df=%d %s", t.Term, t.DF, strings.Join(ps, " ")))
	}
	return nil
}
