package embed

import (
	"container/heap"
	"math"
	"math/bits"
	"strings"
	"sync"

	"github.com/synapse-wiki/synapse/store"
)

// matrix is every embedded chunk of a store at one generation, in memory:
// chunk i belongs to docs[i], its quantized vector is q[i·dim:(i+1)·dim]
// times scale[i]. Chunks of one page are adjacent (pageStart).
type matrix struct {
	s     *store.Store
	gen   uint64
	model string
	dim   int
	pages []pageSpan
	keys  []store.ChunkKey
	heads []string
	scale []float32
	q     []int8
	// bits holds each chunk's sign bits, words per chunk: the prefilter
	// of large matrices (rank).
	bits  []uint64
	words int
	// headed maps a folded section heading (the last segment of a chunk's
	// heading path) to the docs with such a section.
	headed map[string][]uint32
}

// Exact search scans every chunk; above exactLimit chunks (about 2,500
// pages of 3 KB) rank first keeps the chunks whose sign bits agree most
// with the query's (Hamming distance, 8 popcounts a chunk at 512
// dimensions) and computes the int8 cosine for those only: candidates of
// them, at least candidateShare of all chunks. (Variables for tests.)
var (
	exactLimit     = 16384
	candidates     = 4096
	candidateShare = 0.06
)

type pageSpan struct {
	doc        uint32
	start, end int // chunk range
}

// cache holds the matrix last loaded (a process serves one store; a CLI
// verb loads it once). Loading reads every chunk list and vector once;
// queries after it only read the generation.
var cache struct {
	sync.Mutex
	m *matrix
}

// loadMatrix returns the chunks of s as of tx, from the cache when the
// generation is unchanged.
func loadMatrix(s *store.Store, tx *store.Tx) (*matrix, error) {
	gen := tx.VecGen()
	cache.Lock()
	defer cache.Unlock()
	if m := cache.m; m != nil && m.s == s && m.gen == gen {
		return m, nil
	}
	model, dim := tx.VecModel()
	m := &matrix{s: s, gen: gen, model: model, dim: dim}
	if dim > 0 {
		err := tx.EachVecPage(func(doc uint32, p *store.VecPage) error {
			span := pageSpan{doc: doc, start: len(m.keys)}
			for _, c := range p.Chunks {
				v, ok := tx.Vector(c.Key)
				if !ok || len(v.Q) != dim {
					continue // (PutVecPage never lists a missing vector)
				}
				m.keys = append(m.keys, c.Key)
				m.heads = append(m.heads, c.Heading)
				m.scale = append(m.scale, v.Scale)
				m.q = append(m.q, v.Q...)
			}
			span.end = len(m.keys)
			if span.end > span.start {
				m.pages = append(m.pages, span)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	m.headed = map[string][]uint32{}
	for _, p := range m.pages {
		last := ""
		for i := p.start; i < p.end; i++ {
			h := m.heads[i]
			if j := strings.LastIndex(h, " > "); j >= 0 {
				h = h[j+len(" > "):]
			}
			if h = store.Fold(h); h != "" && h != last {
				m.headed[h] = append(m.headed[h], p.doc)
				last = h
			}
		}
	}
	if dim > 0 {
		m.words = (dim + 63) / 64
		m.bits = make([]uint64, len(m.keys)*m.words)
		for i := range m.keys {
			signBits(m.q[i*dim:(i+1)*dim], m.bits[i*m.words:(i+1)*m.words])
		}
	}
	cache.m = m
	return m, nil
}

// signBits sets bit j of out when q[j] > 0.
func signBits(q []int8, out []uint64) {
	for j, x := range q {
		if x > 0 {
			out[j/64] |= 1 << (j % 64)
		}
	}
}

// semHit is a page ranked by meaning: the cosine of its best chunk.
type semHit struct {
	doc   uint32
	cos   float64
	chunk int // index of the best chunk in the matrix
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

// rank returns the n pages allowed by allow whose best chunk is closest to
// the unit query vector y, best first. It is an exact scan: every chunk of
// every allowed page.
func (m *matrix) rank(y []float32, allow func(doc uint32) bool, n int) []semHit {
	if m.dim == 0 || len(y) != m.dim || n <= 0 {
		return nil
	}
	yq, ys := quantizeQuery(y)
	y32 := make([]int32, len(yq))
	for i, v := range yq {
		y32[i] = int32(v)
	}
	var keep []bool // chunks that pass the prefilter (nil: all)
	if len(m.keys) > exactLimit {
		keep = m.prefilter(yq, allow, max(candidates, int(float64(len(m.keys))*candidateShare)))
	}
	h := &semHeap{}
	for _, p := range m.pages {
		if allow != nil && !allow(p.doc) {
			continue
		}
		best, bestAt := float32(-2), -1
		for i := p.start; i < p.end; i++ {
			if keep != nil && !keep[i] {
				continue
			}
			c := float32(dot(m.q[i*m.dim:(i+1)*m.dim], y32)) * m.scale[i]
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
	return out
}

// prefilter marks the n chunks of allowed pages whose sign bits are
// closest to the query's (all chunks at the cut-off distance included).
func (m *matrix) prefilter(yq []int8, allow func(uint32) bool, n int) []bool {
	qb := make([]uint64, m.words)
	signBits(yq, qb)
	dist := make([]uint16, len(m.keys))
	hist := make([]int, m.words*64+1)
	for _, p := range m.pages {
		if allow != nil && !allow(p.doc) {
			for i := p.start; i < p.end; i++ {
				dist[i] = math.MaxUint16
			}
			continue
		}
		for i := p.start; i < p.end; i++ {
			b := m.bits[i*m.words : (i+1)*m.words]
			d := 0
			for w, x := range b {
				d += bits.OnesCount64(x ^ qb[w])
			}
			dist[i] = uint16(d)
			hist[d]++
		}
	}
	cut, seen := 0, 0
	for cut < len(hist)-1 && seen+hist[cut] < n {
		seen += hist[cut]
		cut++
	}
	keep := make([]bool, len(m.keys))
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
