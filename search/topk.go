package search

import (
	"math"
	"math/bits"
	"slices"

	"github.com/synapse-wiki/synapse/store"
)

// Top-k retrieval with dynamic pruning. A term's postings come
// in chunks of up to 128 docs (store.SearchBlock), each with a bound on
// what any of its docs can score: the highest tf and the shortest field
// among them. The docs are walked in windows; per window:
//
//   - when the bounds of all terms together cannot beat the current k-th
//     best score (θ), the window is skipped without decoding anything;
//   - otherwise the terms are sorted by bound, and those whose bounds sum
//     to at most θ are non-essential (MaxScore): a doc holding only them
//     cannot enter the top k. The essential terms' postings in the window
//     are added up into a score buffer; each doc they hold is then
//     completed with the non-essential terms, highest bound first, and
//     dropped as soon as what it has plus what the chunks holding it
//     could still add is at most θ. A chunk is decoded only when a doc
//     needs it.
//
// With required terms (a phrase's words), a doc must hold them all: the
// rarest one leads (its docs are the candidates) and the others are
// checked first. The result is exactly the top k of an exhaustive scoring
// (ties go to the lower doc), which TestTopK checks.

// Window sizes in docs: a window ends where a term's chunk ends or the
// next begins, but spans at least windowMin docs (a dense term then has
// several chunks in it, under the highest of their bounds) and at most
// windowMax (the score buffer's size).
const (
	windowMin = 512
	windowMax = 4096
)

// boundSlack widens every bound a little so that float rounding never
// prunes a doc whose score equals its bound.
const boundSlack = 1 + 1e-4

// cursor walks one query term's postings, chunk by chunk.
type cursor struct {
	t        *qterm
	idf      float32
	required bool
	blocks   []store.SearchBlock // chunks
	ubs      []float32           // per chunk: the most a doc of it can score
	bi       int                 // the first chunk whose Last ≥ the window's start
	ci       int                 // the chunk lookups are in (≥ bi)
	dec      int                 // the chunk buf holds (-1: none)
	buf      []store.SearchPosting
	pos      int     // in buf: postings before it are done with
	wub      float32 // the highest bound of its chunks in the window (0: none)
	work     *topKWork
}

// topKWork counts what a query's retrieval read: the postings of all its
// words (before Params.MaxTerms and MinIDF leave some unscored) and the
// chunks of the scored ones, and how many of them topK decoded
// (TestTopK_Bounded checks that common words are not walked in full).
type topKWork struct {
	Postings, Chunks               int
	DecodedChunks, DecodedPostings int
}

// load decodes chunk j into buf (once).
func (c *cursor) load(j int) ([]store.SearchPosting, error) {
	if c.dec != j {
		var err error
		if c.buf, err = c.blocks[j].Decode(c.buf[:0]); err != nil {
			return nil, err
		}
		c.dec, c.pos = j, 0
		c.work.DecodedChunks++
		c.work.DecodedPostings += len(c.buf)
	}
	return c.buf, nil
}

// chunkAt moves ci to the chunk that may hold doc d (docs come in
// ascending order) and returns its bound, 0 when no chunk can hold d.
func (c *cursor) chunkAt(d uint32) float32 {
	c.ci = max(c.ci, c.bi)
	for c.ci < len(c.blocks) && c.blocks[c.ci].Last < d {
		c.ci++
	}
	if c.ci == len(c.blocks) || c.blocks[c.ci].First > d {
		return 0
	}
	return c.ubs[c.ci]
}

// find returns the posting of doc d in chunk ci (after chunkAt(d) > 0),
// or nil.
func (c *cursor) find(d uint32) (*store.SearchPosting, error) {
	ps, err := c.load(c.ci)
	if err != nil {
		return nil, err
	}
	i := c.pos
	if i < len(ps) && ps[i].Doc < d {
		// gallop, then binary search
		step := 1
		for i+step < len(ps) && ps[i+step].Doc < d {
			i += step
			step *= 2
		}
		i += sortSearch(ps[i:min(i+step+1, len(ps))], d)
	}
	c.pos = i
	if i < len(ps) && ps[i].Doc == d {
		return &ps[i], nil
	}
	return nil, nil
}

// sortSearch returns the index of the first posting ≥ d.
func sortSearch(ps []store.SearchPosting, d uint32) int {
	lo, hi := 0, len(ps)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ps[m].Doc < d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// scorer holds one query's scoring constants.
type scorer struct {
	table [store.SearchFields][256]float32 // field weight / length normalization, by quantized length
	k1    float32
	norms *store.SearchNorms
	chunk []byte
	cur   uint32 // the chunk number held in chunk
}

func newScorer(r *run) *scorer {
	sc := &scorer{k1: float32(r.p.K1), norms: r.tx.SearchNorms(), cur: math.MaxUint32}
	for f := range sc.table {
		avg := r.stats.AvgLen(f)
		for qv := range sc.table[f] {
			l := float64(store.DequantizeLength(uint8(qv)))
			sc.table[f][qv] = float32(r.p.W[f] / (1 - r.p.B[f] + r.p.B[f]*l/avg))
		}
	}
	return sc
}

// saturate is BM25's tf saturation of a field-weighted frequency x.
func (sc *scorer) saturate(x float32) float32 { return x * (sc.k1 + 1) / (sc.k1 + x) }

// bound returns the most a doc of block b can score for a term of idf.
func (sc *scorer) bound(b *store.SearchBlock, idf float32) float32 {
	var x float32
	for f := range b.MaxTF {
		if b.MaxTF[f] > 0 {
			x += float32(b.MaxTF[f]) * sc.table[f][b.MinLen[f]]
		}
	}
	return idf * sc.saturate(x) * boundSlack
}

// score returns a posting's score for a term of idf (0 for a doc without
// norms, which is not a live document).
func (sc *scorer) score(p *store.SearchPosting, idf float32) float32 {
	d := p.Doc
	if c := d / store.NormsPerChunk; c != sc.cur {
		sc.cur, sc.chunk = c, sc.norms.Chunk(c)
	}
	i := int(d%store.NormsPerChunk) * store.SearchFields
	if i+store.SearchFields > len(sc.chunk) {
		return 0
	}
	ch := sc.chunk[i : i+store.SearchFields]
	x := float32(p.TF[0])*sc.table[0][ch[0]] + float32(p.TF[1])*sc.table[1][ch[1]] + float32(p.TF[2])*sc.table[2][ch[2]]
	if x == 0 {
		return 0
	}
	return idf * sc.saturate(x)
}

// topHeap is a bounded min-heap of the best candidates so far.
type topHeap struct {
	n int
	h candHeap
}

// threshold is the score a doc must beat to enter (0 until full); the
// docs come in ascending order, so a tie never enters.
func (t *topHeap) threshold() float32 {
	if len(t.h) < t.n {
		return 0
	}
	return float32(t.h[0].score)
}

func (t *topHeap) push(d uint32, s float32) {
	if len(t.h) < t.n {
		t.h = append(t.h, candidate{doc: d, score: float64(s)})
		t.h.up(len(t.h) - 1)
		return
	}
	if float64(s) <= t.h[0].score {
		return
	}
	t.h[0] = candidate{doc: d, score: float64(s)}
	t.h.down(0)
}

func (h candHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.Less(j, i) {
			break
		}
		h.Swap(i, j)
		j = i
	}
}

func (h candHeap) down(i int) {
	for {
		j := 2*i + 1
		if j >= len(h) {
			return
		}
		if j2 := j + 1; j2 < len(h) && h.Less(j2, j) {
			j = j2
		}
		if !h.Less(j, i) {
			return
		}
		h.Swap(i, j)
		i = j
	}
}

// topK returns the best n docs for the run's scoring terms among those ok
// allows, best first. It walks the doc space in windows (windowEnd): a
// window whose terms' bounds cannot beat the n-th best so far is skipped
// undecoded; otherwise the lead terms' postings in it are added up and
// each candidate is completed by the other terms (checks), stopping as
// soon as what they could still add cannot lift it into the top n.
func (r *run) topK(n int, ok func(uint32) bool) ([]candidate, error) {
	if r.impossible {
		return nil, nil
	}
	k := &topk{sc: newScorer(r), ok: ok, top: &topHeap{n: n}}
	if !k.cursors(r) {
		return nil, nil // a phrase word no page holds
	}
	lo := uint32(0)
	for {
		var done bool
		if lo, done = advance(k.cs, lo, k.required > 0); done {
			break
		}
		hi := windowEnd(k.cs, lo)
		if k.worth(hi) {
			k.pickLead()
			if err := k.accumulate(lo, hi); err != nil {
				return nil, err
			}
			if err := k.collect(lo); err != nil {
				return nil, err
			}
		}
		if hi == math.MaxUint32 {
			break
		}
		lo = hi
	}
	out := []candidate(k.top.h)
	sortCands(out)
	return out, nil
}

// topk is one topK run over a window at a time.
type topk struct {
	sc       *scorer
	ok       func(uint32) bool
	top      *topHeap
	cs       []*cursor // the scoring terms
	required int       // how many of them are required (phrase words)
	// the window's: lead terms, whose docs are the candidates, and the
	// checks the candidates go through
	lead, checks, order []*cursor
	acc                 [windowMax]float32
	seen                [windowMax / 64]uint64
	cub                 []float32
}

// cursors opens a cursor on each scoring term with its blocks' bounds. It
// reports false when a required term is in no page (nothing can match).
func (k *topk) cursors(r *run) bool {
	for i := range r.terms {
		t := &r.terms[i]
		if t.weight == 0 {
			continue
		}
		if len(t.blocks) == 0 {
			if t.required {
				return false
			}
			continue
		}
		c := &cursor{t: t, idf: float32(t.idf * t.weight), required: t.required, blocks: t.blocks, dec: -1, work: &r.work}
		r.work.Chunks += len(t.blocks)
		c.ubs = make([]float32, len(t.blocks))
		for b := range t.blocks {
			c.ubs[b] = k.sc.bound(&t.blocks[b], c.idf)
		}
		if c.required {
			k.required++
		}
		k.cs = append(k.cs, c)
	}
	return true
}

// worth sets each term's bound in the window ending at hi and reports
// whether a doc there can enter the top (every required term has a chunk
// there, and the bounds together beat the threshold).
func (k *topk) worth(hi uint32) bool {
	k.order = k.order[:0]
	var total float32
	skip := false
	for _, c := range k.cs {
		c.wub = 0
		for j := c.bi; j < len(c.blocks) && c.blocks[j].First < hi; j++ {
			c.wub = max(c.wub, c.ubs[j])
		}
		if c.wub == 0 && c.required {
			skip = true
		}
		total += c.wub
		k.order = append(k.order, c)
	}
	return !skip && total > k.top.threshold()
}

// pickLead chooses the window's lead terms and checks. With required
// terms, the rarest required term leads and the others check, then the
// optional ones by bound; without, the terms whose bounds together cannot
// beat the threshold only check, the rest lead.
func (k *topk) pickLead() {
	k.checks, k.lead = k.checks[:0], k.lead[:0]
	if k.required > 0 {
		var best *cursor
		for _, c := range k.cs {
			if c.required && (best == nil || c.wub > 0 && c.t.df < best.t.df) {
				best = c
			}
		}
		k.lead = append(k.lead, best)
		for _, c := range k.cs {
			if c.required && c != best {
				k.checks = append(k.checks, c)
			}
		}
		opt := len(k.checks)
		for _, c := range k.cs {
			if !c.required && c.wub > 0 {
				k.checks = append(k.checks, c)
			}
		}
		slices.SortFunc(k.checks[opt:], func(a, b *cursor) int { return cmpF32(b.wub, a.wub) })
		return
	}
	theta := k.top.threshold()
	order := k.order
	slices.SortFunc(order, func(a, b *cursor) int { return cmpF32(a.wub, b.wub) })
	var sum float32
	p := 0
	for p < len(order) && sum+order[p].wub <= theta {
		sum += order[p].wub
		p++
	}
	for _, c := range order[p:] {
		if c.wub > 0 {
			k.lead = append(k.lead, c)
		}
	}
	for i := p - 1; i >= 0; i-- {
		if order[i].wub > 0 {
			k.checks = append(k.checks, order[i])
		}
	}
}

// accumulate adds up the lead terms' postings in [lo, hi) of the docs ok
// allows.
func (k *topk) accumulate(lo, hi uint32) error {
	for _, c := range k.lead {
		for j := c.bi; j < len(c.blocks) && c.blocks[j].First < hi; j++ {
			ps, err := c.load(j)
			if err != nil {
				return err
			}
			i := c.pos
			if i < len(ps) && ps[i].Doc < lo {
				i += sortSearch(ps[i:], lo)
			}
			for ; i < len(ps) && ps[i].Doc < hi; i++ {
				d := ps[i].Doc
				if !k.ok(d) {
					continue
				}
				s := k.sc.score(&ps[i], c.idf)
				if s == 0 {
					continue
				}
				w := d - lo
				k.acc[w] += s
				k.seen[w/64] |= 1 << (w % 64)
			}
			c.pos = i
		}
	}
	return nil
}

// collect completes the window's candidates in doc order by the checks
// and pushes those that enter the top.
func (k *topk) collect(lo uint32) error {
	k.cub = slices.Grow(k.cub[:0], len(k.checks))[:len(k.checks)]
	for wi := range k.seen {
		for k.seen[wi] != 0 {
			b := bits.TrailingZeros64(k.seen[wi])
			k.seen[wi] &^= 1 << b
			w := uint32(wi*64 + b)
			s := k.acc[w]
			k.acc[w] = 0
			if err := k.complete(lo+w, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// complete adds the checks' scores of doc d to s, the lead terms' sum,
// while d can still beat the threshold, and pushes it when it does.
func (k *topk) complete(d uint32, s float32) error {
	theta := k.top.threshold()
	// what the checks' chunks holding d could add
	var rest float32
	for i, c := range k.checks {
		k.cub[i] = c.chunkAt(d)
		rest += k.cub[i]
	}
	for i, c := range k.checks {
		if s+rest <= theta {
			return nil
		}
		rest -= k.cub[i]
		if k.cub[i] == 0 {
			if c.required {
				return nil
			}
			continue
		}
		p, err := c.find(d)
		if err != nil {
			return err
		}
		if p != nil {
			s += k.sc.score(p, c.idf)
		} else if c.required {
			return nil
		}
	}
	if s > theta {
		k.top.push(d, s)
	}
	return nil
}

// windowEnd returns the end of the window starting at lo: where a term's
// chunk ends or its next begins, kept within [lo+windowMin, lo+windowMax].
func windowEnd(cs []*cursor, lo uint32) uint32 {
	hi := uint64(lo) + windowMax
	for _, c := range cs {
		if c.bi >= len(c.blocks) {
			continue
		}
		if b := &c.blocks[c.bi]; b.First <= lo {
			hi = min(hi, uint64(b.Last)+1)
		} else {
			hi = min(hi, uint64(b.First))
		}
	}
	hi = max(hi, uint64(lo)+windowMin)
	return uint32(min(hi, math.MaxUint32))
}

// advance moves every cursor to its first block ending at or after lo and
// returns the first doc at or after lo that a window must start at: the
// lowest first doc of those blocks, or with required terms the highest of
// theirs. done reports that no doc is left (or a required term has none).
func advance(cs []*cursor, lo uint32, required bool) (uint32, bool) {
	for {
		next := uint32(math.MaxUint32)
		var need uint32
		live := false
		for _, c := range cs {
			for c.bi < len(c.blocks) && c.blocks[c.bi].Last < lo {
				c.bi++
			}
			if c.bi >= len(c.blocks) {
				if c.required {
					return lo, true
				}
				continue
			}
			live = true
			first := max(lo, c.blocks[c.bi].First)
			next = min(next, first)
			if c.required {
				need = max(need, first)
			}
		}
		if !live {
			return lo, true
		}
		if required {
			next = need
		}
		if next == lo {
			return lo, false
		}
		lo = next // blocks ending before it are skipped on the next pass
	}
}

func cmpF32(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
