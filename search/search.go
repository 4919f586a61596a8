// Package search is synapse's ranked full-text search over wiki pages
// (SPEC §4.1): the analyzer (tokenizer), the query language, the indexer
// the scanner feeds, and BM25F ranking with snippets. The inverted index
// itself is stored by package store (store/search.go).
//
// Ranking is BM25F over three fields — title and aliases, headings and
// tags, body — followed by a re-ranking of the best candidates by how well
// a page's title or an alias matches the query as a whole, so that asking
// for a page by its name finds that page first.
package search

import (
	"container/heap"
	"math"
	"slices"
	"sort"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/store"
)

// Hit is one search result.
type Hit struct {
	ID      string  `json:"id"`
	Title   string  `json:"title"`
	Type    string  `json:"type"`
	Path    string  `json:"path"`
	Score   float64 `json:"score"`
	Snippet string  `json:"snippet"`
	// Signals names what found the hit: "lexical" (BM25F), "semantic"
	// (embeddings, issue 16) or both; set by the search operation.
	Signals []string `json:"signals,omitempty"`
}

// Options tune a search.
type Options struct {
	// K is the number of hits wanted (at least 1).
	K int
	// ReadFile reads a page's current text by vault path; snippets and
	// phrase checks need it. When nil, snippets are empty and phrases are
	// matched as word sets only.
	ReadFile func(vaultPath string) ([]byte, error)
}

// Params are the ranking constants.
type Params struct {
	K1 float64
	W  [store.SearchFields]float64 // field weights
	B  [store.SearchFields]float64 // field length normalization
	// Name scales the re-ranking bonus of a name (title, alias, file
	// name, heading) that matches the query (0 turns re-ranking off);
	// NameKind weighs each kind of name.
	Name     float64
	NameKind [4]float64
}

// DefaultParams are the constants synapse ranks with.
var DefaultParams = Params{
	K1:       1.2,
	W:        [store.SearchFields]float64{5, 2.5, 1},
	B:        [store.SearchFields]float64{0.4, 0.4, 0.75},
	Name:     1,
	NameKind: [4]float64{NameTitle: 1, NameAlias: 1, NameFile: 1, NameHeading: 0.6},
}

// rerankDepth is how many of the best BM25F candidates are re-ranked by
// name match; phraseDepth how many are checked for phrases at most.
const (
	rerankDepth = 100
	phraseDepth = 200
	maxExpand   = 32 // dictionary terms a lone CJK character expands to
)

// Search runs a query against the store.
func Search(s *store.Store, query string, o Options) ([]Hit, error) {
	return SearchWith(s, query, o, DefaultParams)
}

// candidate is a ranked page before snippets.
type candidate struct {
	doc   uint32
	score float64
	rec   *store.PageRec
}

// SearchWith runs a query with explicit ranking constants (evaluation).
func SearchWith(s *store.Store, query string, o Options, p Params) ([]Hit, error) {
	q, err := ParseQuery(query)
	if err != nil {
		return nil, err
	}
	k := max(o.K, 1)
	if q.Empty() {
		return []Hit{}, nil
	}
	var cands []candidate
	var terms map[string]float64
	err = s.View(func(tx *store.Tx) error {
		if err := checkIndex(tx); err != nil {
			return err
		}
		r := newRun(tx, q, p)
		depth := max(k, rerankDepth)
		if len(q.Phrases)+len(q.ExPhrase) > 0 && o.ReadFile != nil {
			depth = max(k, phraseDepth)
		}
		var err error
		if cands, err = r.rank(depth); err != nil {
			return err
		}
		terms = r.highlightTerms()
		if r.scoring() {
			if err := r.rerank(cands); err != nil {
				return err
			}
		}
		// page records for the hits (and for the phrase checks' spares)
		for i := range cands {
			if i >= k && len(q.Phrases)+len(q.ExPhrase) == 0 {
				cands = cands[:i]
				break
			}
			if cands[i].rec, err = tx.Page(cands[i].doc); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, min(k, len(cands)))
	phrases := len(q.Phrases)+len(q.ExPhrase) > 0
	for _, c := range cands {
		if len(hits) == k {
			break
		}
		if c.rec == nil || c.rec.Reserved {
			continue
		}
		var text []byte
		if o.ReadFile != nil {
			text, _ = o.ReadFile(c.rec.Path)
		}
		if phrases && text != nil && !phraseOK(q, string(text)) {
			continue
		}
		hits = append(hits, Hit{
			ID: c.rec.ID, Title: c.rec.Title, Type: c.rec.Type, Path: c.rec.Path,
			Score:   math.Round(c.score*1000) / 1000,
			Snippet: Snippet(string(text), terms),
		})
	}
	return hits, nil
}

// checkIndex refuses to answer from an index that is missing or was built
// by other analyzer rules.
func checkIndex(tx *store.Tx) error {
	if !tx.SearchReady() {
		return errs.E(errs.Unavailable, "the search index has not been built yet; run `synapse reindex`")
	}
	v := tx.SearchVersion()
	if v != "" && v != AnalyzerVersion {
		return errs.E(errs.Unavailable, "the search index was built by another version of synapse; run `synapse reindex`")
	}
	if tx.SearchStats().Docs == 0 && tx.PageCount() > 0 {
		return errs.E(errs.Unavailable, "the search index is empty but the vault has %d pages; run `synapse reindex`", tx.PageCount())
	}
	return nil
}

// qterm is a scoring term of a query.
type qterm struct {
	store.SearchTerm
	weight float64
}

// run is one query's evaluation inside a read transaction.
type run struct {
	tx     *store.Tx
	q      *Query
	p      Params
	stats  store.SearchStats
	maxDoc uint32
	terms  []qterm
	slots  [][]string // the query's words for name matching: each a term and its synonyms
}

func newRun(tx *store.Tx, q *Query, p Params) *run {
	r := &run{tx: tx, q: q, p: p, stats: tx.SearchStats(), maxDoc: tx.MetaU32("next_doc")}
	// stopwords count only when the query has nothing else
	allStop := true
	for _, t := range q.Text {
		if !t.Stop && t.Kind != Whole {
			allStop = false
			break
		}
	}
	weights := map[string]float64{}
	var order []string
	add := func(term string, w float64) {
		if _, ok := weights[term]; !ok {
			order = append(order, term)
		}
		weights[term] += w
	}
	slot := func(term string, syn []string) {
		for _, sl := range r.slots {
			if sl[0] == term {
				return
			}
		}
		r.slots = append(r.slots, append([]string{term}, syn...))
	}
	for _, t := range q.Text {
		// synonyms count for name matching only: as ranked terms they
		// would pull in every page that uses the other word. A stopword
		// with synonyms (make) is matched against names but not ranked.
		syn := synonyms[t.Term]
		if t.Stop && !allStop {
			if syn != nil && t.Kind != Whole {
				add(t.Term, 0)
				for _, x := range syn {
					add(x, 0)
				}
				slot(t.Term, syn)
			}
			continue
		}
		add(t.Term, 1)
		if t.Kind == Whole {
			continue
		}
		for _, x := range syn {
			add(x, 0)
		}
		slot(t.Term, syn)
	}
	a := Acquire()
	for _, ph := range q.Phrases {
		for _, t := range ph {
			add(t, 1)
			if !stopTerm(a, t) {
				slot(t, nil)
			}
		}
	}
	Release(a)
	for _, t := range order {
		if st, ok := tx.LookupSearchTerm(t); ok {
			// (a zero weight keeps a synonym's id for name matching)
			r.terms = append(r.terms, qterm{st, weights[t]})
			continue
		}
		// a CJK character standing alone is indexed only inside bigrams
		if isLoneCJK(t) {
			for _, st := range tx.SearchTermsWithPrefix(t, maxExpand) {
				r.terms = append(r.terms, qterm{st, weights[t]})
			}
		}
	}
	return r
}

func isLoneCJK(t string) bool {
	rs := []rune(t)
	return len(rs) == 1 && isCJK(rs[0])
}

// scoring reports whether the query has text to rank by (rather than only
// filters and exclusions).
func (r *run) scoring() bool { return len(r.q.Text) > 0 || len(r.q.Phrases) > 0 }

// bitset is a set of docs.
type bitset []uint64

func newBitset(n uint32) bitset    { return make(bitset, n/64+1) }
func (b bitset) set(d uint32)      { b[d/64] |= 1 << (d % 64) }
func (b bitset) has(d uint32) bool { return int(d/64) < len(b) && b[d/64]&(1<<(d%64)) != 0 }
func (b bitset) and(o bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}
func (r *run) postings(id uint32, fn func(uint32, [store.SearchFields]uint32)) error {
	return r.tx.SearchPostings(id, fn)
}

// termSet returns the docs holding any of the given dictionary terms.
func (r *run) termSet(terms []store.SearchTerm) (bitset, error) {
	b := newBitset(r.maxDoc)
	for _, t := range terms {
		if err := r.postings(t.ID, func(d uint32, _ [store.SearchFields]uint32) { b.set(d) }); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// tagTerms returns the dictionary terms of tag t and its nested tags.
func (r *run) tagTerms(t string) []store.SearchTerm {
	var out []store.SearchTerm
	if st, ok := r.tx.LookupSearchTerm(tagTermPrefix + t); ok {
		out = append(out, st)
	}
	return append(out, r.tx.SearchTermsWithPrefix(tagTermPrefix+t+"/", math.MaxInt)...)
}

// filters returns the docs allowed by type: and tag: filters (nil = all)
// and the docs left out by exclusions (nil = none).
func (r *run) filters() (allowed, excluded bitset, err error) {
	q := r.q
	if len(q.Types) > 0 {
		var ts []store.SearchTerm
		for _, t := range q.Types {
			if st, ok := r.tx.LookupSearchTerm(typeTermPrefix + t); ok {
				ts = append(ts, st)
			}
		}
		if allowed, err = r.termSet(ts); err != nil {
			return nil, nil, err
		}
	}
	for _, t := range q.Tags {
		b, err := r.termSet(r.tagTerms(t))
		if err != nil {
			return nil, nil, err
		}
		if allowed == nil {
			allowed = b
		} else {
			allowed.and(b)
		}
	}
	var ex []store.SearchTerm
	for _, t := range q.NotTypes {
		if st, ok := r.tx.LookupSearchTerm(typeTermPrefix + t); ok {
			ex = append(ex, st)
		}
	}
	for _, t := range q.NotTags {
		ex = append(ex, r.tagTerms(t)...)
	}
	for _, t := range q.Exclude {
		if st, ok := r.tx.LookupSearchTerm(t); ok {
			ex = append(ex, st)
		}
	}
	if len(ex) > 0 {
		if excluded, err = r.termSet(ex); err != nil {
			return nil, nil, err
		}
	}
	return allowed, excluded, nil
}

// required returns the docs holding every term of every phrase (nil when
// the query has no phrase), or an empty set when a phrase term is unknown.
func (r *run) required() (bitset, error) {
	var req bitset
	for _, ph := range r.q.Phrases {
		for _, t := range ph {
			st, ok := r.tx.LookupSearchTerm(t)
			if !ok {
				return newBitset(r.maxDoc), nil
			}
			b, err := r.termSet([]store.SearchTerm{st})
			if err != nil {
				return nil, err
			}
			if req == nil {
				req = b
			} else {
				req.and(b)
			}
		}
	}
	return req, nil
}

// rank scores every matching doc and returns the best n, best first.
func (r *run) rank(n int) ([]candidate, error) {
	allowed, excluded, err := r.filters()
	if err != nil {
		return nil, err
	}
	req, err := r.required()
	if err != nil {
		return nil, err
	}
	ok := func(d uint32) bool {
		return (allowed == nil || allowed.has(d)) && (excluded == nil || !excluded.has(d)) && (req == nil || req.has(d))
	}
	if !r.scoring() {
		return r.listing(n, ok), nil
	}
	filtered := allowed != nil || excluded != nil || req != nil
	scores := make([]float32, r.maxDoc+1)
	var touched []uint32
	norms := r.tx.SearchNorms()
	var table [store.SearchFields][256]float32
	for f := range table {
		avg := r.stats.AvgLen(f)
		for qv := range table[f] {
			l := float64(store.DequantizeLength(uint8(qv)))
			table[f][qv] = float32(r.p.W[f] / (1 - r.p.B[f] + r.p.B[f]*l/avg))
		}
	}
	k1 := float32(r.p.K1)
	N := float64(r.stats.Docs)
	for _, t := range r.terms {
		if t.weight == 0 {
			continue
		}
		df := float64(t.DF)
		idf := float32(math.Log(1+(N-df+0.5)/(df+0.5)) * t.weight)
		curChunk, chunk := uint32(math.MaxUint32), []byte(nil)
		err := r.tx.SearchPostingBlocks(t.ID, func(ps []store.SearchPosting) {
			for _, p := range ps {
				d := p.Doc
				if filtered && !ok(d) {
					continue
				}
				if c := d / store.NormsPerChunk; c != curChunk {
					curChunk, chunk = c, norms.Chunk(c)
				}
				i := int(d%store.NormsPerChunk) * store.SearchFields
				if i+store.SearchFields > len(chunk) {
					continue // no norms: not a live document
				}
				x := float32(p.TF[0])*table[0][chunk[i]] + float32(p.TF[1])*table[1][chunk[i+1]] + float32(p.TF[2])*table[2][chunk[i+2]]
				if x == 0 {
					continue
				}
				if scores[d] == 0 {
					touched = append(touched, d)
				}
				scores[d] += idf * x * (k1 + 1) / (k1 + x)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	h := &candHeap{}
	for _, d := range touched {
		s := float64(scores[d])
		if h.Len() < n {
			heap.Push(h, candidate{doc: d, score: s})
		} else if s > (*h)[0].score || (s == (*h)[0].score && d < (*h)[0].doc) {
			(*h)[0] = candidate{doc: d, score: s}
			heap.Fix(h, 0)
		}
	}
	out := []candidate(*h)
	sortCands(out)
	return out, nil
}

// listing returns up to n allowed docs in title order (a query of only
// filters and exclusions).
func (r *run) listing(n int, ok func(uint32) bool) []candidate {
	var out []candidate
	r.tx.EachTitle(func(doc uint32, _ string) bool {
		if ok(doc) {
			out = append(out, candidate{doc: doc})
		}
		return len(out) < n
	})
	return out
}

func sortCands(c []candidate) {
	sort.Slice(c, func(i, j int) bool {
		if c[i].score != c[j].score {
			return c[i].score > c[j].score
		}
		return c[i].doc < c[j].doc
	})
}

// candHeap is a min-heap on score (ties: the higher doc is worse).
type candHeap []candidate

func (h candHeap) Len() int { return len(h) }
func (h candHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].doc > h[j].doc
}
func (h candHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)   { *h = append(*h, x.(candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// rerank multiplies each candidate's score by 1 + Name·m, where m in [0,1]
// measures how well one of the page's names — title, alias, file name or
// a heading — matches the query as a whole: (shared words / name words) ·
// (shared words / query words) · the kind's weight, so 1 when the title
// holds exactly the query's words. A query word matches through its
// synonyms too.
func (r *run) rerank(c []candidate) error {
	if r.p.Name == 0 || len(r.slots) == 0 {
		return nil
	}
	slotOf := map[uint32]int{}
	for _, t := range r.terms {
		for i, sl := range r.slots {
			if slices.Contains(sl, t.Term) {
				slotOf[t.ID] = i
				break
			}
		}
	}
	hit := make([]bool, len(r.slots))
	for i := range c {
		best := 0.0
		err := r.tx.EachSearchName(c[i].doc, func(kind uint8, terms []uint32) {
			if int(kind) >= len(r.p.NameKind) {
				return
			}
			clear(hit)
			common := 0
			for _, t := range terms {
				if s, ok := slotOf[t]; ok && !hit[s] {
					hit[s] = true
					common++
				}
			}
			if common == 0 {
				return
			}
			m := float64(common*common) / float64(len(terms)*len(r.slots)) * r.p.NameKind[kind]
			best = max(best, m)
		})
		if err != nil {
			return err
		}
		c[i].score *= 1 + r.p.Name*best
	}
	sortCands(c)
	return nil
}

// highlightTerms returns the query's positive terms with their idf, for
// snippets.
func (r *run) highlightTerms() map[string]float64 {
	out := map[string]float64{}
	N := float64(r.stats.Docs)
	for _, t := range r.terms {
		if t.weight == 0 {
			continue
		}
		df := float64(t.DF)
		out[t.Term] = math.Log(1 + (N-df+0.5)/(df+0.5))
	}
	return out
}

// phraseOK checks a page's text against the query's phrases: each must
// occur, no excluded one may.
func phraseOK(q *Query, text string) bool {
	a := Acquire()
	defer Release(a)
	stream := baseTerms(a, text)
	for _, ph := range q.Phrases {
		if !containsSeq(stream, ph) {
			return false
		}
	}
	for _, ph := range q.ExPhrase {
		if containsSeq(stream, ph) {
			return false
		}
	}
	return true
}

func containsSeq(s, sub []string) bool {
	if len(sub) == 0 {
		return true
	}
outer:
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i] != sub[0] {
			continue
		}
		for j := 1; j < len(sub); j++ {
			if s[i+j] != sub[j] {
				continue outer
			}
		}
		return true
	}
	return false
}
