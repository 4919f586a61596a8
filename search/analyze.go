package search

import (
	"strings"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// AnalyzerVersion names the tokenizer's and the indexer's behaviour. It
// is stored with the index; a build whose version differs rebuilds the
// search index on its next scan (see rebuild.go) rather than matching
// terms made by different rules.
const AnalyzerVersion = "5"

// maxTermBytes bounds a term; longer runs (hashes, base64) are not
// indexed whole.
const maxTermBytes = 64

// maxParts bounds the segments of one compound (a.b.c.d…).
const maxParts = 8

// Kind tells how a token was made.
type Kind uint8

// Token kinds. A phrase is matched against the base stream: Word, Part and
// Gram tokens in order (a Whole overlaps its Parts, a flag the word after
// its dashes).
const (
	Word  Kind = iota // a plain word, folded and stemmed
	Whole             // a hyphenated, dotted or underscored compound kept whole (gpt-4o, v1.2), or a flag with its dashes (-force, --dry-run)
	Part              // one segment of a compound, folded and stemmed
	Gram              // a CJK bigram, or a CJK character standing alone
)

// Token is one term occurrence in a text.
type Token struct {
	Term       string // the indexed form
	Start, End int    // byte offsets of the source text
	Kind       Kind
	Stop       bool  // a stopword (Word and Part only)
	ID         int32 // the term's number in this analyzer (see Analyzer.Term)
	// Surface marks a Whole token that is the unstemmed form of the Word
	// or Part token just before it (same offsets): outside English a word
	// whose stem differs from it is emitted both ways.
	Surface bool
}

// Analyzer turns text into tokens (docs/search.md): Unicode words, case and
// diacritic folding, English stemming, CJK as overlapping bigrams, and
// compounds (gpt-4o, v1.2, snake_case) kept whole as well as split. An
// Analyzer caches the analysis of the words it has seen and numbers the
// terms it produces, so an indexer can count by number instead of hashing
// each term again. It is not safe for concurrent use (take one from
// Acquire).
type Analyzer struct {
	lang   Language                 // the language words are stemmed in
	cache  *wordTable               // caches[lang]
	caches [numLanguages]*wordTable // source text → 2·term number + stop bit (-1 for nothing), and the surface form's term number (-1 for none)
	byTerm map[string]int32         // term → term number
	terms  []string                 // term number → term
	segs   []int                    // segment bounds of the current word
	runes  []int                    // rune starts of the current CJK run
	stem   stemmer
}

// Caps: the word cache (cacheSlots/2 words) is cleared when full; an
// analyzer whose term table grew past termCap is not pooled again.
const (
	cacheSlots = 1 << 17
	termCap    = 1 << 20
)

// NewAnalyzer returns an analyzer with an empty cache, analyzing English.
func NewAnalyzer() *Analyzer {
	// the term table grows as terms come: a process analyzing one query
	// does not pay for the 4,096 terms an indexer soon has
	a := &Analyzer{byTerm: make(map[string]int32)}
	a.SetLanguage(English)
	return a
}

// SetLanguage sets the language the analyzer stems words in (English for
// a fresh analyzer). In a language other than English, a word whose stem
// differs from it is emitted twice: the stem, then the folded word itself
// as a Whole token marked Surface. The indexer keeps surface forms in a
// page's names only (re-ranking prefers a name that holds the query's
// word as written over one that only shares its stem); postings hold
// stems, which keeps the index no larger than without stemming.
func (a *Analyzer) SetLanguage(l Language) {
	if l >= numLanguages {
		l = English
	}
	if a.caches[l] == nil {
		size := cacheSlots
		if l != English {
			size = cacheSlots / 4 // other languages: usually fewer pages
		}
		a.caches[l] = newWordTable(size)
	}
	a.lang, a.cache = l, a.caches[l]
}

// Language returns the language the analyzer stems words in.
func (a *Analyzer) Language() Language { return a.lang }

// Term returns the term numbered id by this analyzer.
func (a *Analyzer) Term(id int32) string { return a.terms[id] }

// NumTerms returns how many terms the analyzer has numbered.
func (a *Analyzer) NumTerms() int { return len(a.terms) }

// Intern numbers an arbitrary term (an indexer's filter terms).
func (a *Analyzer) Intern(term string) int32 {
	if id, ok := a.byTerm[term]; ok {
		return id
	}
	id := int32(len(a.terms))
	t := strings.Clone(term)
	a.terms = append(a.terms, t)
	a.byTerm[t] = id
	return id
}

// lookup returns the cached analysis of raw: 2·term number + stop bit, or
// -1 when raw yields no term; and the surface form's term number, or -1.
func (a *Analyzer) lookup(raw string, kind Kind) (int32, int32) {
	if v, alt, ok := a.cache.get(raw); ok {
		return v, alt
	}
	v, alt := a.analyze(raw, kind)
	a.cache.put(raw, v, alt)
	return v, alt
}

// analyze analyzes raw afresh into the cache's encoding (see lookup).
func (a *Analyzer) analyze(raw string, kind Kind) (int32, int32) {
	var term, surface string
	var stop bool
	if kind == Gram {
		term = fold(raw)
	} else {
		term, surface, stop = a.analyzeWord(raw, kind)
	}
	v, alt := int32(-1), int32(-1)
	if term != "" {
		v = a.Intern(term) * 2
		if stop {
			v |= 1
		}
		if surface != "" {
			alt = a.Intern(surface)
		}
	}
	return v, alt
}

// analyzers is a free list that, unlike a sync.Pool, survives garbage
// collections, so warm word caches are reused from batch to batch.
var analyzers = make(chan *Analyzer, 8)

// Acquire takes an analyzer from a free list; give it back with Release.
func Acquire() *Analyzer {
	select {
	case a := <-analyzers:
		return a
	default:
		return NewAnalyzer()
	}
}

// Release returns an analyzer to the free list.
func Release(a *Analyzer) {
	if len(a.terms) > termCap {
		return
	}
	a.SetLanguage(English)
	select {
	case analyzers <- a:
	default:
	}
}

// Tokens returns every token of s.
func (a *Analyzer) Tokens(s string) []Token {
	var out []Token
	a.Each(s, func(t Token) { out = append(out, t) })
	return out
}

// Each calls fn for every token of s in text order (a compound's Whole
// comes before its Parts).
func (a *Analyzer) Each(s string, fn func(Token)) {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiClass[c] != clsWord {
				if c == '-' {
					i = a.flag(s, i, fn)
					continue
				}
				if c == '&' {
					// a character reference (&nbsp; &amp; &#8212;) is
					// no word: its name is not indexed
					if k := entityEnd(s[i:]); k > 0 {
						i += k
						continue
					}
				}
				i++
				continue
			}
			// fast path: an ASCII word ended by ASCII punctuation or
			// space (most words), hashed while it is scanned
			h := uint64(fnvOffset)
			j := i
			for j < len(s) && asciiClass[s[j]] == clsWord {
				h = (h ^ uint64(s[j])) * fnvPrime
				j++
			}
			if j == len(s) || asciiClass[s[j]] == clsOther ||
				(j+1 < len(s) && asciiClass[s[j]] == clsJoiner && !continuesWord(s, j+1)) {
				a.emitHashed(s, i, j, h, fn)
				i = j
				continue
			}
			i = a.word(s, i, fn)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case isCJK(r):
			i = a.cjk(s, i, fn)
		case r != utf8.RuneError && isWordRune(r):
			i = a.word(s, i, fn)
		default:
			i += size
		}
	}
}

// maxFlagDashes is the most dashes a flag starts with (--dry-run).
const maxFlagDashes = 2

// flag handles a dash at s[i]. A dash that starts a token — at the start
// of the text or after a space or punctuation, followed by a letter or
// digit — makes a flag: a command-line parameter such as -Force,
// --dry-run, -v or -1, emitted whole (dashes included, folded, not
// stemmed) as a Whole token, so that it can be searched for with its
// dash; the word after the dashes is then analyzed as usual. flag returns
// the offset to go on from.
func (a *Analyzer) flag(s string, i int, fn func(Token)) int {
	if i > 0 && !separatorBefore(s, i) {
		return i + 1
	}
	k := i
	for k < len(s) && s[k] == '-' {
		k++
	}
	if k-i > maxFlagDashes || k == len(s) {
		return k
	}
	if ok, _ := wordRuneAt(s, k); !ok {
		return k
	}
	end := flagEnd(s, k)
	if end-i <= maxTermBytes {
		a.emit(s, i, end, Whole, fn)
	}
	return k
}

// separatorBefore reports whether the rune before s[i] separates words
// (a space or punctuation other than a joiner).
func separatorBefore(s string, i int) bool {
	c := s[i-1]
	if c < utf8.RuneSelf {
		return asciiClass[c] == clsOther
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return r != utf8.RuneError && !isWordRune(r) && !isJoinerRune(r)
}

// flagEnd returns the end of the name of a flag that starts at s[k]:
// word runes, and segments joined to them by - . or _ (--dry-run,
// -v1.2), at most maxParts of them.
func flagEnd(s string, k int) int {
	parts := 0
	for {
		for k < len(s) {
			ok, size := wordRuneAt(s, k)
			if !ok {
				break
			}
			k += size
		}
		parts++
		if k+1 >= len(s) || parts >= maxParts {
			return k
		}
		if c := s[k]; c != '-' && c != '.' && c != '_' {
			return k
		}
		if ok, _ := wordRuneAt(s, k+1); !ok {
			return k
		}
		k++
	}
}

// wordRuneAt reports whether a non-CJK word rune starts at s[i], and its
// size.
func wordRuneAt(s string, i int) (bool, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		return asciiClass[c] == clsWord, 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	return r != utf8.RuneError && !isCJK(r) && isWordRune(r), size
}

// joinerAt returns the size of a joiner at s[i] (0 when none).
func joinerAt(s string, i int) int {
	c := s[i]
	if c < utf8.RuneSelf {
		if asciiClass[c] == clsJoiner {
			return 1
		}
		return 0
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if isJoinerRune(r) {
		return size
	}
	return 0
}

// word consumes a word or compound starting at s[i] and returns the offset
// after it.
func (a *Analyzer) word(s string, i int, fn func(Token)) int {
	start := i
	segs := a.segs[:0]
	for {
		segStart := i
		for i < len(s) {
			if c := s[i]; c < utf8.RuneSelf {
				if asciiClass[c] != clsWord {
					break
				}
				i++
				continue
			}
			ok, size := wordRuneAt(s, i)
			if !ok {
				break
			}
			i += size
		}
		segs = append(segs, segStart, i)
		if i >= len(s) {
			break
		}
		w := joinerAt(s, i)
		if w == 0 || i+w >= len(s) {
			break
		}
		if ok, _ := wordRuneAt(s, i+w); !ok {
			break
		}
		// English possessive: obsidian's → obsidian
		if isApostrophe(s, i) && isPossessive(s, i+w) {
			a.segs = segs
			if len(segs) == 2 {
				a.emit(s, start, segs[1], Word, fn)
			} else {
				a.compound(s, start, segs, fn)
			}
			return skipWord(s, i+w)
		}
		if len(segs)/2 >= maxParts {
			break
		}
		i += w
	}
	a.segs = segs
	if len(segs) == 2 {
		a.emit(s, start, i, Word, fn)
	} else {
		a.compound(s, start, segs, fn)
	}
	return i
}

func isApostrophe(s string, i int) bool {
	return s[i] == '\'' || strings.HasPrefix(s[i:], "\u2019")
}

// isPossessive reports whether the word at s[i] is a lone "s".
func isPossessive(s string, i int) bool {
	if s[i] != 's' && s[i] != 'S' {
		return false
	}
	if i+1 == len(s) {
		return true
	}
	ok, _ := wordRuneAt(s, i+1)
	return !ok && joinerAt(s, i+1) == 0
}

func skipWord(s string, i int) int {
	for i < len(s) {
		ok, size := wordRuneAt(s, i)
		if !ok {
			break
		}
		i += size
	}
	return i
}

func (a *Analyzer) compound(s string, start int, segs []int, fn func(Token)) {
	end := segs[len(segs)-1]
	if end-start <= maxTermBytes {
		a.emit(s, start, end, Whole, fn)
	}
	for j := 0; j < len(segs); j += 2 {
		a.emit(s, segs[j], segs[j+1], Part, fn)
	}
}

// continuesWord reports whether a word rune (of any script) starts at
// s[i], i.e. whether a joiner before it links two segments.
func continuesWord(s string, i int) bool {
	c := s[i]
	if c < utf8.RuneSelf {
		return asciiClass[c] == clsWord
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r != utf8.RuneError && isWordRune(r)
}

// emitHashed is emit for a plain ASCII word whose hash is known.
func (a *Analyzer) emitHashed(s string, from, to int, h uint64, fn func(Token)) {
	raw := s[from:to]
	v, alt, ok := a.cache.getHashed(raw, h)
	if !ok {
		v, alt = a.analyze(raw, Word)
		a.cache.putHashed(raw, h, v, alt)
	}
	if v < 0 {
		return
	}
	fn(Token{Term: a.terms[v>>1], Start: from, End: to, Kind: Word, Stop: v&1 != 0, ID: v >> 1})
	if alt >= 0 {
		fn(Token{Term: a.terms[alt], Start: from, End: to, Kind: Whole, ID: alt, Surface: true})
	}
}

// emit analyzes s[from:to] (cached) and calls fn.
func (a *Analyzer) emit(s string, from, to int, kind Kind, fn func(Token)) {
	v, alt := a.lookup(s[from:to], kind)
	if v < 0 {
		return
	}
	fn(Token{Term: a.terms[v>>1], Start: from, End: to, Kind: kind, Stop: v&1 != 0 && kind != Whole, ID: v >> 1})
	if alt >= 0 {
		fn(Token{Term: a.terms[alt], Start: from, End: to, Kind: Whole, ID: alt, Surface: true})
	}
}

// analyzeWord folds a word and stems it. In English (and languages
// without a stemmer) a word of ASCII letters only is stemmed by the
// English Snowball stemmer; elsewhere the lowercase word goes through its
// language's Snowball stemmer and the stem is folded, and surface is the
// folded word when it differs from the stem (ASCII words in Russian and
// Arabic text are stemmed as English). A compound's whole form and a flag
// are folded but not stemmed.
func (a *Analyzer) analyzeWord(raw string, kind Kind) (term, surface string, stop bool) {
	f := fold(raw)
	if len(f) > maxTermBytes || f == "" {
		return "", "", false
	}
	if kind == Whole {
		return f, "", false
	}
	l := a.lang
	stop = isStop(l, f)
	ascii := asciiLetters(f)
	if l == English || ascii && (l == Russian || l == Arabic) {
		if len(f) >= 3 && ascii {
			return english.Stem(f, false), "", stop
		}
		return f, "", stop
	}
	if utf8.RuneCountInString(f) < 3 || hasDigit(f) {
		return f, "", stop
	}
	st := fold(a.stem.stem(l, strings.ToLower(raw)))
	if st == "" || len(st) > maxTermBytes {
		st = f
	}
	if st != f && !stop {
		surface = f
	}
	return st, surface, stop
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= '0' && c <= '9' {
			return true
		}
	}
	return false
}

func asciiLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// cjk consumes a run of CJK runes starting at s[i], emitting overlapping
// bigrams (a lone rune is emitted alone), and returns the offset after it.
func (a *Analyzer) cjk(s string, i int, fn func(Token)) int {
	runes := a.runes[:0]
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isCJK(r) {
			break
		}
		runes = append(runes, i)
		i += size
	}
	runes = append(runes, i)
	a.runes = runes
	if len(runes) == 2 {
		a.emitGram(s, runes[0], runes[1], fn)
		return i
	}
	for k := 0; k+2 < len(runes); k++ {
		a.emitGram(s, runes[k], runes[k+2], fn)
	}
	return i
}

func (a *Analyzer) emitGram(s string, from, to int, fn func(Token)) {
	v, _ := a.lookup(s[from:to], Gram)
	if v < 0 {
		return
	}
	fn(Token{Term: a.terms[v>>1], Start: from, End: to, Kind: Gram, ID: v >> 1})
}

// Terms returns the distinct terms of s (base and whole), for tests and
// tools.
func Terms(s string) []string {
	a := Acquire()
	defer Release(a)
	seen := map[string]bool{}
	var out []string
	a.Each(s, func(t Token) {
		if !seen[t.Term] {
			seen[t.Term] = true
			out = append(out, t.Term)
		}
	})
	return out
}
