package embed

import (
	"container/heap"
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/synapse-wiki/synapse/store"
)

// Semantic ranking reads the pages' records where they lie in the store's
// memory-mapped file (store.ScanVecPages): nothing is loaded or decoded
// before the first query, so a CLI search pays no start-up cost for the
// vectors and `serve` keeps no copy of them.
//
// Exact search scans every chunk; above exactLimit chunks (about 2,500
// pages of 3 KB) rank first keeps the chunks whose sign bits agree most
// with the query's (Hamming distance, 8 popcounts a chunk at 512
// dimensions) and computes the int8 cosine for those only: candidates of
// them, at least candidateShare of the chunks searched. (Variables for
// tests.)
var (
	exactLimit     = 16384
	candidates     = 4096
	candidateShare = 0.06
)

// semHit is a page ranked by meaning: the cosine of its best chunk.
type semHit struct {
	doc     uint32
	cos     float64
	chunk   int    // index of the best chunk in the page's record
	heading string // its heading path (filled for the hits returned)
}

// quantizeQuery returns y (unit length) as int8 with its scale.
func quantizeQuery(y []float32) ([]int8, float32) {
	maxAbs := float32(0)
	for _, f := range y {
		maxAbs = max(maxAbs, float32(math.Abs(float64(f))))
	}
	if maxAbs == 0 {
		return make([]int8, len(y)), 0
	}
	s := maxAbs / 127
	out := make([]int8, len(y))
	for i, f := range y {
		out[i] = int8(math.Round(float64(f / s)))
	}
	return out, s
}

// dot is the inner product of int8 chunk values and the query widened to
// int32 (exact for any dimension below 2^17).
func dot(a []int8, b []int32) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		a, b := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += int32(a[0])*b[0] + int32(a[4])*b[4]
		s1 += int32(a[1])*b[1] + int32(a[5])*b[5]
		s2 += int32(a[2])*b[2] + int32(a[6])*b[6]
		s3 += int32(a[3])*b[3] + int32(a[7])*b[7]
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * b[i]
	}
	return s0 + s1 + s2 + s3
}

// scanned is one page's record as the scan found it.
type scanned struct {
	doc  uint32
	v    store.VecView
	base int // index of its first chunk among all chunks scanned
}

// rank returns the n pages allowed by allow whose best chunk is closest to
// the unit query vector y (of the store's dimension dim), best first, with
// the heading path of that chunk.
func rank(tx *store.Tx, dim int, y []float32, allow func(doc uint32) bool, n int) ([]semHit, error) {
	if dim == 0 || len(y) != dim || n <= 0 {
		return nil, nil
	}
	// sized from the store's counts: no growing copies of the list
	pages := make([]scanned, 0, tx.VecStats().Pages)
	total := 0
	err := tx.ScanVecPages(func(doc uint32, v *store.VecView) error {
		if v.Dim != dim || v.N == 0 || (allow != nil && !allow(doc)) {
			return nil
		}
		pages = append(pages, scanned{doc: doc, v: *v, base: total})
		total += v.N
		return nil
	})
	if err != nil {
		return nil, err
	}
	yq, ys := quantizeQuery(y)
	y32 := make([]int32, len(yq))
	for i, v := range yq {
		y32[i] = int32(v)
	}
	var keep []bool // chunks that pass the prefilter (nil: all)
	if total > exactLimit {
		keep = prefilter(pages, total, yq, max(candidates, int(float64(total)*candidateShare)))
	}
	h := &semHeap{}
	for _, p := range pages {
		best, bestAt := float32(-2), -1
		for i := range p.v.N {
			if keep != nil && !keep[p.base+i] {
				continue
			}
			c := float32(dot(p.v.Q(i), y32)) * p.v.Scale(i)
			if c > best {
				best, bestAt = c, i
			}
		}
		if bestAt < 0 {
			continue
		}
		hit := semHit{doc: p.doc, cos: float64(best * ys), chunk: bestAt}
		if h.Len() < n {
			heap.Push(h, hit)
		} else if hit.cos > (*h)[0].cos {
			(*h)[0] = hit
			heap.Fix(h, 0)
		}
	}
	out := make([]semHit, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(semHit)
	}
	for i := range out {
		v, ok, err := tx.VecView(out[i].doc)
		if err != nil || !ok {
			continue
		}
		if hs, err := v.Headings(); err == nil && out[i].chunk < len(hs) {
			out[i].heading = hs[out[i].chunk]
		}
	}
	return out, nil
}

// prefilter marks the n chunks whose sign bits are closest to the query's
// (all chunks at the cut-off distance included).
func prefilter(pages []scanned, total int, yq []int8, n int) []bool {
	words := (len(yq) + 63) / 64
	qb := make([]uint64, words)
	for j, x := range yq {
		if x > 0 {
			qb[j/64] |= 1 << (j % 64)
		}
	}
	dist := make([]uint16, total)
	hist := make([]int, words*64+1)
	for _, p := range pages {
		for i := range p.v.N {
			b := p.v.Bits(i)
			d := 0
			for w, x := range qb {
				d += bits.OnesCount64(binary.LittleEndian.Uint64(b[w*8:]) ^ x)
			}
			dist[p.base+i] = uint16(d)
			hist[d]++
		}
	}
	cut, seen := 0, 0
	for cut < len(hist)-1 && seen+hist[cut] < n {
		seen += hist[cut]
		cut++
	}
	keep := make([]bool, total)
	for i, d := range dist {
		keep[i] = int(d) <= cut
	}
	return keep
}

// semHeap is a min-heap on cosine (ties: the higher doc is worse).
type semHeap []semHit

func (h semHeap) Len() int { return len(h) }
func (h semHeap) Less(i, j int) bool {
	if h[i].cos != h[j].cos {
		return h[i].cos < h[j].cos
	}
	return h[i].doc > h[j].doc
}
func (h semHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *semHeap) Push(x any)   { *h = append(*h, x.(semHit)) }
func (h *semHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
