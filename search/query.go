package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/vault"
)

// Query is a parsed search query. The syntax (SPEC §4.1):
//
//	words          OR-ranked: a page needs only some of them
//	"a phrase"     the words must appear in this order (an unclosed quote runs to the end)
//	-word          pages holding the word are left out; -"a phrase" likewise
//	type:T         only pages of type T (several type: filters: any of them)
//	tag:X          only pages tagged X or X/… (several tag: filters: all of them)
//	-type:T -tag:X leave those pages out
//
// Anything else is text: punctuation is never a syntax error. Only an
// unknown page type in a type: filter is an invalid error.
type Query struct {
	Text     []Token    // analyzed free-text tokens, stopwords flagged
	Phrases  [][]string // each phrase's base terms, in order
	Exclude  []string   // terms whose pages are left out
	ExPhrase [][]string // phrases whose pages are left out
	Types    []string
	NotTypes []string
	Tags     []string
	NotTags  []string
}

// Empty reports whether the query asks for nothing at all.
func (q *Query) Empty() bool {
	return len(q.Text) == 0 && len(q.Phrases) == 0 && !q.Filtered()
}

// Filtered reports whether the query has filters or exclusions.
func (q *Query) Filtered() bool {
	return len(q.Types)+len(q.NotTypes)+len(q.Tags)+len(q.NotTags)+len(q.Exclude)+len(q.ExPhrase) > 0
}

// maxQueryBytes bounds the text a query is parsed from; the rest is
// ignored (a query is a question, not a document).
const maxQueryBytes = 4096

// ParseQuery parses a query string.
func ParseQuery(s string) (*Query, error) {
	if len(s) > maxQueryBytes {
		s = strings.ToValidUTF8(s[:maxQueryBytes], "")
	}
	a := Acquire()
	defer Release(a)
	q := &Query{}
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		neg := false
		if r == '-' && i+1 < len(s) {
			if r2, _ := utf8.DecodeRuneInString(s[i+1:]); !unicode.IsSpace(r2) && r2 != '-' {
				neg = true
				i++
				r, size = utf8.DecodeRuneInString(s[i:])
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
		if ok, err := q.filter(word, neg); err != nil {
			return nil, err
		} else if ok {
			continue
		}
		if neg {
			q.exclude(a, word)
			continue
		}
		a.Each(word, func(t Token) { q.Text = append(q.Text, t) })
	}
	return q, nil
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
		t := strings.ToLower(val)
		if !vault.WellFormedType(t) { // open types: a well-formed one no page has matches nothing
			return false, errs.E(errs.Invalid, "type:%s: not a page type (a lower-case word of letters, digits and '-', at most 32 characters)", val)
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

// exclude records -word: one term (a word, or a compound's whole form)
// excludes by postings; a word that analyzes into several base terms (a
// CJK run) excludes as a phrase.
func (q *Query) exclude(a *Analyzer, word string) {
	toks := a.Tokens(word)
	if len(toks) == 0 {
		return
	}
	if toks[0].Kind == Whole || len(toks) == 1 {
		q.Exclude = append(q.Exclude, toks[0].Term)
		return
	}
	q.ExPhrase = append(q.ExPhrase, baseTerms(a, word))
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
