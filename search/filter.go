package search

import "github.com/synapse-wiki/synapse/store"

// Filter is a query's filters as a predicate over pages, for rankers other
// than BM25F (semantic search): type: and tag: filters, -word and
// -type:/-tag: exclusions, and the phrases, whose words a page must hold.
// Allow says whether a doc passes the postings-level checks; a page's
// phrases are confirmed on its text with PhrasesOK.
type Filter struct {
	q                          *Query
	allowed, excluded, require bitset
}

// NewFilter evaluates the filters of q inside tx.
func NewFilter(tx *store.Tx, q *Query) (*Filter, error) {
	r := newRun(tx, q, DefaultParams)
	allowed, excluded, err := r.filters()
	if err != nil {
		return nil, err
	}
	req, err := phraseDocs(r)
	if err != nil {
		return nil, err
	}
	return &Filter{q: q, allowed: allowed, excluded: excluded, require: req}, nil
}

// phraseDocs returns the docs holding every word of every phrase (nil
// when the query has no phrase; empty when a phrase word is unknown).
func phraseDocs(r *run) (bitset, error) {
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

// Allow reports whether doc passes the filters, exclusions and phrase words.
func (f *Filter) Allow(doc uint32) bool {
	return (f.allowed == nil || f.allowed.has(doc)) && (f.excluded == nil || !f.excluded.has(doc)) &&
		(f.require == nil || f.require.has(doc))
}

// Phrases reports whether the query has phrases (required or excluded)
// that PhrasesOK must confirm on a page's text.
func (f *Filter) Phrases() bool { return len(f.q.Phrases)+len(f.q.ExPhrase) > 0 }

// PhrasesOK checks a page's text against the query's phrases: each must
// occur in order, no excluded one may.
func (f *Filter) PhrasesOK(text []byte) bool { return phraseOK(f.q, text) }

// Terms returns the query's positive terms weighted for Snippet.
func (f *Filter) Terms(tx *store.Tx) map[string]float64 {
	return newRun(tx, f.q, DefaultParams).highlightTerms()
}
