// Package markdown parses wiki pages: YAML frontmatter kept losslessly,
// the known keys of a page (docs/vault.md#pages), headings, inline tags and
// links of every form (docs/vault.md#links). Nothing inside fenced code, inline code, HTML
// comments or Obsidian %% comments is a link, heading or tag.
//
// The package is pure: no I/O, no store, safe for concurrent use.
package markdown

import (
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// LinkKind tells how a link was written.
type LinkKind uint8

// Link kinds.
const (
	WikiLink     LinkKind = iota // [[Target]], [[Target|label]], [[Target#Heading]]
	MarkdownLink                 // [label](path/to/Target.md)
)

// Link is one link in a page body.
type Link struct {
	Target  string   `json:"target"`            // as written, without #heading, label or (md) URL escapes
	Heading string   `json:"heading,omitempty"` // text after '#', without a leading '^' block marker
	Block   string   `json:"block,omitempty"`   // block id after '#^'
	Label   string   `json:"label,omitempty"`   // display text, if given
	Embed   bool     `json:"embed,omitempty"`   // ![[...]] or ![...](...)
	Kind    LinkKind `json:"kind"`
	Line    int      `json:"line"` // 1-based line in the file (frontmatter included)
	// Property is the frontmatter key whose value holds the link ("" for
	// a link in the body).
	Property string `json:"property,omitempty"`
	// Start and End are the byte offsets in the file of the target as
	// written: a wikilink's text before any '#' or '|' (spaces around it
	// excluded), a markdown link's destination before any '#', escapes
	// and all (without the <> of a <destination>). A move rewrites links
	// there.
	Start, End int `json:"-"`
	// Angle is set for a markdown link written [label](<destination>).
	Angle bool `json:"-"`
}

// Heading is an ATX heading.
type Heading struct {
	Level int    `json:"level"`
	Text  string `json:"text"`
}

// Page is a parsed page.
type Page struct {
	Frontmatter *Frontmatter
	// FMError is non-empty when the frontmatter block is not valid YAML
	// ("line N: what"): the block has no keys then, but its plain title,
	// type, aliases and tags lines are still read (recoverKeys).
	FMError string
	FMLine  int    // the 1-based line of the file FMError is about (0 unknown)
	HasFM   bool   // a frontmatter block was present
	Body    string // the document after the frontmatter block

	Title    string
	Type     string // from frontmatter; "" when absent (the caller infers from the folder)
	Aliases  []string
	Tags     []string // lowercased, without '#', deduplicated: frontmatter then inline
	Sources  []string
	Created  string
	Updated  string
	Headings []Heading
	// Links are the frontmatter links (in file order), then the body's.
	Links []Link
	// Capped lists the limits (DefaultLimits) the page went past and what
	// was left out of it; empty for every page within them.
	Capped []Capped

	searchEnd int // see SearchBody
}

// Parse parses the page at vault-relative path rel within DefaultLimits.
// It never fails: bad frontmatter is reported in FMError and otherwise
// ignored, so a page a human broke still indexes by its file name, and
// what goes past a limit is left out and reported in Capped.
func Parse(rel string, data []byte) *Page {
	return ParseLimited(rel, data, DefaultLimits)
}

// ParseLimited is Parse within the given limits.
func ParseLimited(rel string, data []byte, lim Limits) *Page {
	doc := string(data)
	if !utf8.ValidString(doc) {
		doc = strings.ToValidUTF8(doc, "\uFFFD")
	}
	d := SplitDocument(doc)
	p := &Page{Frontmatter: &Frontmatter{}, Body: d.Body} // the body never starts with a BOM
	var fmLinks []Link
	if d.HasFM {
		p.HasFM = true
		p.Frontmatter = keepFrontmatter(d.FM, lim) // broken text is kept (no keys), never lost
		if err := p.Frontmatter.Err(); err != nil {
			if c, ok := err.(*capError); ok {
				p.capped(c.limit, "%s", c.msg)
			}
			// the line counts from the top of the file (the opening fence
			// is line 1), as an editor shows it
			p.FMError = strings.TrimPrefix(err.Error(), "frontmatter: ")
			if l := p.Frontmatter.ErrLine(); l > 0 {
				p.FMLine = l + 1
				p.FMError = "line " + strconv.Itoa(p.FMLine) + ": " + strings.TrimPrefix(p.FMError, "line "+strconv.Itoa(l)+": ")
			}
		} else {
			// the text starts on line 2, after the opening ---
			fmLinks = frontmatterLinks(d.FM, 2)
		}
	}
	// body lines are counted from the top of the file, offsets from its
	// first byte
	bodyOff := len(doc) - len(p.Body)
	bodyLine := 1 + strings.Count(doc[:bodyOff], "\n")
	for i := range fmLinks {
		fmLinks[i].Start += len(d.BOM) + len(d.Open)
		fmLinks[i].End += len(d.BOM) + len(d.Open)
	}
	fm := p.Frontmatter
	p.Title = fm.String("title")
	if p.Title == "" {
		p.Title = strings.TrimSuffix(path.Base(rel), path.Ext(rel))
	}
	p.limitTitle(rel, lim)
	p.limitSearch(lim)
	p.Type = strings.ToLower(fm.String("type"))
	p.Aliases = p.limitNames(dedupe(append(fm.List("aliases", true), fm.List("alias", true)...), false), "alias", "aliases", lim.NameBytes, lim.Aliases, "aliases")
	p.Sources = p.limitNames(dedupe(fm.SourceEntries("sources"), false), "sources entry", "sources entries", lim.SourceBytes, lim.Sources, "sources")
	p.Created = fm.String("created")
	p.Updated = fm.String("updated")

	masked := Mask(p.Body)
	p.Headings = headings(masked, p.Body, lim.Headings)
	if len(p.Headings) > lim.Headings {
		p.capped("headings", "more than %d headings: the first %d kept", lim.Headings, lim.Headings)
		p.Headings = p.Headings[:lim.Headings]
	}
	sink := &linkSink{lim: lim}
	for _, l := range fmLinks {
		sink.add(l)
	}
	sink.off = bodyOff // the body's links: offsets from the file's first byte
	if stopped := links(masked, p.Body, bodyLine, lim.ScanBytes*len(p.Body)+1<<20, sink); stopped > 0 {
		p.capped("scan_bytes", "markdown links after line %d not read (the lines before cost more than %d times the page's size to read)", stopped, lim.ScanBytes)
	}
	p.Links = sink.done(p)
	var tags []string
	for _, t := range fm.List("tags", true) {
		// a frontmatter string may also be space separated: "tags: a b"
		tags = append(tags, strings.Fields(t)...)
	}
	tags = append(tags, inlineTags(masked)...)
	p.Tags = NormalizeTags(tags)
	if p.FMError != "" && len(d.FM) <= lim.FrontmatterBytes {
		// a block too long to read is not read for its plain lines either
		p.recover(d.FM)
		p.limitTitle(rel, lim)
		p.Aliases = p.limitNames(p.Aliases, "alias", "aliases", lim.NameBytes, lim.Aliases, "aliases")
	}
	p.Tags = p.limitNames(p.Tags, "tag", "tags", lim.NameBytes, lim.Tags, "tags")
	return p
}

// recover fills in the title, type, aliases and tags of a page whose
// frontmatter is not valid YAML from the block's plain lines for those keys
// (recoverKeys); the page still reports FMError and has no frontmatter keys.
func (p *Page) recover(fm string) {
	r := recoverKeys(fm)
	if r.title != "" {
		p.Title = r.title
	}
	p.Type = r.typ
	p.Aliases = dedupe(r.aliases, false)
	var tags []string
	for _, t := range r.tags {
		tags = append(tags, strings.Fields(t)...)
	}
	p.Tags = NormalizeTags(append(tags, p.Tags...))
}

// NormalizeTags trims, strips a leading '#', lowercases and deduplicates.
func NormalizeTags(in []string) []string {
	out := make([]string, 0, len(in))
	for _, t := range in {
		t = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(t), "#"))
		if t != "" {
			out = append(out, t)
		}
	}
	return dedupe(out, false)
}

func dedupe(in []string, fold bool) []string {
	if len(in) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(in))
	out := in[:0:0]
	for _, s := range in {
		k := s
		if fold {
			k = strings.ToLower(s)
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

// Mask returns body with every byte inside fenced code blocks, inline code
// spans, HTML comments and Obsidian %% comments replaced by a space
// (newlines kept), so that offsets into the result are offsets into body.
func Mask(body string) string {
	if !strings.ContainsAny(body, "`~<%") {
		return body // nothing to blank: the common case
	}
	b := []byte(body)
	blank := func(from, to int) {
		for i := from; i < to && i < len(b); i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	// pass 1: fenced code blocks, line by line
	var fenceChar byte
	fenceLen, fenceStart := 0, 0
	for off := 0; off < len(b); {
		end := indexByteFrom(body, '\n', off)
		line := body[off:end]
		trim := strings.TrimLeft(line, " ")
		indent := len(line) - len(trim)
		if fenceLen == 0 {
			if indent <= 3 && (strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~")) {
				c := trim[0]
				n := 0
				for n < len(trim) && trim[n] == c {
					n++
				}
				if c != '`' || !strings.ContainsRune(trim[n:], '`') {
					fenceChar, fenceLen, fenceStart = c, n, off
				}
			}
		} else if indent <= 3 && strings.HasPrefix(trim, strings.Repeat(string(fenceChar), fenceLen)) &&
			strings.Trim(strings.TrimRight(trim, " \t\r"), string(fenceChar)) == "" {
			blank(fenceStart, end)
			fenceLen = 0
		}
		off = end + 1
	}
	if fenceLen > 0 { // unclosed fence runs to the end, as in CommonMark
		blank(fenceStart, len(b))
	}
	// pass 2: comments and inline code on what is left
	s := string(b)
	var spans *codeSpans
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "<!--"):
			j := strings.Index(s[i+4:], "-->")
			end := len(s)
			if j >= 0 {
				end = i + 4 + j + 3
			}
			blank(i, end)
			i = end
		case strings.HasPrefix(s[i:], "%%"):
			j := strings.Index(s[i+2:], "%%")
			if j < 0 {
				i += 2
				continue
			}
			end := i + 2 + j + 2
			blank(i, end)
			i = end
		case s[i] == '`':
			n := 0
			for i+n < len(s) && s[i+n] == '`' {
				n++
			}
			if spans == nil {
				spans = newCodeSpans(s)
			}
			end := spans.closing(i+n, n)
			if end < 0 {
				i += n
				continue
			}
			blank(i, end)
			i = end
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '`':
			i += 2
		default:
			i++
		}
	}
	return string(b)
}

// codeSpans tells where an inline code span opened by a run of
// backticks closes: the next run of the same length in the same
// paragraph. Reading ahead from every opening run would read a paragraph
// of many unclosed runs (of as many lengths) once per run, quadratic in
// the page; this reads the page once, noting where runs of each length
// start and where paragraphs end, and then finds a closer by binary
// search.
type codeSpans struct {
	runs  map[int][]int32 // run length → starts, ascending
	paras []int32         // offsets of the newlines a blank line follows
}

func newCodeSpans(s string) *codeSpans {
	c := &codeSpans{runs: map[int][]int32{}}
	for i := 0; i < len(s); {
		switch s[i] {
		case '`':
			m := 0
			for i+m < len(s) && s[i+m] == '`' {
				m++
			}
			c.runs[m] = append(c.runs[m], int32(i))
			i += m
		case '\n':
			if i+1 < len(s) && (s[i+1] == '\n' || strings.TrimSpace(s[i+1:indexByteFrom(s, '\n', i+1)]) == "") {
				c.paras = append(c.paras, int32(i))
			}
			i++
		default:
			i++
		}
	}
	return c
}

// closing finds the end of an inline code span opened by n backticks
// whose text starts at from, within the same paragraph; -1 when unclosed.
func (c *codeSpans) closing(from, n int) int {
	rs := c.runs[n]
	k, _ := slices.BinarySearch(rs, int32(from))
	if k == len(rs) {
		return -1
	}
	if p, _ := slices.BinarySearch(c.paras, int32(from)); p < len(c.paras) && c.paras[p] < rs[k] {
		return -1 // a blank line ends the paragraph first
	}
	return int(rs[k]) + n
}

func indexByteFrom(s string, c byte, from int) int {
	if from >= len(s) {
		return len(s)
	}
	if j := strings.IndexByte(s[from:], c); j >= 0 {
		return from + j
	}
	return len(s)
}

// atxHeading parses a line as an ATX heading: up to three spaces, one to
// six '#', a space or tab, the text (closing #s dropped).
func atxHeading(line string) (level int, start, end int, ok bool) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	n := 0
	for i+n < len(line) && line[i+n] == '#' {
		n++
	}
	if n == 0 || n > 6 || i+n >= len(line) || (line[i+n] != ' ' && line[i+n] != '\t') {
		return 0, 0, 0, false
	}
	start = i + n
	end = len(line)
	for start < end && (line[start] == ' ' || line[start] == '\t') {
		start++
	}
	for end > start && (line[end-1] == ' ' || line[end-1] == '\t' || line[end-1] == '\r') {
		end--
	}
	if start == end {
		return 0, 0, 0, false
	}
	return n, start, end, true
}

// headings finds the ATX headings, at most max+1 of them (one more than
// max tells the caller there were more).
func headings(masked, body string, max int) []Heading {
	var out []Heading
	for off := 0; off < len(masked) && len(out) <= max; {
		end := indexByteFrom(masked, '\n', off)
		if off < end && (masked[off] == '#' || masked[off] == ' ') {
			if level, s, e, ok := atxHeading(masked[off:end]); ok {
				text := strings.TrimRight(body[off+s:off+e], "#")
				text = strings.TrimRight(text, " \t")
				if text != "" {
					out = append(out, Heading{Level: level, Text: text})
				}
			}
		}
		off = end + 1
	}
	return out
}

// hasScheme reports whether dest starts with a URL scheme ("https:").
func hasScheme(dest string) bool {
	for i := 0; i < len(dest); i++ {
		c := dest[i]
		switch {
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// links finds the links of a body whose first line is line firstLine of
// the file and gives them to sink, until it is full. Bytes read looking
// for markdown links that turn out not to be any count against budget:
// once it is spent, markdown links are no longer looked for and stopped is
// the line that happened on (0 when it did not).
func links(masked, body string, firstLine, budget int, sink *linkSink) (stopped int) {
	line := firstLine
	lineOff := 0 // offset up to which newlines are counted
	at := func(off int) int {
		line += strings.Count(body[lineOff:off], "\n")
		lineOff = off
		return line
	}
	for i := 0; i < len(masked); {
		j := strings.IndexByte(masked[i:], '[')
		if j < 0 {
			break
		}
		i += j
		embed := i > 0 && masked[i-1] == '!'
		start := i
		if embed {
			start = i - 1
		}
		if strings.HasPrefix(masked[i:], "[[") {
			if end, ok := wikiEnd(masked, i+2); ok {
				if l, ok := parseWikiInner(body[i+2 : end]); ok {
					l.Embed, l.Kind, l.Line = embed, WikiLink, at(start)
					s, e := wikiTargetSpan(body[i+2 : end])
					l.Start, l.End = i+2+s, i+2+e
					if !sink.add(l) {
						return stopped
					}
				}
				i = end + 2
				continue
			}
			i++
			continue
		}
		if stopped > 0 {
			i++
			continue
		}
		l, end, ok := markdownLink(masked, body, i)
		if ok {
			l.Embed, l.Kind, l.Line = embed, MarkdownLink, at(start)
			if !sink.add(l) {
				return stopped
			}
			i = end
			continue
		}
		if budget -= max(end-i, 1); budget < 0 {
			stopped = at(i)
		}
		i++
	}
	return stopped
}

// wikiEnd finds the "]]" closing a wikilink whose inside starts at from:
// the inside is non-empty and holds no '[', ']' or newline.
func wikiEnd(s string, from int) (int, bool) {
	for k := from; k < len(s); k++ {
		switch s[k] {
		case ']':
			if k > from && k+1 < len(s) && s[k+1] == ']' {
				return k, true
			}
			return 0, false
		case '[', '\n':
			return 0, false
		}
	}
	return 0, false
}

// markdownLink parses [label](dest "title") starting at the '[' at i. The
// label may hold one level of nested brackets; the destination may be
// <wrapped> or hold balanced parentheses.
func markdownLink(masked, body string, i int) (Link, int, bool) {
	depth := 0
	k := i + 1
	for ; k < len(masked); k++ {
		c := masked[k]
		if c == '\n' {
			return Link{}, k, false
		}
		if c == '[' {
			if depth++; depth > 1 {
				return Link{}, k, false
			}
		} else if c == ']' {
			if depth == 0 {
				break
			}
			depth--
		}
	}
	if k+1 >= len(masked) || masked[k+1] != '(' {
		return Link{}, k, false
	}
	label := body[i+1 : k]
	p := k + 2
	for p < len(masked) && (masked[p] == ' ' || masked[p] == '\t') {
		p++
	}
	var dest string
	destAt, angle := p, false
	if p < len(masked) && masked[p] == '<' {
		e := strings.IndexAny(masked[p+1:], ">\n")
		if e < 0 || masked[p+1+e] != '>' {
			return Link{}, p + 1 + max(e, 0), false
		}
		dest = body[p+1 : p+1+e]
		destAt, angle = p+1, true
		p += e + 2
	} else {
		ds, paren := p, 0
		for p < len(masked) {
			c := masked[p]
			if c == ' ' || c == '\t' || c == '\n' {
				break
			}
			if c == '(' {
				paren++
			} else if c == ')' {
				if paren == 0 {
					break
				}
				paren--
			}
			p++
		}
		dest = body[ds:p]
	}
	// optional title, then ')'
	for p < len(masked) && (masked[p] == ' ' || masked[p] == '\t') {
		p++
	}
	if p < len(masked) && (masked[p] == '"' || masked[p] == '\'') {
		q := masked[p]
		e := strings.IndexAny(masked[p+1:], string(q)+"\n")
		if e < 0 || masked[p+1+e] != q {
			return Link{}, p + 1 + max(e, 0), false
		}
		p += e + 2
		for p < len(masked) && (masked[p] == ' ' || masked[p] == '\t') {
			p++
		}
	}
	if p >= len(masked) || masked[p] != ')' {
		return Link{}, p, false
	}
	l, ok := parseMarkdownDest(dest)
	if !ok {
		return Link{}, i + 1, false // a link, but not to a page or a file: nothing wasted
	}
	l.Label = strings.TrimSpace(label)
	l.Start, l.Angle = destAt, angle
	l.End = destAt + len(dest)
	if h := strings.IndexByte(dest, '#'); h >= 0 {
		l.End = destAt + h
	}
	return l, p + 1, true
}

// parseWikiInner splits the inside of [[...]] into target, heading, block
// and label. "\|" (a pipe escaped inside a table) separates like "|".
func parseWikiInner(inner string) (Link, bool) {
	var l Link
	target := inner
	if i := strings.IndexByte(inner, '|'); i >= 0 {
		target = inner[:i]
		l.Label = strings.TrimSpace(inner[i+1:])
		target = strings.TrimSuffix(target, "\\")
	}
	target, l.Heading, l.Block = splitFragment(target)
	l.Target = strings.TrimSpace(target)
	if l.Target == "" {
		return l, false // [[#Heading]]: a link inside the same page
	}
	return l, true
}

// wikiTargetSpan returns where the target is within the inside of a
// wikilink, as parseWikiInner reads it: before a '|' (a "\|" escape
// included) and a '#', spaces around it excluded.
func wikiTargetSpan(inner string) (start, end int) {
	t := inner
	if i := strings.IndexByte(inner, '|'); i >= 0 {
		t = strings.TrimSuffix(inner[:i], "\\")
	}
	if i := strings.IndexByte(t, '#'); i >= 0 {
		t = t[:i]
	}
	end = len(strings.TrimRightFunc(t, unicode.IsSpace))
	start = len(t) - len(strings.TrimLeftFunc(t, unicode.IsSpace))
	return min(start, end), end
}

func splitFragment(t string) (target, heading, block string) {
	i := strings.IndexByte(t, '#')
	if i < 0 {
		return t, "", ""
	}
	frag := strings.TrimSpace(t[i+1:])
	if strings.HasPrefix(frag, "^") {
		return t[:i], "", frag[1:]
	}
	// Obsidian nests sub-headings as #A#B; keep the last one
	if j := strings.LastIndexByte(frag, '#'); j >= 0 {
		frag = strings.TrimSpace(frag[j+1:])
	}
	return t[:i], frag, ""
}

// parseMarkdownDest accepts a markdown link destination that names a .md
// file by relative path: not a URL, not a pure fragment. One that names an
// attachment (an image, a PDF… by its extension: ![d](../raw/assets/d.png))
// is kept too: a link that can reach only a file (Link.IsPageLink is false).
func parseMarkdownDest(dest string) (Link, bool) {
	var l Link
	if dest == "" || strings.HasPrefix(dest, "#") || strings.HasPrefix(dest, "//") || hasScheme(dest) {
		return l, false
	}
	raw, heading, block := splitFragment(dest)
	if u, err := url.PathUnescape(raw); err == nil {
		raw = u
	}
	if ext := strings.ToLower(path.Ext(raw)); ext != ".md" && !attachmentExts[ext] {
		return l, false
	}
	if h, err := url.PathUnescape(heading); err == nil {
		heading = h
	}
	l.Target, l.Heading, l.Block = raw, heading, block
	return l, true
}

// inlineTags finds #tags: a '#' at the start of a line or after a space,
// '(', ',' or ';', followed by letters, digits, '_', '-' or '/', not all
// digits. Heading markers are not tags.
func inlineTags(masked string) []string {
	var out []string
	for i := 0; i < len(masked); i++ {
		j := strings.IndexByte(masked[i:], '#')
		if j < 0 {
			break
		}
		i += j
		if i > 0 {
			switch masked[i-1] {
			case ' ', '\t', '\n', '(', ',', ';':
			default:
				continue
			}
		}
		k := i + 1
		for k < len(masked) {
			r, size := utf8.DecodeRuneInString(masked[k:])
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '/') {
				break
			}
			k += size
		}
		tag := strings.Trim(masked[i+1:k], "/")
		if tag != "" && !allDigits(tag) {
			out = append(out, tag)
		}
		i = k - 1
	}
	return out
}

func allDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// attachmentExts are the file types Obsidian links to that are not pages.
var attachmentExts = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".bmp": true, ".svg": true, ".webp": true,
	".avif": true, ".ico": true, ".tif": true, ".tiff": true, ".heic": true,
	".mp3": true, ".wav": true, ".m4a": true, ".ogg": true, ".3gp": true, ".flac": true, ".aac": true,
	".mp4": true, ".webm": true, ".ogv": true, ".mov": true, ".mkv": true, ".avi": true,
	".pdf": true, ".canvas": true, ".base": true, ".excalidraw": true, ".json": true, ".csv": true,
	".txt": true, ".html": true, ".htm": true, ".zip": true, ".docx": true, ".xlsx": true, ".pptx": true,
	".epub": true, ".js": true, ".css": true,
}

// IsPageLink reports whether the link points at a page rather than an
// attachment (an image, a PDF, a canvas…): a target with no extension,
// ".md", or an extension that is not a known attachment type (so
// "[[Obsidian 1.0]]" is a page link).
func (l Link) IsPageLink() bool {
	ext := strings.ToLower(path.Ext(l.Target))
	return ext == "" || ext == ".md" || !attachmentExts[ext]
}
