// Package search is synapse's ranked full-text search over wiki pages
// (docs/search.md): the analyzer (tokenizer), the query language, the indexer
// the scanner feeds, and BM25F ranking with snippets. The inverted index
// itself is stored by package store (store/search.go).
//
// Ranking is BM25F over three fields — title and aliases, headings and
// tags, body — followed by a re-ranking of the best candidates by how well
// a page's title or an alias matches the query as a whole, so that asking
// for a page by its name finds that page first.
package search

import (
	"context"
	"math"
	"slices"
	"sort"
	"strings"

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
	// Size is the page's file size in bytes: get_page returns a page
	// over 32 KiB as its outline unless asked for in full.
	Size int64 `json:"size"`
	// Link is how a [[link]] reaches this page, set when its title does
	// not reach it alone (another page answers to it first, or several
	// do): its path under wiki/ without .md (set by the search operation).
	Link string `json:"link,omitempty" desc:"Set when [[Title]] would not reach this page alone (another page answers to the title, or several do): the link target that does, its path under wiki/ without .md ([[Link|Title]])"`
	// Signals names what found the hit: "lexical" (BM25F), "semantic"
	// (embeddings, package embed) or both; set by the search operation.
	Signals []string `json:"signals,omitempty"`
	// NameMatch is how wholly one of the page's names (title, alias, file
	// name or a heading) matches the query, as re-ranking measured it:
	// shared words² / (name words · query words), 1 when a name is
	// exactly the query's words. Hybrid ranking reads it (package embed).
	NameMatch float64 `json:"-"`
}

// Options tune a search.
type Options struct {
	// K is the number of hits wanted (at least 1).
	K int
	// ReadFile reads a page's current text by vault path; snippets and
	// phrase checks need it. When nil, snippets are empty and phrases are
	// matched as word sets only.
	ReadFile func(vaultPath string) ([]byte, error)
	// Context, when set, stops a search that is cancelled (SIGTERM, a
	// client that gave up): its error is the context's. Pages are
	// checked and snippets made a bounded piece at a time, so a huge
	// page delays it by milliseconds.
	Context context.Context
}

// Params are the ranking constants.
type Params struct {
	K1 float64
	W  [store.SearchFields]float64 // field weights
	B  [store.SearchFields]float64 // field length normalization
	// Name scales the re-ranking bonus of a name (title, alias, file
	// name, heading) that matches the query (0 turns re-ranking off);
	// NameKind weighs each kind of name. StemName multiplies the match
	// of a name for each query word it holds only by its stem (Вкладки
	// for the query Вкладка), not as written (1: a shared stem counts in
	// full; tuned with ExactName on half of the es/it/ru/de headings and
	// typed headings, TestTuneExactName).
	Name     float64
	NameKind [4]float64
	StemName float64
	// ExactName is the least weight of a name that holds the query's
	// words exactly as written and nothing else, in a language whose index
	// keeps words as written beside their stems (all but English): a
	// heading the query repeats word for word weighs above a title that
	// only shares stems with it (Importante: the section "Importante"
	// before the page "Importador").
	ExactName float64
	// WordForWord multiplies the ExactName weight of a name that also
	// holds the stopwords of a query that has some, and no others — the
	// query word for word: the section "Con filtros" before the page
	// "Filtros" for the query con filtros (the page stays first for
	// filtros).
	WordForWord float64
	// MaxTerms caps the query terms that are scored: a longer query (a
	// pasted paragraph) keeps its MaxTerms rarest, the words that tell
	// pages apart; the rest still count for name matching. Phrase words
	// are always kept. 0 means no cap.
	MaxTerms int
	// MinIDF drops a scoring term whose idf is below MinIDF times the
	// highest idf of the query's terms (it still counts for name
	// matching); phrase words are always kept. 0 keeps every term.
	MinIDF float64
	// Section scales a heading's weight in re-ranking by how much of the
	// heading the text under it repeats (a section about what its heading
	// names): up to 1 + Section.
	Section float64
}

// DefaultParams are the constants synapse ranks with.
var DefaultParams = Params{
	K1:          1.2,
	W:           [store.SearchFields]float64{5, 2.5, 1},
	B:           [store.SearchFields]float64{0.4, 0.1, 0.75},
	Name:        1,
	NameKind:    [4]float64{NameTitle: 1, NameAlias: 1, NameFile: 1, NameHeading: 0.6},
	StemName:    1,
	ExactName:   1.5,
	WordForWord: 2,
	MaxTerms:    16,
	MinIDF:      0.01,
	Section:     0.1,
}

// rerankDepth is how many of the best BM25F candidates are re-ranked by
// name match; phraseDepth how many are checked for phrases at most, and
// phraseBudget how much of their text (so a phrase whose words are common
// but seldom side by side costs a bounded read, not a scan of the vault).
const (
	rerankDepth  = 100
	phraseDepth  = 100
	phraseBudget = 512 << 10
	maxExpand    = 32 // dictionary terms a lone CJK character expands to
)

// Search runs a query against the store.
func Search(s *store.Store, query string, o Options) ([]Hit, error) {
	return SearchWith(s, query, o, DefaultParams)
}

// candidate is a ranked page before snippets.
type candidate struct {
	doc   uint32
	score float64
	name  float64 // Hit.NameMatch
}

// SearchWith runs a query with explicit ranking constants (evaluation).
// Page records are read, phrases checked and snippets made only for the
// hits returned (and, for phrases, the candidates checked before them).
func SearchWith(s *store.Store, query string, o Options, p Params) ([]Hit, error) {
	q, err := ParseQuery(query)
	if err != nil {
		return nil, err
	}
	k := max(o.K, 1)
	if q.Empty() {
		return []Hit{}, nil
	}
	ctx := o.Context
	if ctx == nil {
		ctx = context.Background()
	}
	phrases := len(q.Phrases)+len(q.ExPhrase) > 0 && o.ReadFile != nil
	type found struct {
		c    candidate
		rec  *store.PageRec
		text []byte
	}
	var hits []found
	var terms map[string]float64
	err = s.View(func(tx *store.Tx) error {
		if err := checkIndex(tx); err != nil {
			return err
		}
		// the query's language, and -words the wiki holds as flags
		q.Resolve(func(t string) int { st, _ := tx.LookupSearchTerm(t); return int(st.DF) })
		r := newRun(tx, q, p)
		depth := max(k, rerankDepth)
		if phrases {
			depth = max(k, phraseDepth)
		}
		cands, err := r.rank(depth)
		if err != nil {
			return err
		}
		terms = r.highlightTerms()
		if r.scoring() {
			// the hits come from the best k after re-ranking, and a
			// reserved page (index, log, overview) among them is passed
			// over; a phrase may fail its check on any number of them
			need := k + 3
			if phrases {
				need = 0
			}
			if cands, err = r.rerank(cands, need); err != nil {
				return err
			}
		}
		checked := 0
		for _, c := range cands {
			if len(hits) == k || (phrases && checked >= phraseBudget) {
				break
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			rec, err := tx.PageFields(c.doc) // (a hit needs no links)
			if err != nil {
				return err
			}
			if rec == nil || rec.Reserved {
				continue
			}
			var text []byte
			if o.ReadFile != nil {
				text, _ = o.ReadFile(rec.Path)
			}
			if phrases && text != nil {
				checked += len(text)
				if !phraseOK(q, text) {
					continue
				}
			}
			hits = append(hits, found{c, rec, text})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Hit, 0, len(hits))
	for _, h := range hits {
		out = append(out, Hit{
			ID: h.rec.ID, Title: h.rec.Title, Type: h.rec.Type, Path: h.rec.Path, Size: h.rec.Size,
			Score:     math.Round(h.c.score*1000) / 1000,
			Snippet:   SnippetContext(ctx, string(h.text), terms),
			NameMatch: h.c.name,
		})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// checkIndex refuses to answer from an index that is missing, was built
// by other analyzer rules or is being rebuilt (see rebuild.go). A process
// that could write the store would have rebuilt it before asking, so one
// that sees this is reading beside another that holds the store.
func checkIndex(tx *store.Tx) error {
	const later = "the next synapse command that can write to the store (or a running `synapse serve`) rebuilds it"
	if !tx.SearchReady() {
		return errs.E(errs.Unavailable, "the search index has not been built yet; %s", later)
	}
	if tx.SearchMeta(metaRebuilding) != nil {
		return errs.E(errs.Unavailable, "the search index is being rebuilt for this version of synapse (%d of %d pages so far); try again shortly",
			tx.SearchStats().Docs, tx.PageCount())
	}
	if tx.SearchStaged() {
		// a bulk build's postings not yet moved into place (store/searchstage.go)
		return errs.E(errs.Unavailable, "the search index is being built (%d of %d pages so far); %s", tx.SearchStats().Docs, tx.PageCount(), later)
	}
	v := tx.SearchVersion()
	if v != "" && v != AnalyzerVersion {
		return errs.E(errs.Unavailable, "the search index was built by another version of synapse; %s", later)
	}
	if tx.SearchStats().Docs == 0 && tx.PageCount() > 0 {
		return errs.E(errs.Unavailable, "the search index is empty but the vault has %d pages; %s", tx.PageCount(), later)
	}
	return nil
}

// qterm is a term of a query: a scoring term (weight > 0), or a synonym
// kept for name matching only (weight 0).
type qterm struct {
	term     string
	id       uint32
	df       uint32
	idf      float64
	weight   float64
	required bool                // a phrase word: every hit holds it
	blocks   []store.SearchBlock // its postings (scoring terms only)
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
	exact  []string   // per slot: the word as written where its stem differs ("" for a phrase word: any form will do)
	stops  []uint32   // the ids of the query's stopwords, ascending (when it has other words)
	// impossible: a phrase word is in no page, so nothing matches
	impossible bool
	err        error    // reading the postings failed
	work       topKWork // what topK read
}

func newRun(tx *store.Tx, q *Query, p Params) *run {
	r := newTermRun(tx, q, p)
	r.loadBlocks()
	return r
}

// newTermRun is a run with its terms looked up and weighed, their
// postings not read yet.
func newTermRun(tx *store.Tx, q *Query, p Params) *run {
	r := &run{tx: tx, q: q, p: p, stats: tx.SearchStats()}
	r.maxDoc = max(tx.MetaU32("next_doc"), r.stats.MaxDoc)
	tw := &termWeights{weights: map[string]float64{}, required: map[string]bool{}}
	r.textTerms(tw)
	r.phraseTerms(tw)
	slices.Sort(r.stops)
	r.stops = slices.Compact(r.stops)
	r.lookupTerms(tw)
	for _, t := range r.terms {
		if t.weight > 0 {
			r.work.Postings += int(t.df) // what scoring every word would walk
		}
	}
	r.capTerms()
	return r
}

// termWeights gathers the query's terms, in order, with their weights
// (0: matched against names only) and whether a phrase requires them.
type termWeights struct {
	weights  map[string]float64
	required map[string]bool
	order    []string
}

func (tw *termWeights) add(term string, w float64) {
	if _, ok := tw.weights[term]; !ok {
		tw.order = append(tw.order, term)
	}
	tw.weights[term] += w
}

// slot adds a query slot for name matching: a term, its synonyms, and the
// word as written.
func (r *run) slot(term, exact string, syn []string) {
	for _, sl := range r.slots {
		if sl[0] == term {
			return
		}
	}
	r.slots = append(r.slots, append([]string{term}, syn...))
	r.exact = append(r.exact, exact)
}

// textTerms adds the query's words: ranked terms, their synonyms (for
// name matching only: as ranked terms they would pull in every page that
// uses the other word) and the stopwords, which count only when the
// query has nothing else. A stopword with synonyms (make) is matched
// against names but not ranked.
func (r *run) textTerms(tw *termWeights) {
	q := r.q
	allStop := true
	for _, t := range q.Text {
		if !t.Stop && t.Kind != Whole {
			allStop = false
			break
		}
	}
	for i, t := range q.Text {
		// the word as written: its surface form, which follows it, or the
		// term itself
		exact := t.Term
		if i+1 < len(q.Text) && q.Text[i+1].Surface {
			exact = q.Text[i+1].Term
		}
		syn := synonyms()[t.Term]
		if t.Stop && !allStop && t.Kind != Whole {
			id, ok := r.tx.SearchTermID(t.Term)
			if !ok {
				id = math.MaxUint32 // no name holds it
			}
			r.stops = append(r.stops, id)
		}
		if t.Stop && !allStop {
			if syn != nil && t.Kind != Whole {
				tw.add(t.Term, 0)
				for _, x := range syn {
					tw.add(x, 0)
				}
				r.slot(t.Term, exact, syn)
			}
			continue
		}
		// (a word's surface form, the word as written, is ranked too: it
		// finds pages whose stem of another form is this word — Russian
		// stems псевдонимы to псевдоним, the singular псевдоним to псевдон)
		tw.add(t.Term, 1)
		if t.Kind == Whole {
			continue
		}
		for _, x := range syn {
			tw.add(x, 0)
		}
		r.slot(t.Term, exact, syn)
	}
}

// phraseTerms adds the words of the query's phrases: ranked and required.
func (r *run) phraseTerms(tw *termWeights) {
	a := Acquire()
	defer Release(a)
	for _, ph := range r.q.Phrases {
		for _, t := range ph {
			tw.add(t, 1)
			tw.required[t] = true
			if !stopTerm(a, t) {
				r.slot(t, "", nil)
			}
		}
	}
}

// lookupTerms finds the gathered terms in the index with their document
// frequency and idf. A required term the index lacks makes the query
// impossible; a CJK character standing alone, indexed only inside
// bigrams, stands for the bigrams that start with it.
func (r *run) lookupTerms(tw *termWeights) {
	N := float64(r.stats.Docs)
	lookup := func(term string, w float64) {
		id, ok := r.tx.SearchTermID(term)
		if !ok {
			return
		}
		qt := qterm{term: term, id: id, weight: w, required: tw.required[term], df: r.tx.SearchDF(id)}
		if qt.df == 0 {
			return
		}
		qt.idf = math.Log(1 + (N-float64(qt.df)+0.5)/(float64(qt.df)+0.5))
		r.terms = append(r.terms, qt)
	}
	for _, t := range tw.order {
		n := len(r.terms)
		// (a zero weight keeps a synonym's id for name matching)
		lookup(t, tw.weights[t])
		if len(r.terms) > n {
			continue
		}
		if tw.required[t] {
			r.impossible = true
		}
		if isLoneCJK(t) {
			for _, st := range r.tx.SearchTermsWithPrefix(t, maxExpand) {
				lookup(st.Term, tw.weights[t])
			}
		}
	}
}

// loadBlocks reads the postings chunks of the terms that are scored.
func (r *run) loadBlocks() {
	for i := range r.terms {
		t := &r.terms[i]
		if t.weight == 0 {
			continue
		}
		var err error
		if t.blocks, err = r.tx.SearchBlocks(t.id, make([]store.SearchBlock, 0, t.df/96+4)); err != nil {
			r.err = err
		}
	}
}

// capTerms keeps the Params.MaxTerms scoring terms with the highest idf
// (phrase words always), turning the others into name-matching terms; so
// are terms whose idf is below Params.MinIDF times the highest (a word
// nearly every page holds adds next to nothing to any score, but would
// cost a walk of its postings), unless nothing else would be ranked.
func (r *run) capTerms() {
	if r.p.MinIDF > 0 {
		top := 0.0
		for _, t := range r.terms {
			if t.weight > 0 {
				top = max(top, t.idf*t.weight)
			}
		}
		for i := range r.terms {
			if t := &r.terms[i]; t.weight > 0 && !t.required && t.idf*t.weight < r.p.MinIDF*top {
				t.weight = 0
			}
		}
	}
	if r.p.MaxTerms <= 0 {
		return
	}
	var opt []int
	keep := r.p.MaxTerms
	for i, t := range r.terms {
		switch {
		case t.weight == 0:
		case t.required:
			keep--
		default:
			opt = append(opt, i)
		}
	}
	keep = max(keep, 0)
	if len(opt) <= keep {
		return
	}
	slices.SortStableFunc(opt, func(a, b int) int {
		x, y := r.terms[a].idf*r.terms[a].weight, r.terms[b].idf*r.terms[b].weight
		switch {
		case x > y:
			return -1
		case x < y:
			return 1
		}
		return 0
	})
	for _, i := range opt[keep:] {
		r.terms[i].weight = 0
	}
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

// termSet returns the docs holding any of the given dictionary terms.
func (r *run) termSet(terms []store.SearchTerm) (bitset, error) {
	b := newBitset(r.maxDoc)
	for _, t := range terms {
		if err := r.tx.SearchPostings(t.ID, func(d uint32, _ [store.SearchFields]uint32) { b.set(d) }); err != nil {
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

// rank returns the best n matching docs, best first: by BM25F with
// dynamic pruning (topK), or in title order for a query of only filters.
func (r *run) rank(n int) ([]candidate, error) {
	allowed, excluded, err := r.filters()
	if err != nil {
		return nil, err
	}
	ok := func(d uint32) bool {
		return (allowed == nil || allowed.has(d)) && (excluded == nil || !excluded.has(d))
	}
	if !r.scoring() {
		return r.listing(n, ok), nil
	}
	if r.err != nil {
		return nil, r.err
	}
	return r.topK(n, ok)
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

func (h candHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].doc > h[j].doc
}
func (h candHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// highlightTerms returns the query's scored terms with their idf, for
// snippets.
func (r *run) highlightTerms() map[string]float64 {
	out := map[string]float64{}
	for _, t := range r.terms {
		if t.weight > 0 {
			out[t.term] = t.idf
		}
	}
	return out
}

// phraseOK checks a page's text against the query's phrases: each must
// occur, no excluded one may. The text is tokenized a piece at a time (cut
// at line ends, which no token spans) so that the check stops at the
// first piece where every phrase has been seen, unless a phrase must be
// shown absent.
func phraseOK(q *Query, text []byte) bool {
	a := Acquire()
	defer Release(a)
	a.SetLanguage(q.Language())
	all := append(append([][]string{}, q.Phrases...), q.ExPhrase...)
	longest := 0
	for _, ph := range all {
		longest = max(longest, len(ph))
	}
	seen := make([]bool, len(all))
	need := len(q.Phrases)
	ring := make([]string, longest) // the last base terms, ring[n%longest] the newest
	n := 0
	s := string(text)
	for len(s) > 0 && (need > 0 || len(q.ExPhrase) > 0) {
		cut := len(s)
		if cut > phrasePiece {
			if i := strings.IndexByte(s[phrasePiece:], '\n'); i >= 0 {
				cut = phrasePiece + i + 1
			}
		}
		a.Each(s[:cut], func(t Token) {
			if t.Kind == Whole {
				return
			}
			ring[n%longest] = t.Term
			n++
		outer:
			for i, ph := range all {
				if seen[i] || len(ph) == 0 || n < len(ph) || ring[(n-1)%longest] != ph[len(ph)-1] {
					continue
				}
				for j := range ph {
					if ring[(n-len(ph)+j)%longest] != ph[j] {
						continue outer
					}
				}
				seen[i] = true
				if i < len(q.Phrases) {
					need--
				}
			}
		})
		s = s[cut:]
	}
	for i, ok := range seen {
		if ok != (i < len(q.Phrases)) && len(all[i]) > 0 {
			return false
		}
	}
	return true
}

// phrasePiece is the size of the pieces phraseOK tokenizes.
const phrasePiece = 4096
