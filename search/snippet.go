package search

import (
	"context"
	"html"
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

// snippetPiece is how much of a page's text is analyzed between two
// looks at the context (a few milliseconds of work).
const snippetPiece = 64 << 10

// Snippet returns a one-line excerpt of a page's text (frontmatter left
// out) around the passage that holds the most of the given terms (term →
// weight); without a match, the start of the body.
func Snippet(text string, terms map[string]float64) string {
	return SnippetContext(context.Background(), text, terms)
}

// SnippetContext is Snippet that stops looking for matches once ctx is
// done (the excerpt is then made from the matches found so far; the
// caller returns the context's error).
func SnippetContext(ctx context.Context, text string, terms map[string]float64) string {
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
		// a piece at a time, each ending at a line's end (or a space)
		// so that no word is cut, the context checked between pieces
		for off := 0; off < len(body) && len(ms) < 5000 && ctx.Err() == nil; {
			end := pieceEnd(body, off)
			a.Each(body[off:end], func(t Token) {
				if _, ok := terms[t.Term]; ok && len(ms) < 5000 {
					ms = append(ms, match{off + t.Start, t.Term})
				}
			})
			off = end
		}
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

// pieceEnd is where the piece of body starting at off ends: after the
// last newline within snippetPiece bytes, else after the last space,
// else the end of body.
func pieceEnd(body string, off int) int {
	if len(body)-off <= snippetPiece {
		return len(body)
	}
	piece := body[off : off+snippetPiece]
	if k := strings.LastIndexByte(piece, '\n'); k > 0 {
		return off + k + 1
	}
	if k := strings.LastIndexByte(piece, ' '); k > 0 {
		return off + k + 1
	}
	return len(body)
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

// clean renders body[from:] as one line of at most snippetMax bytes of
// plain text, as a reader of the rendered page sees it: links
// show their label ([[Page|label]] → label, [[Page#Part]] → Page > Part,
// [text](url) → text), character references show their character
// (&nbsp; a space, &amp; &), embeds, images, HTML tags, comments, footnote
// references, block ids, callout types and code fences are dropped, and so
// are emphasis, heading, quote, list and table markers; inline code keeps
// its text as written. Whitespace is collapsed and "…" marks where text
// was cut.
func clean(body string, from int) string {
	from = constructStart(body, from)
	var b strings.Builder
	if strings.TrimSpace(body[:from]) != "" {
		b.WriteString("…")
	}
	r := renderer{out: &b}
	i := from
	lineStart := from == 0 || body[from-1] == '\n'
	fence := inFence(body, from)
	for i < len(body) && b.Len() < snippetMax {
		if lineStart {
			lineStart = false
			if isFence(body[i:]) {
				fence = !fence
				i = lineEnd(body, i)
				continue
			}
			if !fence {
				i = r.lineStart(body, i)
				continue
			}
		}
		if body[i] == '\n' {
			r.space = true
			lineStart = true
			i++
			continue
		}
		if fence {
			// code shows as written
			e := lineEnd(body, i)
			r.text(body[i:e])
			i = e
			continue
		}
		i = r.inline(body, i, len(body))
	}
	out := strings.TrimSpace(b.String())
	cut := i < len(body) && strings.TrimSpace(body[i:]) != ""
	if len(out) > snippetMax {
		// a code span or code line is written whole: cut it to size
		k := snippetMax
		for k > 0 && !utf8.RuneStart(out[k]) {
			k--
		}
		out, cut = out[:k], true
	}
	if cut {
		// cut at the last space when there is one near the end
		if k := strings.LastIndexByte(out, ' '); k > len(out)-30 && k > 0 {
			out = out[:k]
		}
		out += "…"
	}
	return out
}

// isFence reports whether a line (s up to its end) opens or closes a
// fenced code block.
func isFence(s string) bool {
	t := strings.TrimLeft(s, " \t")
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// inFence reports whether offset from of body is inside a fenced code
// block.
func inFence(body string, from int) bool {
	in := false
	for i := 0; i < from; {
		if isFence(body[i:]) {
			in = !in
		}
		e := strings.IndexByte(body[i:from], '\n')
		if e < 0 {
			break
		}
		i += e + 1
	}
	return in
}

// lineEnd returns the offset of the newline ending the line at i (or the
// end of s).
func lineEnd(s string, i int) int {
	if e := strings.IndexByte(s[i:], '\n'); e >= 0 {
		return i + e
	}
	return len(s)
}

// constructStart moves from back to the start of a link, embed or HTML
// tag it falls inside on its line, so that a snippet never starts mid-construct.
func constructStart(body string, from int) int {
	ls := strings.LastIndexByte(body[:from], '\n') + 1
	line := body[ls:from]
	if open := strings.LastIndex(line, "[["); open >= 0 && !strings.Contains(line[open:], "]]") {
		if open > 0 && line[open-1] == '!' {
			open--
		}
		return ls + open
	}
	if open := strings.LastIndexByte(line, '['); open >= 0 && !strings.Contains(line[open:], ")") &&
		(strings.Contains(line[open:], "](") || !strings.Contains(line[open:], "]")) {
		if open > 0 && line[open-1] == '!' {
			open--
		}
		return ls + open
	}
	// inside an HTML tag (<div class="callout">): from its <
	if open := strings.LastIndexByte(line, '<'); open >= 0 && !strings.Contains(line[open:], ">") {
		if k := strings.IndexByte(body[ls+open:lineEnd(body, ls+open)], '>'); k > 0 && isTag(body[ls+open+1:ls+open+k]) {
			return ls + open
		}
	}
	return from
}

// renderer writes plain text with collapsed whitespace.
type renderer struct {
	out   *strings.Builder
	space bool // a space is due before the next text
}

func (r *renderer) text(s string) {
	fs := strings.Fields(s)
	if len(fs) > 0 && unicode.IsSpace(rune(s[0])) {
		r.space = true
	}
	for i, f := range fs {
		if i > 0 {
			r.space = true
		}
		r.word(f)
	}
	if s != "" && unicode.IsSpace(rune(s[len(s)-1])) {
		r.space = true
	}
}

func (r *renderer) word(w string) {
	if r.space && r.out.Len() > 0 {
		r.out.WriteByte(' ')
	}
	r.space = false
	r.out.WriteString(w)
}

// glue writes s as part of the current word (after a pending space).
func (r *renderer) glue(s string) {
	if r.space && r.out.Len() > 0 {
		r.out.WriteByte(' ')
	}
	r.space = false
	r.out.WriteString(s)
}

// entityEnd returns the length of an HTML character reference at the
// start of s (&nbsp; &amp; &#8212; &#x2014;) that decodes to something
// else, or 0.
func entityEnd(s string) int {
	k := strings.IndexByte(s[:min(len(s), 33)], ';')
	if k < 2 || k > 32 {
		return 0
	}
	name := s[1:k]
	if name[0] == '#' {
		digits, isHex := name[1:], false
		if digits != "" && (digits[0] == 'x' || digits[0] == 'X') {
			digits, isHex = digits[1:], true
		}
		if digits == "" {
			return 0
		}
		for _, c := range []byte(digits) {
			if !(c >= '0' && c <= '9' || isHex && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')) {
				return 0
			}
		}
	} else {
		for _, c := range []byte(name) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return 0
			}
		}
	}
	if html.UnescapeString(s[:k+1]) == s[:k+1] {
		return 0 // not a reference HTML knows
	}
	return k + 1
}

// lineStart skips a line's block markers (headings, quotes, callout
// types, list and task markers, table rules, code fences) and returns
// where its text starts.
func (r *renderer) lineStart(s string, i int) int {
	end := strings.IndexByte(s[i:], '\n')
	if end < 0 {
		end = len(s)
	} else {
		end += i
	}
	line := strings.TrimSpace(s[i:end])
	if isTableRule(line) || line == "---" || line == "***" {
		return end // the whole line is markup
	}
	for {
		j := i
		for j < end && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		switch {
		case j < end && (s[j] == '#' || s[j] == '>'):
			for j < end && (s[j] == '#' || s[j] == '>') {
				j++
			}
		case strings.HasPrefix(s[j:end], "[!"):
			// a callout type: [!tip], [!note]+
			k := strings.IndexByte(s[j:end], ']')
			if k < 0 {
				return j
			}
			j += k + 1
			if j < end && (s[j] == '+' || s[j] == '-') {
				j++
			}
		case j+1 < end && (s[j] == '-' || s[j] == '*' || s[j] == '+') && s[j+1] == ' ':
			j += 2
			if strings.HasPrefix(s[j:end], "[ ] ") || strings.HasPrefix(s[j:end], "[x] ") || strings.HasPrefix(s[j:end], "[X] ") {
				j += 4
			}
		case j < end && s[j] >= '0' && s[j] <= '9':
			k := j
			for k < end && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			if k+1 < end && (s[k] == '.' || s[k] == ')') && s[k+1] == ' ' {
				j = k + 2
			} else {
				return j
			}
		default:
			return j
		}
		if j == i {
			return j
		}
		i = j
	}
}

// isTableRule reports a table's header rule (|---|:--:|).
func isTableRule(line string) bool {
	if !strings.Contains(line, "-") || !strings.Contains(line, "|") {
		return false
	}
	for _, c := range line {
		if c != '|' && c != '-' && c != ':' && c != ' ' {
			return false
		}
	}
	return true
}

// inline renders the construct or character at s[i] (within s[:end], one
// line) and returns the offset after it.
func (r *renderer) inline(s string, i, end int) int {
	rest := s[i:end]
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[:nl]
	}
	if strings.HasPrefix(rest, "%%") {
		// a comment, to its closing %% (possibly on a later line)
		if k := strings.Index(s[i+2:], "%%"); k >= 0 {
			return i + 2 + k + 2
		}
		return len(s)
	}
	if n := r.link(rest); n > 0 {
		return i + n
	}
	if n := r.marker(s, rest, i, end); n > 0 {
		return i + n
	}
	ru, size := utf8.DecodeRuneInString(rest)
	if unicode.IsSpace(ru) {
		r.space = true // a no-break or other Unicode space
		return i + size
	}
	if r.space && r.out.Len() > 0 {
		r.out.WriteByte(' ')
	}
	r.space = false
	r.out.WriteString(rest[:size])
	return i + size
}

// link renders the embed, image, wikilink, footnote reference, link,
// autolink or HTML tag rest starts with (rest: the rest of a line) and
// returns its length, or 0 when rest starts none.
func (r *renderer) link(rest string) int {
	switch rest[0] {
	case '!':
		if strings.HasPrefix(rest, "![[") {
			if k := strings.Index(rest, "]]"); k >= 0 {
				r.space = true
				return k + 2 // an embed
			}
		}
		if strings.HasPrefix(rest, "![") {
			if k := linkEnd(rest[1:]); k > 0 {
				r.space = true
				return 1 + k // an image
			}
		}
	case '[':
		if strings.HasPrefix(rest, "[[") {
			if k := strings.Index(rest, "]]"); k >= 0 {
				r.text(wikiLabel(rest[2:k]))
				return k + 2
			}
		}
		if strings.HasPrefix(rest, "[^") {
			if k := strings.IndexByte(rest, ']'); k >= 0 {
				return k + 1 // a footnote reference
			}
		}
		if k := linkEnd(rest); k > 0 {
			label := rest[1:strings.Index(rest, "](")]
			j := 0
			for j < len(label) {
				j = r.inline(label, j, len(label))
			}
			return k
		}
	case '<':
		if k := strings.IndexByte(rest, '>'); k > 0 {
			inner := rest[1:k]
			if strings.HasPrefix(inner, "http://") || strings.HasPrefix(inner, "https://") || strings.HasPrefix(inner, "mailto:") {
				r.text(inner)
				return k + 1
			}
			if isTag(inner) {
				r.space = r.space || r.out.Len() > 0 && tagBreaks(inner)
				return k + 1
			}
		}
	}
	return 0
}

// runOf is how many times rest starts with c.
func runOf(rest string, c byte) int {
	n := 0
	for n < len(rest) && rest[n] == c {
		n++
	}
	return n
}

// marker renders the code span, emphasis marker, table cell boundary,
// escape, block id, character reference or space that starts rest (the
// rest of the line from s[i], within s[:end]) and returns its length, or
// 0 when rest starts none.
func (r *renderer) marker(s, rest string, i, end int) int {
	c := rest[0]
	switch c {
	case '`':
		n := runOf(rest, '`')
		if k := strings.Index(rest[n:], rest[:n]); k >= 0 {
			r.text(rest[n : n+k]) // code keeps its text as written
			return n + k + n
		}
		return n
	case '*', '~', '=':
		if n := runOf(rest, c); c == '*' || n >= 2 {
			return n // emphasis, strikethrough, highlight markers
		}
	case '_':
		n := runOf(rest, '_')
		// emphasis when it does not join two word characters (snake_case)
		before := i > 0 && isWordByte(s[i-1])
		after := i+n < end && isWordByte(s[i+n])
		if !(before && after) {
			return n
		}
	case '|':
		r.space = true // a table cell boundary
		return 1
	case '\\':
		if len(rest) > 1 && strings.IndexByte("\\`*_{}[]()#+-.!|<>~=%^$", rest[1]) >= 0 {
			r.word(rest[1:2])
			return 2
		}
	case '^':
		// a block id closing the line: text ^abc-1
		k := 1
		for k < len(rest) && (isWordByte(rest[k]) || rest[k] == '-') {
			k++
		}
		if k > 1 && strings.TrimSpace(rest[k:]) == "" && (i == 0 || s[i-1] == ' ') {
			return k
		}
	case '&':
		return r.entity(rest)
	case ' ', '\t', '\r':
		r.space = true
		return 1
	}
	return 0
}

// entity renders the character reference rest starts with and returns
// its length (0: none): it shows as its character; a non-breaking or
// other space is a space like any other.
func (r *renderer) entity(rest string) int {
	k := entityEnd(rest)
	if k == 0 {
		return 0
	}
	dec := html.UnescapeString(rest[:k])
	if strings.TrimFunc(dec, unicode.IsSpace) == "" || strings.IndexFunc(dec, unicode.IsControl) >= 0 {
		r.space = true
	} else {
		r.glue(dec)
	}
	return k
}

// wikiLabel is the text a wikilink shows: its label after | (or \| in a
// table), else the target with a heading as "Page > Heading" (block ids
// left out).
func wikiLabel(inner string) string {
	if k := strings.IndexByte(inner, '|'); k >= 0 {
		if label := strings.TrimSpace(inner[k+1:]); label != "" {
			return label
		}
		inner = inner[:k] // an empty label shows the target
	}
	inner = strings.TrimSuffix(inner, "\\")
	parts := strings.Split(inner, "#")
	var out []string
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" || strings.HasPrefix(p, "^") {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, " > ")
}

// linkEnd returns the length of a markdown link [label](url) at the start
// of s (its url may be <bracketed>), or 0.
func linkEnd(s string) int {
	if s == "" || s[0] != '[' {
		return 0
	}
	mid := strings.Index(s, "](")
	if mid < 0 || strings.Contains(s[:mid], "[[") {
		return 0
	}
	rest := s[mid+2:]
	if strings.HasPrefix(rest, "<") {
		if k := strings.Index(rest, ">)"); k >= 0 {
			return mid + 2 + k + 2
		}
		return 0
	}
	depth := 0
	for k := 0; k < len(rest); k++ {
		switch rest[k] {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return mid + 2 + k + 1
			}
			depth--
		case ' ':
			if !strings.HasPrefix(rest[k:], " \"") {
				return 0
			}
		}
	}
	return 0
}

// isTag reports whether s (between < and >) is an HTML tag or comment.
func isTag(s string) bool {
	if strings.HasPrefix(s, "!--") {
		return true
	}
	s = strings.TrimPrefix(s, "/")
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for k := 0; k < len(s) && s[k] != ' ' && s[k] != '/'; k++ {
		if !isWordByte(s[k]) && s[k] != '-' {
			return false
		}
	}
	return true
}

// tagBreaks reports whether a tag separates words (a block element or a
// line break) rather than running inside one (<b>, <span>).
func tagBreaks(tag string) bool {
	name := strings.ToLower(strings.TrimPrefix(tag, "/"))
	if k := strings.IndexAny(name, " /"); k >= 0 {
		name = name[:k]
	}
	switch name {
	case "b", "i", "em", "strong", "span", "a", "u", "s", "mark", "code", "sup", "sub", "small", "kbd":
		return false
	}
	return true
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
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
