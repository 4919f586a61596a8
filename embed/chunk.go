package embed

import (
	"crypto/sha256"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
)

// Chunking bounds: a chunk's section text is cut at paragraph, then line,
// then sentence boundaries to at most MaxChunkBytes; pieces shorter than
// minPieceBytes join their neighbour.
const (
	MaxChunkBytes = 800
	minPieceBytes = 120
	// chunkerVersion is part of every chunk key: a change to how text is
	// cut or cleaned changes the keys, so the next run re-embeds.
	chunkerVersion = "c1"
)

// Chunk is one piece of a page as it is embedded.
type Chunk struct {
	Key     store.ChunkKey
	Heading string // heading path, " > "-joined ("" before the first heading)
	// Text is what the provider embeds: the page title and heading path,
	// then the cleaned section text.
	Text string
	// Start is the byte offset of the section in the page body.
	Start int
}

// ChunkPage cuts a page into chunks along its headings. The title is
// prepended to every chunk's text but is not part of its key (Key hashes
// the heading path and the section text), so renaming a page re-embeds
// nothing; a page without text is one chunk of its title.
func ChunkPage(title string, pg *markdown.Page) []Chunk {
	body := pg.Body
	masked := markdown.Mask(body)
	type section struct {
		path       string
		start, end int // of the text after the heading line
		head       int // of the heading line
	}
	var secs []section
	var stack []struct {
		level int
		text  string
	}
	cur := section{start: 0}
	for off := 0; off < len(masked); {
		end := strings.IndexByte(masked[off:], '\n')
		if end < 0 {
			end = len(masked)
		} else {
			end += off
		}
		if level, text, ok := atx(masked[off:end], body[off:end]); ok {
			cur.end = off
			secs = append(secs, cur)
			for len(stack) > 0 && stack[len(stack)-1].level >= level {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, struct {
				level int
				text  string
			}{level, cleanInline(text)})
			parts := make([]string, len(stack))
			for i, s := range stack {
				parts[i] = s.text
			}
			cur = section{path: strings.Join(parts, " > "), start: min(end+1, len(body)), head: off}
		}
		off = end + 1
	}
	cur.end = len(body)
	secs = append(secs, cur)

	var out []Chunk
	for i, s := range secs {
		text := cleanText(body[s.start:s.end])
		if text == "" {
			// a heading with nothing under it counts when no deeper
			// heading follows (its words would otherwise be lost)
			if s.path == "" || (i+1 < len(secs) && strings.HasPrefix(secs[i+1].path, s.path+" > ")) {
				continue
			}
		}
		for _, piece := range split(text, MaxChunkBytes) {
			out = append(out, newChunk(title, s.path, piece, s.head))
		}
	}
	if sum := summary(pg); sum != "" && len(out) > 0 {
		// the page as a whole: its other names, tags and sections (a
		// question about the page rather than one of its passages)
		out = append(out, Chunk{Key: chunkKey("\x00summary", sum), Heading: "", Text: title + "\n" + sum, Start: 0})
	}
	if len(out) == 0 {
		// nothing but a title: the key holds the title, or every empty
		// page would share one vector
		c := newChunk(title, "", "", 0)
		c.Key = chunkKey("\x00title", title)
		out = append(out, c)
	}
	return out
}

// summary is the text of a page's summary chunk: aliases, tags and the
// headings, bounded; "" when the page has none of them.
func summary(pg *markdown.Page) string {
	var parts []string
	if len(pg.Aliases) > 0 {
		parts = append(parts, "Also called: "+strings.Join(pg.Aliases, ", "))
	}
	if len(pg.Tags) > 0 {
		parts = append(parts, "Tags: "+strings.Join(pg.Tags, ", "))
	}
	var hs []string
	for _, h := range pg.Headings {
		hs = append(hs, cleanInline(h.Text))
	}
	if len(hs) > 0 {
		parts = append(parts, "Sections: "+strings.Join(hs, "; "))
	}
	s := strings.Join(parts, "\n")
	if len(s) > MaxChunkBytes {
		cut := MaxChunkBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = strings.TrimRightFunc(s[:cut], func(r rune) bool { return r != ' ' && r != ';' })
	}
	return s
}

func newChunk(title, path, text string, start int) Chunk {
	head := title
	if first, _, _ := strings.Cut(path, " > "); path != "" && strings.EqualFold(first, title) {
		head = path // a first heading that repeats the title
	} else if path != "" {
		head += " > " + path
	}
	full := head
	if text != "" {
		full += "\n" + text
	}
	return Chunk{Key: chunkKey(path, text), Heading: path, Text: full, Start: start}
}

func chunkKey(path, text string) store.ChunkKey {
	h := sha256.Sum256([]byte(chunkerVersion + "\x00" + path + "\x00" + text))
	var k store.ChunkKey
	copy(k[:], h[:store.ChunkKeyLen])
	return k
}

// atx parses an ATX heading line (masked: code blanked; raw: the text).
func atx(masked, raw string) (int, string, bool) {
	i := 0
	for i < len(masked) && i < 3 && masked[i] == ' ' {
		i++
	}
	n := 0
	for i+n < len(masked) && masked[i+n] == '#' {
		n++
	}
	if n == 0 || n > 6 || i+n >= len(masked) || (masked[i+n] != ' ' && masked[i+n] != '\t') {
		return 0, "", false
	}
	text := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(raw[i+n:]), "#"))
	if text == "" {
		return 0, "", false
	}
	return n, text, true
}

// chunkPatterns are the patterns chunking cleans markdown with, compiled
// on the first chunking (patterns compiled at init cost every process's
// start, a search's included).
type chunkPatterns struct {
	embed     *regexp.Regexp
	wikiLabel *regexp.Regexp
	wiki      *regexp.Regexp
	image     *regexp.Regexp
	mdLink    *regexp.Regexp
	html      *regexp.Regexp
	comment   *regexp.Regexp
	callout   *regexp.Regexp
	url       *regexp.Regexp
	marks     *regexp.Regexp
	bullet    *regexp.Regexp
	spaces    *regexp.Regexp
	blank     *regexp.Regexp
	tableRule *regexp.Regexp
}

var patterns = sync.OnceValue(func() *chunkPatterns {
	return &chunkPatterns{
		embed:     regexp.MustCompile(`!\[\[[^\]\n]*\]\]`),
		wikiLabel: regexp.MustCompile(`\[\[([^\]|\n]*)\|([^\]\n]*)\]\]`),
		wiki:      regexp.MustCompile(`\[\[([^\]\n]*)\]\]`),
		image:     regexp.MustCompile(`!\[([^\]\n]*)\]\([^)\n]*\)`),
		mdLink:    regexp.MustCompile(`\[([^\]\n]*)\]\([^)\n]*\)`),
		html:      regexp.MustCompile(`<[^>\n]{1,200}>`),
		comment:   regexp.MustCompile(`(?s)%%.*?%%|<!--.*?-->`),
		callout:   regexp.MustCompile(`\[!([a-zA-Z-]+)\][+-]?`),
		url:       regexp.MustCompile(`https?://\S+`),
		marks:     regexp.MustCompile("[*_`=~]{1,3}"),
		bullet:    regexp.MustCompile(`(?m)^[ \t]*(?:(?:[-*+>]+|\d+[.)]|\|)[ \t]*)+`),
		spaces:    regexp.MustCompile(`[ \t]+`),
		blank:     regexp.MustCompile(`\n{3,}`),
		tableRule: regexp.MustCompile(`(?m)^[ \t|:-]+$`),
	}
})

// cleanInline turns a line of markdown into plain words: links become
// their labels, embeds and markup go.
func cleanInline(s string) string {
	re := patterns()
	s = re.embed.ReplaceAllString(s, " ")
	s = re.image.ReplaceAllString(s, "$1")
	s = re.wikiLabel.ReplaceAllString(s, "$2")
	s = re.wiki.ReplaceAllStringFunc(s, func(m string) string {
		t := m[2 : len(m)-2]
		t = strings.ReplaceAll(t, "#^", " ")
		return strings.ReplaceAll(t, "#", " ")
	})
	s = re.mdLink.ReplaceAllString(s, "$1")
	s = re.html.ReplaceAllString(s, " ")
	s = re.url.ReplaceAllString(s, " ")
	s = re.callout.ReplaceAllString(s, "$1:")
	s = re.marks.ReplaceAllString(s, "")
	return strings.TrimSpace(re.spaces.ReplaceAllString(s, " "))
}

// cleanText is cleanInline over a section, keeping paragraph breaks.
func cleanText(s string) string {
	re := patterns()
	s = re.comment.ReplaceAllString(s, " ")
	s = re.tableRule.ReplaceAllString(s, "")
	s = re.bullet.ReplaceAllString(s, "")
	// links before table pipes are blanked ([[Target|label]])
	s = re.embed.ReplaceAllString(s, " ")
	s = re.wikiLabel.ReplaceAllString(s, "$2")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = cleanInline(strings.ReplaceAll(l, "|", " "))
	}
	s = strings.Join(lines, "\n")
	s = re.blank.ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}

// split cuts text into pieces of at most max bytes at the best boundary
// available: a blank line, a line break, a sentence end, a space.
func split(text string, max int) []string {
	if len(text) <= max {
		return []string{text}
	}
	var out []string
	for len(text) > max {
		cut := -1
		for _, sep := range []string{"\n\n", "\n", ". ", " "} {
			if i := strings.LastIndex(text[:max], sep); i >= minPieceBytes {
				cut = i + len(sep)
				break
			}
		}
		if cut < 0 {
			cut = max
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			if cut == 0 {
				cut = max // no rune starts there (invalid UTF-8): cut anyway
			}
		}
		out = append(out, strings.TrimSpace(text[:cut]))
		text = strings.TrimSpace(text[cut:])
	}
	if len(text) < minPieceBytes && len(out) > 0 && len(out[len(out)-1])+len(text)+1 <= max+minPieceBytes {
		out[len(out)-1] += "\n" + text
	} else if text != "" {
		out = append(out, text)
	}
	return out
}
