package search

import (
	"strings"

	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
)

// Passage is a part of a page's body that can be given alone: a paragraph
// (text up to a blank line; a fenced code block whole), a long one cut at
// line ends, with the headings it sits under. Score is how well it matches
// a query's terms (0: it holds none of them, nor do its headings).
type Passage struct {
	Start, End int    // byte offsets of the body
	Line       int    // 1-based line of the body it starts on
	Heading    string // the headings it sits under, outermost first: "Setup > Sync"
	Score      float64
	// own is the heading of its section when that is no page title (level
	// 2 and below): its terms count for the passage, half
	own string
}

// PassageMax is the size past which a paragraph is cut into several
// passages (at line ends: a single longer line is one passage).
const PassageMax = 1200

// Passages cuts a page's body (its text after the frontmatter) into
// passages and scores each against terms (term → weight, as QueryTerms
// gives them): for each distinct term it holds, the term's weight + 1, as
// a snippet's window is chosen; each further occurrence adds a little, and
// a term of its section's heading (below level 1) half as much as one of
// its own text.
// Headings are not passages of their own; they are named by Heading.
func Passages(body string, terms map[string]float64) []Passage {
	ps := splitPassages(body)
	if len(ps) == 0 || len(terms) == 0 {
		return ps
	}
	type hit struct {
		start int
		term  string
	}
	var hits []hit
	a := Acquire()
	a.SetLanguage(TextLanguage(body))
	a.Each(body, func(t Token) {
		if _, ok := terms[t.Term]; ok {
			hits = append(hits, hit{t.Start, t.Term})
		}
	})
	headTerms := map[string]map[string]bool{}
	for i := range ps {
		h := ps[i].own
		if _, done := headTerms[h]; !done {
			seen := map[string]bool{}
			a.Each(h, func(t Token) {
				if _, ok := terms[t.Term]; ok {
					seen[t.Term] = true
				}
			})
			headTerms[h] = seen
		}
	}
	Release(a)
	j := 0
	for i := range ps {
		p := &ps[i]
		count := map[string]int{}
		for j < len(hits) && hits[j].start < p.End {
			if hits[j].start >= p.Start {
				count[hits[j].term]++
			}
			j++
		}
		for t, n := range count {
			p.Score += terms[t] + 1 + 0.1*float64(min(n-1, 5))
		}
		for t := range headTerms[p.own] {
			if count[t] == 0 {
				p.Score += (terms[t] + 1) / 2
			}
		}
	}
	return ps
}

// splitPassages cuts body into paragraphs: runs of lines up to a blank
// line, a heading or a fence; a fenced block is one paragraph; a paragraph
// longer than PassageMax is cut at line ends.
func splitPassages(body string) []Passage {
	secs := markdown.Sections(body)
	isHeading := map[int]bool{}
	for _, s := range secs {
		isHeading[s.Start] = true
	}
	var out []Passage
	start, startLine := -1, 0
	flush := func(end int) {
		if start >= 0 && strings.TrimSpace(body[start:end]) != "" {
			out = append(out, cutPassage(body, start, end, startLine)...)
		}
		start = -1
	}
	fence := false
	line := 1
	for off := 0; off < len(body); line++ {
		end := lineEnd(body, off)
		next := min(end+1, len(body))
		text := strings.TrimSpace(body[off:end])
		switch {
		case isFence(body[off:end]):
			if !fence {
				flush(off)
				start, startLine = off, line
			}
			fence = !fence
			if !fence {
				flush(next)
			}
		case fence:
		case isHeading[off]:
			flush(off)
		case text == "":
			flush(off)
		default:
			if start < 0 {
				start, startLine = off, line
			}
		}
		off = next
	}
	flush(len(body))
	for i := range out {
		out[i].Heading, out[i].own = headingAt(secs, out[i].Start)
	}
	return out
}

// cutPassage cuts body[start:end] (a paragraph from line) at line ends
// into passages of at most PassageMax bytes where it can.
func cutPassage(body string, start, end, line int) []Passage {
	var out []Passage
	for start < end {
		stop := end
		if end-start > PassageMax {
			k := strings.LastIndexByte(body[start:start+PassageMax], '\n')
			if k <= 0 {
				k = strings.IndexByte(body[start:end], '\n')
			}
			if k > 0 {
				stop = start + k + 1
			}
		}
		out = append(out, Passage{Start: start, End: stop, Line: line})
		line += strings.Count(body[start:stop], "\n")
		start = stop
	}
	return out
}

// headingAt names the headings an offset sits under (the innermost
// section holding it, with its parents), and that section's own heading
// unless it is of level 1 (a page's title, as often as not).
func headingAt(secs []markdown.Section, off int) (trail, own string) {
	for i := len(secs) - 1; i >= 0; i-- {
		if s := secs[i]; s.Start <= off && off < s.End {
			if s.Level > 1 {
				own = s.Text
			}
			return strings.Join(append(append([]string(nil), s.Parents...), s.Text), " > "), own
		}
	}
	return "", ""
}

// QueryTerms returns the terms a query is ranked by, with the weights
// snippets and Passages match them with (their idf in the index). A query
// with no term the wiki holds gives none.
func QueryTerms(s *store.Store, query string) (map[string]float64, error) {
	q, err := ParseQuery(query)
	if err != nil || q.Empty() {
		return nil, err
	}
	var terms map[string]float64
	err = s.View(func(tx *store.Tx) error {
		if err := checkIndex(tx); err != nil {
			return err
		}
		q.Resolve(func(t string) int { st, _ := tx.LookupSearchTerm(t); return int(st.DF) })
		terms = newTermRun(tx, q, DefaultParams).highlightTerms()
		return nil
	})
	return terms, err
}
