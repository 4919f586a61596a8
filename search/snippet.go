package search

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/markdown"
)

// Snippet sizes in bytes: the window the best match is looked for in, and
// the most a snippet holds.
const (
	snippetWindow = 160
	snippetMax    = 220
	snippetLead   = 40 // context kept before the first match
)

// Snippet returns a one-line excerpt of a page's text (frontmatter left
// out) around the passage that holds the most of the given terms (term →
// weight); without a match, the start of the body.
func Snippet(text string, terms map[string]float64) string {
	if text == "" {
		return ""
	}
	body := text
	if _, b, ok := markdown.SplitFrontmatter(text); ok {
		body = b
	}
	type match struct {
		start int
		term  string
	}
	var ms []match
	if len(terms) > 0 {
		a := Acquire()
		a.SetLanguage(TextLanguage(text))
		a.Each(body, func(t Token) {
			if _, ok := terms[t.Term]; ok && len(ms) < 5000 {
				ms = append(ms, match{t.Start, t.Term})
			}
		})
		Release(a)
	}
	from := 0
	if len(ms) > 0 {
		// the window [ms[i].start, ms[i].start+snippetWindow) with the
		// highest weight of distinct terms
		best, bestScore := 0, -1.0
		count := map[string]int{}
		score := 0.0
		j := 0
		for i := range ms {
			for j < len(ms) && ms[j].start < ms[i].start+snippetWindow {
				if count[ms[j].term] == 0 {
					score += terms[ms[j].term] + 1
				}
				count[ms[j].term]++
				j++
			}
			if score > bestScore {
				best, bestScore = i, score
			}
			count[ms[i].term]--
			if count[ms[i].term] == 0 {
				score -= terms[ms[i].term] + 1
			}
		}
		from = ms[best].start
		// start at the line's beginning when the match still fits, else
		// a little before the match at a word boundary
		ls := strings.LastIndexByte(body[:from], '\n') + 1
		if from-ls <= snippetMax/2 {
			from = ls
		} else {
			from = wordStart(body, from-snippetLead)
		}
	}
	return clean(body, from)
}

// wordStart moves i forward to the start of a word.
func wordStart(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			return i + size
		}
		i += size
	}
	return i
}

// clean renders body[from:] as one line of at most snippetMax bytes:
// whitespace collapsed, markdown markers dropped, "…" where text was cut.
func clean(body string, from int) string {
	var b strings.Builder
	if strings.TrimSpace(body[:from]) != "" {
		b.WriteString("…")
	}
	space := false
	i := from
	lineStart := from == 0 || body[from-1] == '\n'
	for i < len(body) && b.Len() < snippetMax {
		if lineStart {
			// heading and quote markers
			for i < len(body) && (body[i] == '#' || body[i] == '>' || body[i] == ' ' || body[i] == '\t') {
				i++
			}
			lineStart = false
			continue
		}
		r, size := utf8.DecodeRuneInString(body[i:])
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			i += size
			lineStart = r == '\n'
			continue
		case strings.HasPrefix(body[i:], "[[") || strings.HasPrefix(body[i:], "]]") ||
			strings.HasPrefix(body[i:], "**") || strings.HasPrefix(body[i:], "__"):
			i += 2
			continue
		case r == '`':
			i += size
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteString(body[i : i+size])
		i += size
	}
	out := strings.TrimSpace(b.String())
	if i < len(body) && strings.TrimSpace(body[i:]) != "" {
		// cut at the last space when there is one near the end
		if k := strings.LastIndexByte(out, ' '); k > len(out)-30 && k > 0 {
			out = out[:k]
		}
		out += "…"
	}
	return out
}

// Highlight returns the byte ranges of text (a snippet or a title) that
// match the query's positive terms, in order, merged where they overlap.
// Renderers use it to mark matches; it never fails.
func Highlight(query, text string) [][2]int {
	q, err := ParseQuery(query)
	if err != nil {
		q, _ = ParseQuery(stripFilters(query))
		if q == nil {
			return nil
		}
	}
	allStop := true
	for _, t := range q.Text {
		if !t.Stop {
			allStop = false
		}
	}
	want := map[string]bool{}
	for _, t := range q.Text {
		if !t.Stop || allStop {
			want[t.Term] = true
		}
	}
	for _, ph := range q.Phrases {
		for _, t := range ph {
			want[t] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	var spans [][2]int
	a := Acquire()
	a.SetLanguage(q.Language())
	a.Each(text, func(t Token) {
		if want[t.Term] {
			spans = append(spans, [2]int{t.Start, t.End})
		}
	})
	Release(a)
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var out [][2]int
	for _, s := range spans {
		if n := len(out); n > 0 && s[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], s[1])
			continue
		}
		out = append(out, s)
	}
	return out
}

// stripFilters drops type: words (the only ones that can fail to parse).
func stripFilters(q string) string {
	f := strings.Fields(q)
	out := f[:0]
	for _, w := range f {
		if !strings.HasPrefix(strings.ToLower(strings.TrimLeft(w, "-")), "type:") {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}
