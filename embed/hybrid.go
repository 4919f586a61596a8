package embed

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
)

// Mode is how a search ranks.
type Mode string

// Search modes.
const (
	Auto     Mode = ""         // hybrid when a provider is set and pages are embedded, else lexical
	Lexical  Mode = "lexical"  // BM25F only
	Semantic Mode = "semantic" // cosine of the query and the pages' chunks only
	Hybrid   Mode = "hybrid"   // both, fused per page
)

// Signal names in search.Hit.Signals.
const (
	SignalLexical  = "lexical"
	SignalSemantic = "semantic"
)

// ParseMode checks a mode name ("" is Auto).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case Auto, Lexical, Semantic, Hybrid:
		return m, nil
	}
	return "", errs.E(errs.Invalid, "mode %q: want lexical, semantic or hybrid", s)
}

// Fusion combines the two rankings of a page. Method "max" (the default)
// adds the two scores, each divided by the best of its ranking:
//
//	Lexical · bm25/bm25_best + Semantic · (1 − m)^Defer · max(cos, 0)/cos_best
//
// for every page among the Depth best of either ranking: a page the
// lexical ranking does not hold adds 0 there (BM25's least score), and
// the cosine of a lexical candidate the semantic ranking lacks is computed
// from its vectors. m is the NameMatch of the best lexical hit — lexical
// search's own measure of how wholly one of that page's names (title,
// alias, file name, a heading) is the query — so a query that names a page
// is ranked as lexical search ranks it, and meaning counts in full for a
// question whose words name nothing. Method "minmax" (the first fusion)
// scales cosines between the Depth-th and the best, (cos − cos_last)/
// (cos_best − cos_last), over the pages each ranking holds; "rrf" is
// reciprocal-rank fusion, Lexical/(K + r_l) + Semantic/(K + r_s) with ranks
// from 1. In both a ranking that does not hold a page adds nothing.
type Fusion struct {
	Method               string
	K, Lexical, Semantic float64
	// Defer is the exponent of (1 − m) on the semantic weight (0: none).
	Defer float64
	// Depth is how many pages of each ranking take part.
	Depth int
}

// DefaultFusion is the fusion synapse ranks with, chosen on the tuning
// halves of the Obsidian Help paraphrases and headings with USE-lite
// (search/eval_embed_test.go, SEARCH_EVAL_TUNE=1; README "Semantic
// search"): the best paraphrase MRR@10 among the fusions that lose
// nothing on aliases and headings and at most one of the 14 hand-written
// questions.
var DefaultFusion = Fusion{Method: "max", Lexical: 1, Semantic: 3, Defer: 3, Depth: 50}

// QueryEmbedder returns the vector of a query text.
type QueryEmbedder func(ctx context.Context, text string) ([]float32, error)

// SearchOptions tune Search.
type SearchOptions struct {
	K    int
	Mode Mode
	// ReadFile reads a page's text by vault path (snippets, phrases).
	ReadFile func(vaultPath string) ([]byte, error)
	// Embed embeds the query; nil when no provider is configured.
	Embed QueryEmbedder
	// Lexical runs the lexical search for k hits, with snippets (and
	// phrase checks on the text) or without (nil: search.Search).
	Lexical func(k int, snippets bool) ([]search.Hit, error)
	// Model is the configured model: vectors of another model are not
	// compared with its query vectors.
	Model string
	// Off says why semantic search cannot run although asked for (a bad
	// configuration); noted in the result.
	Off    string
	Fusion *Fusion // nil: DefaultFusion
}

// Result is a search's answer.
type Result struct {
	Mode Mode         // the mode that ranked the hits
	Note string       // why the mode differs from the one asked for, if it does
	Hits []search.Hit // best first
	// QueryVectorMS is the time the provider took for the query vector.
	QueryVectorMS float64
}

// Search runs a query in the given mode. Filters, exclusions and phrases
// apply in every mode. When semantic ranking cannot run (no provider, no
// page embedded with the configured model, the provider failing), the
// answer is lexical and Note says why.
func Search(ctx context.Context, s *store.Store, query string, o SearchOptions) (*Result, error) {
	q, err := search.ParseQuery(query)
	if err != nil {
		return nil, err
	}
	k := max(o.K, 1)
	f := DefaultFusion
	if o.Fusion != nil {
		f = *o.Fusion
	}
	res := &Result{Mode: o.Mode}
	lex := o.Lexical
	if lex == nil {
		lex = func(k int, snippets bool) ([]search.Hit, error) {
			so := search.Options{K: k}
			if snippets {
				so.ReadFile = o.ReadFile
			}
			return search.Search(s, query, so)
		}
	}
	lexical := func(note string) (*Result, error) {
		hits, err := lex(k, true)
		if err != nil {
			return nil, err
		}
		for i := range hits {
			hits[i].Signals = []string{SignalLexical}
		}
		res.Mode, res.Hits, res.Note = Lexical, hits, note
		return res, nil
	}
	dim, note, ok := semanticReady(s, o)
	if !ok {
		return lexical(note)
	}
	text := QueryText(query)
	if text == "" {
		return lexical("") // filters only: a listing
	}
	t0 := time.Now()
	y, err := o.Embed(ctx, text)
	res.QueryVectorMS = float64(time.Since(t0).Microseconds()) / 1000
	if err == nil {
		_, err = checkVectors([][]float32{y}, 1, dim)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		why := err.Error()
		if pe, ok := Failure(err); ok {
			why = pe.Error()
		}
		return lexical("semantic search unavailable (" + why + "); lexical results")
	}
	y = normalize(y)
	mode := o.Mode
	if mode == Auto {
		mode = Hybrid
	}
	res.Mode = mode

	depth := max(k, f.Depth)
	var lexHits []search.Hit
	if mode == Hybrid {
		// snippets only for the hits shown (fuse), unless phrases need
		// the text to be checked
		if lexHits, err = lex(depth, len(q.Phrases)+len(q.ExPhrase) > 0); err != nil {
			return nil, err
		}
	}
	var c semCandidates
	err = s.View(func(tx *store.Tx) error {
		c, err = semanticCandidates(tx, q, f, dim, y, depth, lexHits)
		return err
	})
	if err != nil {
		return nil, err
	}
	res.Hits, err = fuse(s, lexHits, c.sem, c.extra, f, depth, k, mode, c.terms, c.filt, o.ReadFile)
	return res, err
}

// semanticReady says whether a search can rank semantically and, when it
// cannot, the note its lexical answer carries (empty when lexical is what
// was asked for). dim is the stored vectors' dimension.
func semanticReady(s *store.Store, o SearchOptions) (dim int, note string, ok bool) {
	switch {
	case o.Mode == Lexical:
		return 0, "", false
	case o.Off != "":
		return 0, "semantic search is off: " + o.Off + "; lexical results", false
	case o.Embed == nil && o.Mode == Auto:
		return 0, "", false
	case o.Embed == nil:
		return 0, "no embedding provider is configured (embeddings: url and model, in ~/.config/synapse/config.yaml or a trusted .synapse/config.yaml); lexical results", false
	}
	var model string
	var embedded bool
	_ = s.View(func(tx *store.Tx) error {
		model, dim = tx.VecModel()
		embedded = tx.HasVecPages()
		return nil
	})
	switch {
	case !embedded:
		return dim, "no page is embedded yet (run `synapse embed`); lexical results", false
	case model != o.Model:
		return dim, fmt.Sprintf("the pages were embedded with model %q, the configured model is %q (run `synapse embed`); lexical results", model, o.Model), false
	}
	return dim, "", true
}

// semCandidates are the semantic ranking of a query and what fuse needs
// beside it.
type semCandidates struct {
	sem   []semHit
	extra map[string]semHit // cosines of lexical candidates the semantic ranking lacks
	terms map[string]float64
	filt  *search.Filter
}

// semanticCandidates ranks the pages the query's filters allow by cosine
// to the query vector y.
func semanticCandidates(tx *store.Tx, q *search.Query, f Fusion, dim int, y []float32, depth int, lexHits []search.Hit) (c semCandidates, err error) {
	if c.filt, err = search.NewFilter(tx, q); err != nil {
		return c, err
	}
	// phrases are confirmed on the text (fuse): rank a few spares
	n := depth
	if c.filt.Phrases() {
		n = depth * 2
	}
	if c.sem, err = rank(tx, dim, y, c.filt.Allow, n); err != nil {
		return c, err
	}
	if f.Method == "max" && len(lexHits) > 0 {
		c.extra = pageCosines(tx, dim, y, lexHits, c.sem)
	}
	c.terms = c.filt.Terms(tx)
	return c, nil
}

// fused is a page in the combined ranking.
type fused struct {
	path    string
	doc     uint32
	lex     *search.Hit
	sem     *semHit
	lr, sr  int // ranks from 1; 0 = not ranked
	score   float64
	signals []string
}

// fusion is one fuse in progress: the candidates of both rankings by path,
// the semantic candidates' page records and the page texts read so far.
type fusion struct {
	f      Fusion
	depth  int
	mode   Mode
	filt   *search.Filter
	read   func(string) ([]byte, error)
	byPath map[string]*fused
	all    []*fused
	recs   map[uint32]*store.PageRec
	texts  map[string][]byte
	r      int // semantic candidates ranked
}

func fuse(s *store.Store, lex []search.Hit, sem []semHit, extra map[string]semHit, f Fusion, depth, k int, mode Mode,
	terms map[string]float64, filt *search.Filter, read func(string) ([]byte, error)) ([]search.Hit, error) {
	fu := &fusion{f: f, depth: depth, mode: mode, filt: filt, read: read,
		byPath: map[string]*fused{}, recs: map[uint32]*store.PageRec{}, texts: map[string][]byte{}}
	for i := range lex {
		if i >= depth {
			break
		}
		h := &lex[i]
		c := &fused{path: h.Path, lex: h, lr: i + 1}
		fu.byPath[h.Path] = c
		fu.all = append(fu.all, c)
	}
	if err := fu.semantic(s, sem); err != nil {
		return nil, err
	}
	for _, c := range fu.all {
		if h, ok := extra[c.path]; ok && c.sem == nil {
			h := h
			c.sem, c.doc = &h, h.doc
		}
	}
	fu.score(lex)
	return fu.hits(k, terms), nil
}

// readText reads a page's text once (nil when it cannot be read).
func (fu *fusion) readText(p string) []byte {
	if t, ok := fu.texts[p]; ok || fu.read == nil {
		return t
	}
	t, _ := fu.read(p)
	fu.texts[p] = t
	return t
}

// semantic adds the semantic candidates, ranked from 1, with their page
// records; a candidate whose text lacks the query's phrases is skipped.
func (fu *fusion) semantic(s *store.Store, sem []semHit) error {
	err := s.View(func(tx *store.Tx) error {
		for _, h := range sem {
			p, err := tx.Page(h.doc)
			if err != nil {
				return err
			}
			if p != nil && !p.Reserved {
				fu.recs[h.doc] = p
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range sem {
		h := &sem[i]
		p := fu.recs[h.doc]
		if p == nil {
			continue
		}
		if fu.filt.Phrases() {
			if t := fu.readText(p.Path); t != nil && !fu.filt.PhrasesOK(t) {
				continue
			}
		}
		if fu.r++; fu.r > fu.depth {
			break
		}
		c := fu.byPath[p.Path]
		if c == nil {
			c = &fused{path: p.Path}
			fu.byPath[p.Path] = c
			fu.all = append(fu.all, c)
		}
		c.doc, c.sem, c.sr = h.doc, h, fu.r
	}
	return nil
}

// score gives each candidate its fused score and signals (in semantic
// mode, its cosine, and only semantic candidates are kept).
func (fu *fusion) score(lex []search.Hit) {
	f := fu.f
	lexBest, cosBest, cosLast := 0.0, 0.0, 0.0
	for _, c := range fu.all {
		if c.lr == 1 {
			lexBest = c.lex.Score
		}
		if c.sr == 1 {
			cosBest = c.sem.cos
		}
		if c.sr == fu.r || (fu.r > fu.depth && c.sr == fu.depth) {
			cosLast = c.sem.cos
		}
	}
	wSem := f.Semantic
	if f.Defer > 0 && len(lex) > 0 {
		// a query that names the best lexical page is answered lexically
		wSem *= math.Pow(max(0, 1-lex[0].NameMatch), f.Defer)
	}
	for _, c := range fu.all {
		if c.lr > 0 {
			if f.Method == "rrf" {
				c.score += f.Lexical / (f.K + float64(c.lr))
			} else if lexBest > 0 {
				c.score += f.Lexical * c.lex.Score / lexBest
			}
			c.signals = append(c.signals, SignalLexical)
		}
		switch {
		case c.sr > 0 && f.Method == "rrf":
			c.score += f.Semantic / (f.K + float64(c.sr))
		case c.sem != nil && f.Method == "max":
			if cosBest > 0 {
				c.score += wSem * max(0, c.sem.cos) / cosBest
			}
		case c.sr > 0 && f.Method == "minmax" && cosBest > cosLast:
			c.score += wSem * (c.sem.cos - cosLast) / (cosBest - cosLast)
		}
		if c.sr > 0 {
			c.signals = append(c.signals, SignalSemantic)
		}
	}
	if fu.mode != Semantic {
		return
	}
	kept := fu.all[:0]
	for _, c := range fu.all {
		if c.sr > 0 {
			c.score = c.sem.cos
			kept = append(kept, c)
		}
	}
	fu.all = kept
}

// hits sorts the candidates by score and returns the best k as hits, each
// with a snippet.
func (fu *fusion) hits(k int, terms map[string]float64) []search.Hit {
	all := fu.all
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].path < all[j].path
	})
	out := []search.Hit{}
	for _, c := range all {
		if len(out) == k {
			break
		}
		var h search.Hit
		if c.lex != nil {
			h = *c.lex
			if h.Snippet == "" {
				if t := fu.readText(h.Path); t != nil {
					h.Snippet = search.Snippet(string(t), terms)
				}
			}
		} else {
			p := fu.recs[c.doc]
			h = search.Hit{ID: p.ID, Title: p.Title, Type: p.Type, Path: p.Path, Size: p.Size,
				Snippet: sectionSnippet(fu.readText(p.Path), c.sem.heading, terms)}
		}
		h.Score = math.Round(c.score*10000) / 10000
		h.Signals = c.signals
		out = append(out, h)
	}
	return out
}

// sectionSnippet is the snippet of the chunk that matched: the page text
// from the heading that ends the chunk's heading path on (the start of the
// body when the path is empty or the heading is not found).
func sectionSnippet(text []byte, path string, terms map[string]float64) string {
	if text == nil {
		return ""
	}
	_, body, ok := markdown.SplitFrontmatter(string(text))
	if !ok {
		body = string(text)
	}
	if path == "" {
		return search.Snippet(body, terms)
	}
	last := path
	if i := strings.LastIndex(path, " > "); i >= 0 {
		last = path[i+len(" > "):]
	}
	masked := markdown.Mask(body)
	for off := 0; off < len(masked); {
		end := strings.IndexByte(masked[off:], '\n')
		if end < 0 {
			end = len(masked)
		} else {
			end += off
		}
		if _, h, ok := atx(masked[off:end], body[off:end]); ok && cleanInline(h) == last {
			return search.Snippet(body[off:], terms)
		}
		off = end + 1
	}
	return search.Snippet(body, terms)
}

// QueryText is the part of a query that is embedded: its words and
// phrases, without filters and exclusions (type:, tag:, -word).
func QueryText(query string) string {
	var out []string
	for _, w := range fieldsQuoted(query) {
		lw := strings.ToLower(w)
		switch {
		case strings.HasPrefix(w, "-") && len(w) > 1:
			continue
		case strings.HasPrefix(lw, "type:"), strings.HasPrefix(lw, "tag:"):
			continue
		}
		w = strings.Trim(w, "\"“”„")
		if w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// fieldsQuoted splits on spaces, keeping a quoted phrase (and a -"phrase")
// as one field.
func fieldsQuoted(s string) []string {
	var out []string
	var cur strings.Builder
	quoted := false
	for _, r := range s {
		switch {
		case r == '"' || r == '“' || r == '”' || r == '„':
			quoted = !quoted
			cur.WriteRune(r)
		case unicode.IsSpace(r) && !quoted:
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// pageCosines returns the cosine of the best chunk of each lexical hit that
// sem does not hold, by path.
func pageCosines(tx *store.Tx, dim int, y []float32, hits []search.Hit, sem []semHit) map[string]semHit {
	have := map[uint32]bool{}
	for _, h := range sem {
		have[h.doc] = true
	}
	yq, ys := quantizeQuery(y)
	y32 := make([]int32, len(yq))
	for i, v := range yq {
		y32[i] = int32(v)
	}
	out := map[string]semHit{}
	for _, h := range hits {
		doc := tx.DocByPath(h.Path)
		if doc == 0 || have[doc] {
			continue
		}
		v, ok, err := tx.VecView(doc)
		if err != nil || !ok || v.Dim != dim {
			continue
		}
		best, at := float32(-2), -1
		for i := range v.N {
			if c := float32(dot(v.Q(i), y32)) * v.Scale(i); c > best {
				best, at = c, i
			}
		}
		if at >= 0 {
			hs, _ := v.Headings()
			hit := semHit{doc: doc, cos: float64(best * ys), chunk: at}
			if at < len(hs) {
				hit.heading = hs[at]
			}
			out[h.Path] = hit
		}
	}
	return out
}
