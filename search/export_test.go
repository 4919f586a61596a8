package search

import "github.com/synapse-wiki/synapse/store"

// RankWork ranks query as Search does (to the depth Search re-ranks or
// checks phrases at, for k hits) and returns how many postings of the
// scored terms top-k retrieval decoded, and how many they have.
func RankWork(s *store.Store, query string, k int) (decoded, postings int, err error) {
	q, err := ParseQuery(query)
	if err != nil || q.Empty() {
		return 0, 0, err
	}
	err = s.View(func(tx *store.Tx) error {
		q.Resolve(func(t string) int { st, _ := tx.LookupSearchTerm(t); return int(st.DF) })
		r := newRun(tx, q, DefaultParams)
		depth := max(k, rerankDepth)
		if len(q.Phrases)+len(q.ExPhrase) > 0 {
			depth = max(k, phraseDepth)
		}
		if _, err := r.rank(depth); err != nil {
			return err
		}
		decoded, postings = r.work.DecodedPostings, r.work.Postings
		return nil
	})
	return decoded, postings, err
}

// The bounds of a search, for tests.
const (
	PhraseDepth  = phraseDepth
	PhraseBudget = phraseBudget
	RerankDepth  = rerankDepth
)

// ScoredTerms returns the terms query is ranked by (after Params.MaxTerms
// keeps the rarest of a long query).
func ScoredTerms(s *store.Store, query string) ([]string, error) {
	q, err := ParseQuery(query)
	if err != nil {
		return nil, err
	}
	var out []string
	err = s.View(func(tx *store.Tx) error {
		q.Resolve(func(t string) int { st, _ := tx.LookupSearchTerm(t); return int(st.DF) })
		for _, t := range newRun(tx, q, DefaultParams).terms {
			if t.weight > 0 {
				out = append(out, t.term)
			}
		}
		return nil
	})
	return out, err
}

// SetEnglishOnly makes every page indexed (and every snippet made) while
// it is on English, whatever its language: the evaluation's "no
// stemming beyond English" reference. It returns a function that restores
// the previous setting. Tests that use it must not run in parallel.
func SetEnglishOnly(on bool) (restore func()) {
	old := englishOnly
	englishOnly = on
	return func() { englishOnly = old }
}

// OnPrepared sets a hook told of each batch IndexPages took from
// PreparePages (nil: none).
func OnPrepared(fn func(pages int)) { testHookPrepared = fn }
