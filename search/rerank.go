package search

// Re-ranking by names: how well a page's title, aliases, file name or
// headings match the query as a whole.

import (
	"math"
	"slices"
)

// exactWeight is the least weight of a name of the kind that holds the
// query's words as written and nothing else: Params.ExactName for a
// heading, and as much more for the other kinds as their NameKind weighs
// more than a heading's, so a title or alias that is the query stays
// above a heading that is.
func (r *run) exactWeight(kind uint8) float64 {
	h := r.p.NameKind[NameHeading]
	if h <= 0 {
		return r.p.ExactName
	}
	return r.p.ExactName * max(1, r.p.NameKind[kind]/h)
}

// rerank multiplies each candidate's score by 1 + Name·m, where m in [0,1]
// measures how well one of the page's names — title, alias, file name or
// a heading — matches the query as a whole: (shared words / name words) ·
// (shared words / query words) · the kind's weight, so 1 when the title
// holds exactly the query's words. A query word matches through its
// synonyms too. Outside English, where a name's exact words are stored
// after it: each query word the name holds only by its stem (its exact
// words hold neither the word as written nor its stem as a word)
// multiplies m by Params.StemName, and a name that holds the query's
// words exactly and nothing else weighs at least Params.ExactName.
//
// c comes best first. When need > 0, only the best need candidates after
// re-ranking matter: re-ranking stops at the first candidate that, even
// with the highest bonus, cannot reach the need-th best score so far (nor
// can any after it), and returns the candidates it re-ranked. Each
// candidate costs a read of its names, so a query whose best pages stand
// out reads a few instead of all.
func (r *run) rerank(c []candidate, need int) ([]candidate, error) {
	if r.p.Name == 0 || len(r.slots) == 0 {
		return c, nil
	}
	nm := r.newNameMatcher()
	maxMul := 1 + r.p.Name*r.maxNameBonus(nm.written)
	var bestScores []float64 // the need best scores so far, descending
	for i := range c {
		if need > 0 && len(bestScores) == need && c[i].score*maxMul < bestScores[need-1] {
			c = c[:i]
			break
		}
		best, whole, err := nm.match(c[i].doc)
		if err != nil {
			return nil, err
		}
		c[i].name = max(c[i].name, whole)
		c[i].score *= 1 + r.p.Name*best
		if need > 0 {
			j, _ := slices.BinarySearchFunc(bestScores, c[i].score, func(a, b float64) int { return cmpFloat(b, a) })
			if j < need {
				bestScores = slices.Insert(bestScores, j, c[i].score)
				bestScores = bestScores[:min(len(bestScores), need)]
			}
		}
	}
	sortCands(c)
	return c, nil
}

// maxNameBonus is the highest m a name can give (rerank stops at a
// candidate that even with it cannot reach the best ones).
func (r *run) maxNameBonus(written bool) float64 {
	maxBonus := 0.0
	for kind, w := range r.p.NameKind {
		if written {
			w = max(w, r.exactWeight(uint8(kind))) // (StemName only lowers a weight)
		}
		w *= max(1, r.p.WordForWord)
		if kind == NameHeading {
			w *= 1 + max(r.p.Section, 0)
		}
		maxBonus = max(maxBonus, w)
	}
	return maxBonus
}

// How a query slot is held by the name being read.
const (
	hitNone  = iota
	hitStem  // by the stem only
	hitExact // by the stem, and the name has the word as written
	hitFull  // by a synonym, or a phrase word (any form will do)
)

// nameMatcher measures how well a page's names match the query (rerank):
// it reads the names in stored order (each name, then its exact words and
// its stopwords) and keeps the best m.
type nameMatcher struct {
	r *run
	// written: outside English the index keeps the words of names as
	// written too (English keeps stems only: there an exact name is no
	// different)
	written bool
	slotOf  map[uint32]int // term id → its query slot
	stemID  []uint32       // each slot's stem id (MaxUint32: none)
	exactID []uint32       // each slot's exact form's id (none: no name holds it)
	hit     []uint8        // the pending name's hit of each slot

	// the pending name (n terms; 0: none pending): its kind, section
	// support and stopwords; best and whole so far of this page
	kind, sup   uint8
	n           int
	stops       []uint32
	best, whole float64
}

func (r *run) newNameMatcher() *nameMatcher {
	nm := &nameMatcher{r: r, written: r.q.Language() != English, slotOf: map[uint32]int{},
		stemID: make([]uint32, len(r.slots)), exactID: make([]uint32, len(r.slots)), hit: make([]uint8, len(r.slots))}
	for i := range nm.stemID {
		nm.stemID[i] = math.MaxUint32
	}
	for _, t := range r.terms {
		for i, sl := range r.slots {
			if slices.Contains(sl, t.term) {
				nm.slotOf[t.id] = i
				if t.term == sl[0] {
					nm.stemID[i] = t.id
				}
				break
			}
		}
	}
	for i, x := range r.exact {
		nm.exactID[i] = math.MaxUint32
		if x == "" {
			continue
		}
		if id, ok := r.tx.SearchTermID(x); ok {
			nm.exactID[i] = id
		}
	}
	return nm
}

// match returns the best bonus m of doc's names and the best share of
// the query a name holds wholly (candidate.name).
func (nm *nameMatcher) match(doc uint32) (best, whole float64, err error) {
	nm.best, nm.whole, nm.n = 0, 0, 0
	err = nm.r.tx.EachSearchName(doc, nm.see)
	nm.flush()
	return nm.best, nm.whole, err
}

// see reads one stored name record: a name, or the exact words or the
// stopwords of the name just seen.
func (nm *nameMatcher) see(k uint8, terms []uint32) {
	ks, k := k>>4, k&0x0f
	switch {
	case k&nameExact != 0:
		// the exact words of the name just seen
		if nm.n == 0 || k&^nameExact != nm.kind || ks != nm.sup {
			return
		}
		for s, h := range nm.hit {
			if h == hitStem || h == hitExact {
				nm.hit[s] = hitStem
				if slices.Contains(terms, nm.exactID[s]) {
					nm.hit[s] = hitExact
				}
			}
		}
		return
	case k&nameStops != 0:
		// the stopwords of the name just seen (ascending by the
		// analyzer's numbering when stored, not by term id)
		if nm.n > 0 && k&^nameStops == nm.kind && ks == nm.sup {
			nm.stops = append(nm.stops[:0], terms...)
			slices.Sort(nm.stops)
		}
		return
	}
	nm.flush()
	nm.stops = nm.stops[:0]
	if int(k) >= len(nm.r.p.NameKind) {
		return
	}
	clear(nm.hit)
	common := 0
	for _, t := range terms {
		s, ok := nm.slotOf[t]
		if !ok || nm.hit[s] != hitNone {
			continue
		}
		common++
		switch {
		case t != nm.stemID[s] || nm.r.exact[s] == "":
			nm.hit[s] = hitFull
		case slices.Contains(terms, nm.exactID[s]):
			nm.hit[s] = hitExact
		default:
			nm.hit[s] = hitStem
		}
	}
	if common > 0 {
		nm.kind, nm.sup, nm.n = k, ks, len(terms)
	}
}

// flush scores the pending name, if any: (shared words / name words) ·
// (shared words / query words) · its kind's weight, adjusted for stems,
// exact words, stopwords and section support.
func (nm *nameMatcher) flush() {
	if nm.n == 0 {
		return
	}
	r, n := nm.r, nm.n
	common, exact := 0, 0
	w := r.p.NameKind[nm.kind]
	for _, h := range nm.hit {
		switch h {
		case hitStem:
			common++
			w *= r.p.StemName
		case hitExact:
			common++
			exact++
		case hitFull:
			common++
		}
	}
	if nm.written && exact == n && n == len(r.slots) {
		w = max(w, r.exactWeight(nm.kind))
	}
	if len(r.stops) > 0 && n == len(r.slots) && (nm.written && exact == n || !nm.written && common == n) && slices.Equal(nm.stops, r.stops) {
		w *= max(1, r.p.WordForWord)
	}
	whole := float64(common*common) / float64(n*len(r.slots))
	m := whole * w
	if nm.kind == NameHeading {
		m *= 1 + r.p.Section*float64(nm.sup)/3
	}
	nm.best = max(nm.best, m)
	nm.whole = max(nm.whole, whole)
	nm.n = 0
}
