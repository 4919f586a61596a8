package search

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/vault"
)

// SyntaxHelp documents the query language for people and agents: `search
// --help`, the MCP tool's description and the agent skill show this text.
const SyntaxHelp = `Query syntax:
  words            ranked by relevance; a page needs only some of them, so a question works
  "a phrase"       these words in this order (an unclosed quote runs to the end)
  -word            leave out pages with the word, when the query has other words too;
                   -"a phrase" likewise
  type:T           only pages of type T, a lower-case word (several type: filters: any of them)
  tag:X            only pages tagged X or X/… (several tag: filters: all of them)
  -type:T -tag:X   leave those pages out
  -Force --dry-run -v -1
                   a leading dash that belongs to the term is searched as text, with and
                   without the dash: two dashes, a digit or one letter after the dash,
                   a -word the wiki holds with its dash (a command-line parameter), and
                   every -word of a query that has nothing else to search for
Punctuation is never a syntax error; only a malformed page type in type: is
(a well-formed type no page has matches nothing).
A query of only type: and tag: filters lists the matching pages by title.
Words match in the other forms of their language (stemming in the page's language:
frontmatter lang: or language:, else detected, else search.language in
.synapse/config.yaml; the query's from its words); a title, alias or heading that
is the query word for word, as written, ranks above one that only shares its stems.`

// Query is a parsed search query; SyntaxHelp is its syntax. Anything
// else is text: punctuation is never a syntax error. Only an unknown page
// type in a type: filter is an invalid error.
//
// A -word is an exclusion only while the query has something positive to
// search for; Resolve turns an exclusion back into text when the index
// holds the word as a flag (with its dash).
type Query struct {
	Text     []Token    // analyzed free-text tokens, stopwords flagged
	Phrases  [][]string // each phrase's base terms, in order
	Exclude  []string   // terms whose pages are left out
	ExPhrase [][]string // phrases whose pages are left out
	Types    []string
	NotTypes []string
	Tags     []string
	NotTags  []string

	// dashes are the exclusions that could also be read as text, in
	// query order.
	dashes []dashWord
	raw    string   // the query text parsed
	lang   Language // the language its words were stemmed in
	sure   bool     // whether the query itself showed its language
}

// Language returns the language the query's words were stemmed in.
func (q *Query) Language() Language { return q.lang }

// dashWord is a -word or -"phrase" that excludes, or, read as text,
// searches for its tokens (the flag with its dash and the word without).
type dashWord struct {
	text    []Token  // the word's tokens, dash included
	phrase  []string // for -"a phrase": its base terms
	exclude string   // the excluded term (a word)
	flag    string   // the flag term (-word) that, when indexed, makes it text
}

// Empty reports whether the query asks for nothing at all.
func (q *Query) Empty() bool {
	return len(q.Text) == 0 && len(q.Phrases) == 0 && !q.Filtered()
}

// Filtered reports whether the query has filters or exclusions.
func (q *Query) Filtered() bool {
	return len(q.Types)+len(q.NotTypes)+len(q.Tags)+len(q.NotTags)+len(q.Exclude)+len(q.ExPhrase) > 0
}

// queryMinWords is how many function words a query needs to show its
// language (see Resolve for the rest).
const queryMinWords = 2

// maxQueryBytes bounds the text a query is parsed from; the rest is
// ignored (a query is a question, not a document).
const maxQueryBytes = 4096

// ParseQuery parses a query string. Its words are stemmed in the
// language the query shows by its script or its function words, else in
// English; Resolve may choose another once the index is known.
func ParseQuery(s string) (*Query, error) {
	if len(s) > maxQueryBytes {
		s = strings.ToValidUTF8(s[:maxQueryBytes], "")
	}
	l, sure := detectLanguage(s, queryMinWords)
	return parseQuery(s, l, sure)
}

// parseQuery parses s with its words stemmed in language l.
func parseQuery(s string, l Language, sure bool) (*Query, error) {
	a := Acquire()
	defer Release(a)
	a.SetLanguage(l)
	q := &Query{raw: s, lang: l, sure: sure}
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		// a single dash before a quote, a filter or a word may exclude
		neg := false
		if r == '-' && i+1 < len(s) {
			r2, size2 := utf8.DecodeRuneInString(s[i+1:])
			neg = !unicode.IsSpace(r2) && r2 != '-'
			if neg && isQuote(r2) {
				i++
				r, size = r2, size2
			}
		}
		if isQuote(r) {
			end := strings.IndexFunc(s[i+size:], isQuote)
			var text string
			if end < 0 {
				text, i = s[i+size:], len(s)
			} else {
				text, i = s[i+size:i+size+end], i+size+end+1
			}
			terms := baseTerms(a, text)
			if len(terms) == 0 {
				continue
			}
			if neg {
				q.ExPhrase = append(q.ExPhrase, terms)
				q.dashes = append(q.dashes, dashWord{phrase: terms})
			} else {
				q.Phrases = append(q.Phrases, terms)
			}
			continue
		}
		// a word runs to the next space or quote
		j := i
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if unicode.IsSpace(r) || isQuote(r) {
				break
			}
			j += size
		}
		word := s[i:j]
		i = j
		bare := word
		if neg {
			bare = word[1:]
		}
		if ok, err := q.filter(bare, neg); err != nil {
			return nil, err
		} else if ok {
			continue
		}
		if neg && q.dash(a, word) {
			continue
		}
		a.Each(word, func(t Token) { q.Text = append(q.Text, t) })
	}
	if len(q.Text) == 0 && len(q.Phrases) == 0 {
		// nothing positive: the exclusions are what to search for
		q.resolve(func(dashWord) bool { return true })
	}
	return q, nil
}

// dash records -word (one dash, then a word) as an exclusion that could
// also be text, and reports whether it did. A word that cannot be an
// exclusion — a digit or a single letter after the dash (-1, -v) — is
// left to be searched as text.
func (q *Query) dash(a *Analyzer, word string) bool {
	d := dashWord{text: a.Tokens(word)}
	var base []Token
	for _, t := range d.text {
		switch {
		case t.Kind == Whole && t.Start == 0:
			d.flag = t.Term
		case t.Kind != Whole:
			base = append(base, t)
		}
	}
	if len(base) == 0 {
		return true // nothing to search for or leave out (-!!)
	}
	first, _ := utf8.DecodeRuneInString(word[1:])
	if unicode.IsDigit(first) || utf8.RuneCountInString(strings.TrimRightFunc(word[1:], isPunct)) == 1 {
		return false
	}
	// one term (a word, or a compound's whole form) excludes by postings;
	// a word of several base terms (a CJK run) excludes as a phrase
	var whole string
	for _, t := range d.text {
		if t.Kind == Whole && len(base) > 1 && t.Start == base[0].Start && t.End == base[len(base)-1].End {
			whole = t.Term
			break
		}
	}
	switch {
	case len(base) == 1:
		d.exclude = base[0].Term
	case whole != "":
		d.exclude = whole
	default:
		for _, t := range base {
			d.phrase = append(d.phrase, t.Term)
		}
	}
	if d.exclude != "" {
		q.Exclude = append(q.Exclude, d.exclude)
	} else {
		q.ExPhrase = append(q.ExPhrase, d.phrase)
	}
	q.dashes = append(q.dashes, d)
	return true
}

func isPunct(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// Resolve fits the query to the index it runs against; df returns how
// many pages hold a term (0: none).
//
// The language: the one the query itself showed, if the index has pages
// in it; else the only language the index has pages in; else the one of
// those that reads more of the query's words as words the index holds
// (ties: the language of more pages; see pickLanguage). The query is
// stemmed again in it.
//
// Flags: each -word whose flag (the word with its dash, e.g. -force) the
// index holds is read as text — the query names a command-line parameter
// the wiki documents rather than a word to leave out.
func (q *Query) Resolve(df func(term string) int) {
	if l := q.pickLanguage(df); l != q.lang {
		if nq, err := parseQuery(q.raw, l, q.sure); err == nil {
			*q = *nq
		}
	}
	q.resolve(func(d dashWord) bool { return d.flag != "" && df(d.flag) > 0 })
}

// pickLanguage chooses the query's language for Resolve when the query
// did not show it and the index has pages in several languages. Each
// language scores the query's content words it reads as a term the index
// holds; the highest score wins, ties going to the language of more
// pages.
//
// A reading that stems a word to another term counts only when the index
// holds that stem on more pages than the word as written: a word the
// index holds as itself is that word, and a rarer stem of it in another
// language is a different word that happens to be indexed too (Hungarian
// stems run to ru, which a command reference holds on three pages of the
// thousand that hold run). Only stems count, never the surface forms
// emitted beside them: a language that emits both would count the word
// twice and outvote the one that reads it as itself.
func (q *Query) pickLanguage(df func(string) int) Language {
	var docs [numLanguages]int
	var present []Language
	for l := range docs {
		if docs[l] = df(langTermPrefix + Language(l).Code()); docs[l] > 0 {
			present = append(present, Language(l))
		}
	}
	switch {
	case len(present) == 0: // an index without languages
		return q.lang
	case q.sure && docs[q.lang] > 0:
		return q.lang
	case len(present) == 1:
		return present[0]
	}
	dfs := map[string]int{} // each term asked once
	pages := func(term string) int {
		n, ok := dfs[term]
		if !ok {
			n = df(term)
			dfs[term] = n
		}
		return n
	}
	best, bestHits := q.lang, -1
	a := Acquire()
	defer Release(a)
	for _, l := range present {
		a.SetLanguage(l)
		seen := map[string]bool{}
		hits := 0
		a.Each(q.raw, func(t Token) {
			if t.Stop || t.Kind == Gram || t.Kind == Whole || seen[t.Term] {
				return
			}
			seen[t.Term] = true
			n := pages(t.Term)
			if n == 0 {
				return
			}
			if f := fold(q.raw[t.Start:t.End]); f == t.Term || pages(f) < n {
				hits++
			}
		})
		if hits > bestHits || hits == bestHits && docs[l] > docs[best] {
			best, bestHits = l, hits
		}
	}
	return best
}

// resolve turns the exclusions for which asText holds into text.
func (q *Query) resolve(asText func(dashWord) bool) {
	keep := q.dashes[:0]
	for _, d := range q.dashes {
		if !asText(d) {
			keep = append(keep, d)
			continue
		}
		if d.exclude != "" {
			if k := slices.Index(q.Exclude, d.exclude); k >= 0 {
				q.Exclude = slices.Delete(q.Exclude, k, k+1)
			}
		} else if k := slices.IndexFunc(q.ExPhrase, func(p []string) bool { return slices.Equal(p, d.phrase) }); k >= 0 {
			q.ExPhrase = slices.Delete(q.ExPhrase, k, k+1)
		}
		if d.text != nil {
			q.Text = append(q.Text, d.text...)
		} else {
			q.Phrases = append(q.Phrases, d.phrase)
		}
	}
	q.dashes = keep
}

func isQuote(r rune) bool { return r == '"' || r == '“' || r == '”' || r == '„' }

// filter handles type:T and tag:X words.
func (q *Query) filter(word string, neg bool) (bool, error) {
	key, val, ok := strings.Cut(word, ":")
	if !ok || val == "" {
		return false, nil
	}
	switch strings.ToLower(key) {
	case "type":
		// open types: a well-formed one no page has matches nothing; a
		// type is a lower-case word, so type:Entity is refused, naming
		// type:entity
		t := val
		if !vault.WellFormedType(t) {
			return false, errs.E(errs.Invalid, "type:%s: not a page type (a lower-case word of letters, digits and '-', at most 32 characters)%s", val, vault.TypeHint(val, "type:"))
		}
		if neg {
			q.NotTypes = append(q.NotTypes, t)
		} else {
			q.Types = append(q.Types, t)
		}
		return true, nil
	case "tag":
		t := strings.ToLower(strings.TrimLeft(val, "#"))
		t = strings.Trim(t, "/")
		if t == "" {
			return false, nil
		}
		if neg {
			q.NotTags = append(q.NotTags, t)
		} else {
			q.Tags = append(q.Tags, t)
		}
		return true, nil
	}
	return false, nil
}

// baseTerms returns the base stream of s (no Whole tokens).
func baseTerms(a *Analyzer, s string) []string {
	var out []string
	a.Each(s, func(t Token) {
		if t.Kind != Whole {
			out = append(out, t.Term)
		}
	})
	return out
}
