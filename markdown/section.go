package markdown

import (
	"cmp"
	"fmt"
	"strings"
)

// Section is the part of a body under one ATX heading: the heading line,
// then everything up to the next heading of the same or a higher level
// (fewer #), or the end. A heading inside fenced code, inline code or a
// comment is no heading. Offsets are byte offsets into the body.
type Section struct {
	Level     int    // 1–6
	Text      string // the heading's text, as written (closing #s dropped)
	Line      int    // 1-based line of the heading within the body
	Start     int    // offset of the heading line
	BodyStart int    // offset just after the heading line's line ending
	End       int    // offset of the next heading of level <= Level, or len(body)
	Parents   []string
}

// Sections lists every section of body in order: one per ATX heading.
// Parents holds the texts of the headings a section is nested under, outermost first.
func Sections(body string) []Section {
	masked := Mask(body)
	var out []Section
	line := 1
	for off := 0; off < len(masked); line++ {
		end := indexByteFrom(masked, '\n', off)
		if off < end && (masked[off] == '#' || masked[off] == ' ') {
			if level, s, e, ok := atxHeading(masked[off:end]); ok {
				text := strings.TrimRight(strings.TrimRight(body[off+s:off+e], "#"), " \t")
				if text != "" {
					out = append(out, Section{Level: level, Text: text, Line: line, Start: off, BodyStart: min(end+1, len(body))})
				}
			}
		}
		off = end + 1
	}
	var stack []int // indexes of the open sections, outermost first
	for i := range out {
		for len(stack) > 0 && out[stack[len(stack)-1]].Level >= out[i].Level {
			stack = stack[:len(stack)-1]
		}
		for _, j := range stack {
			out[i].Parents = append(out[i].Parents, out[j].Text)
		}
		stack = append(stack, i)
		out[i].End = len(body)
		for j := i + 1; j < len(out); j++ {
			if out[j].Level <= out[i].Level {
				out[i].End = out[j].Start
				break
			}
		}
	}
	return out
}

// SectionSpec is a heading as a caller names it: "Heading", "## Heading"
// (that level only), or "Parent#Heading" as in an Obsidian link
// ([[Page#Parent#Heading]]: the heading nested under Parent).
type SectionSpec struct {
	Level int      // 0 = any
	Path  []string // the heading's text, after the texts of headings it is nested under
	Raw   string   // as given, trimmed
}

// ParseSectionSpec reads a heading as a caller names it.
func ParseSectionSpec(s string) SectionSpec {
	spec := SectionSpec{Raw: strings.TrimSpace(s)}
	t := spec.Raw
	if n := len(t) - len(strings.TrimLeft(t, "#")); n > 0 && n <= 6 && len(t) > n && (t[n] == ' ' || t[n] == '\t') {
		spec.Level, t = n, strings.TrimSpace(t[n:])
	}
	spec.Path = []string{t}
	return spec
}

// headingKey folds a heading's text for comparison: case and runs of
// white space do not matter.
func headingKey(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// FindSection finds the section spec names in body. It returns the match
// and, when none or several match, the candidates' lines for a message:
// found is false with no candidates when no heading matches, false with
// two or more when the name is ambiguous.
func FindSection(body string, spec SectionSpec) (sec Section, found bool, ambiguous []Section) {
	all := Sections(body)
	match := func(path []string) []Section {
		var out []Section
		for _, s := range all {
			if spec.Level != 0 && s.Level != spec.Level || headingKey(s.Text) != headingKey(path[len(path)-1]) {
				continue
			}
			if nestedUnder(s.Parents, path[:len(path)-1]) {
				out = append(out, s)
			}
		}
		return out
	}
	ms := match(spec.Path)
	if len(ms) == 0 && len(spec.Path) == 1 && strings.Contains(spec.Path[0], "#") {
		// "Parent#Heading": the heading nested under Parent
		var parts []string
		for _, p := range strings.Split(spec.Path[0], "#") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		if len(parts) > 1 {
			ms = match(parts)
		}
	}
	switch len(ms) {
	case 0:
		return Section{}, false, nil
	case 1:
		return ms[0], true, nil
	}
	return Section{}, false, ms
}

// nestedUnder reports whether the parents of a heading include the given
// texts in order (not necessarily adjacent, as Obsidian reads #A#B).
func nestedUnder(parents, want []string) bool {
	i := 0
	for _, p := range parents {
		if i < len(want) && headingKey(p) == headingKey(want[i]) {
			i++
		}
	}
	return i == len(want)
}

// Lines names sections by heading and line for a message: `"## A" (line 3)`.
func Lines(secs []Section) string {
	parts := make([]string, len(secs))
	for i, s := range secs {
		parts[i] = fmt.Sprintf("%q (line %d)", strings.Repeat("#", s.Level)+" "+s.Text, s.Line)
	}
	return strings.Join(parts, ", ")
}

// ReplaceSection returns body with the text under sec's heading replaced
// by text: the blank lines the old section had after its heading and
// before the next heading are kept, so the page's spacing does not change.
// A first line of text that is sec's own heading (as a section read with
// its heading is sent back) is dropped.
func ReplaceSection(body string, sec Section, text string) string {
	text, _ = dropOwnHeading(text, sec.Text, sec.Level)
	old := body[sec.BodyStart:sec.End]
	lead, trail := blankEdges(old)
	if strings.TrimSpace(old) == "" {
		// an empty section: one blank line after the heading, and one
		// before a heading that follows
		lead, trail = "\n", ""
		if sec.End < len(body) {
			trail = "\n"
		}
	}
	mid := trimBlankLines(text)
	if mid != "" && !strings.HasSuffix(mid, "\n") {
		mid += "\n"
	}
	if mid == "" {
		lead = ""
	}
	prefix := body[:sec.BodyStart]
	if sec.BodyStart == len(body) && !strings.HasSuffix(prefix, "\n") {
		prefix += "\n" // the heading was the last line, without a newline
	}
	return prefix + lead + mid + trail + body[sec.End:]
}

// AppendSection returns body with a new section at its end: a blank line,
// the heading at level (2 when 0), a blank line, text.
func AppendSection(body string, level int, heading, text string) string {
	text, own := dropOwnHeading(text, heading, level)
	if level == 0 {
		level = cmp.Or(own, 2) // the level of the heading sent, else 2
	}
	var b strings.Builder
	b.WriteString(body)
	if body != "" {
		if !strings.HasSuffix(body, "\n") {
			b.WriteString("\n")
		}
		if strings.TrimSpace(body) != "" && !strings.HasSuffix(strings.TrimRight(body, " \t\r"), "\n\n") && !strings.HasSuffix(body, "\n\r\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString(strings.Repeat("#", level) + " " + heading + "\n")
	if mid := trimBlankLines(text); mid != "" {
		b.WriteString("\n" + mid)
		if !strings.HasSuffix(mid, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// dropOwnHeading drops a first line of text that is the section's own
// heading: an ATX heading with the given text, at the given level (any
// level when level is 0). It returns the rest and the level dropped (0
// when nothing was).
func dropOwnHeading(text, heading string, level int) (string, int) {
	first, rest, _ := strings.Cut(strings.TrimLeft(text, "\r\n"), "\n")
	if n, s, e, ok := atxHeading(strings.TrimRight(first, "\r")); ok && (level == 0 || n == level) {
		h := strings.TrimRight(strings.TrimRight(first[s:e], "#"), " \t")
		if headingKey(h) == headingKey(heading) {
			return rest, n
		}
	}
	return text, 0
}

// blankEdges returns the blank lines at the start and at the end of s.
func blankEdges(s string) (lead, trail string) {
	i := 0
	for i < len(s) {
		j := indexByteFrom(s, '\n', i)
		if strings.TrimSpace(s[i:j]) != "" || j == len(s) {
			break
		}
		i = j + 1
	}
	lead = s[:i]
	rest := s[i:]
	// lines [j, k): k is just after a line's '\n' (or the end)
	k := len(rest)
	for k > 0 {
		j := strings.LastIndexByte(rest[:k-1], '\n') + 1
		if strings.TrimSpace(rest[j:k]) != "" {
			break // the last content line keeps its own line ending
		}
		k = j
	}
	return lead, rest[k:]
}

// trimBlankLines removes blank lines at the start and the end of s,
// keeping the last line's line ending.
func trimBlankLines(s string) string {
	lead, trail := blankEdges(s)
	return s[len(lead) : len(s)-len(trail)]
}

// AppendToSection returns body with text added to the end of sec's own
// text: after its last line that is not blank, before its first
// subsection (a heading nested under it) and before the blank lines that
// lead to the next heading, so the text belongs to sec and not to a
// subsection. A first line of text that is sec's own heading is dropped
// (as in ReplaceSection). See appendAt for the line between the two.
func AppendToSection(body string, sec Section, text string) string {
	text, _ = dropOwnHeading(text, sec.Text, sec.Level)
	own := sec
	for _, s := range Sections(body) {
		if s.Start > sec.Start && s.Start < sec.End {
			own.End = s.Start
			break
		}
	}
	if strings.TrimSpace(body[own.BodyStart:own.End]) == "" {
		return ReplaceSection(body, own, text) // nothing under the heading yet
	}
	return appendAt(body, own.BodyStart, own.End, text)
}

// AppendToBody returns body with text added after its last line that is
// not blank (text alone when body is blank). See appendAt.
func AppendToBody(body, text string) string {
	if strings.TrimSpace(body) == "" {
		mid := trimBlankLines(text)
		if mid != "" && !strings.HasSuffix(mid, "\n") {
			mid += "\n"
		}
		return mid
	}
	return appendAt(body, 0, len(body), text)
}

// appendAt adds text (its blank first and last lines dropped) after the
// last line of body[start:end] that is not blank, keeping the blank lines
// that followed it. A blank line goes between the two, so that a
// paragraph stays a paragraph of its own, except where text continues
// what ends there: a list item after a list item, a table row after a
// table row.
func appendAt(body string, start, end int, text string) string {
	mid := trimBlankLines(text)
	if mid == "" {
		return body
	}
	if !strings.HasSuffix(mid, "\n") {
		mid += "\n"
	}
	region := body[start:end]
	_, trail := blankEdges(region)
	content := region[:len(region)-len(trail)]
	nl := "\n"
	if strings.HasSuffix(content, "\r\n") {
		nl = "\r\n"
	}
	if !strings.HasSuffix(content, "\n") {
		content += nl
	}
	last := strings.TrimRight(content, "\r\n")
	last = last[strings.LastIndexByte(last, '\n')+1:]
	first, _, _ := strings.Cut(mid, "\n")
	sep := nl
	if listItem(last) && listItem(first) || tableRow(last) && tableRow(first) {
		sep = ""
	}
	return body[:start] + content + sep + mid + trail + body[end:]
}

// listItem reports whether line is a list item: "- ", "* ", "+ " or a
// number with "." or ")" (indented or not).
func listItem(line string) bool {
	t := strings.TrimLeft(line, " \t")
	if len(t) >= 2 && strings.ContainsRune("-*+", rune(t[0])) && (t[1] == ' ' || t[1] == '\t') {
		return true
	}
	i := 0
	for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && (t[i+1] == ' ' || t[i+1] == '\t')
}

// tableRow reports whether line is a row of a pipe table.
func tableRow(line string) bool {
	return strings.HasPrefix(strings.TrimSpace(line), "|")
}
