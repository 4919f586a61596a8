package markdown

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits bound the work one page can cause. A page comes from anywhere (a
// clone, a sync, a download), so every name it gives, every list it holds
// and every YAML alias it expands is bounded when it is parsed: what is
// past a limit is left out of the parsed page (and so out of the index),
// and the page says so (Page.Capped). Nothing is left out of the file:
// the page reads and writes back byte for byte.
//
// Every name that becomes a store key (a title, alias, tag, link target,
// source path) is at most NameBytes long, so no key comes near bbolt's
// 32 KiB limit, even folded (case folding and NFC at most multiply a
// name's bytes by 4.5).
type Limits struct {
	// NameBytes bounds a title, an alias, a tag, a link's target and its
	// heading. A longer title gives way to the file name; a longer alias,
	// tag or link is left out.
	NameBytes int
	// SourceBytes bounds a `sources` entry (a URL may be long).
	SourceBytes int
	// Aliases, Tags and Sources bound how many of each a page keeps (the
	// first ones, in file order).
	Aliases, Tags, Sources int
	// Links bounds the links a page keeps: frontmatter links, then the
	// body's, in file order.
	Links int
	// LinkBytes bounds the bytes of the kept links' targets and headings
	// together.
	LinkBytes int
	// Headings bounds the headings a page keeps.
	Headings int
	// FrontmatterBytes bounds the frontmatter text that is read as YAML; a
	// longer block is kept as text, unread, like one that does not parse.
	FrontmatterBytes int
	// FrontmatterValues bounds the values of a frontmatter, every YAML
	// alias counted as often as it is used (an alias bomb of a few hundred
	// bytes names billions), and FrontmatterValueBytes their text: past
	// either, the block is kept as text, unread.
	FrontmatterValues     int
	FrontmatterValueBytes int
	// SearchBytes bounds the body text search indexes (the first bytes,
	// cut at a line's end when there is one).
	SearchBytes int
	// ScanBytes bounds, as a multiple of the body's size, the bytes read
	// looking for markdown links that turn out not to be links (an
	// unclosed `[a](b` read to the end of its line, again and again):
	// past it, the rest of the body is not searched for markdown links.
	ScanBytes int
}

// DefaultLimits are the limits Parse applies. write_page's own limits
// are lower (a title of 200 characters, 100 aliases…): a page written
// through synapse always parses whole.
var DefaultLimits = Limits{
	NameBytes:             1024,
	SourceBytes:           2048,
	Aliases:               1000,
	Tags:                  1000,
	Sources:               1000,
	Links:                 20000,
	LinkBytes:             4 << 20,
	Headings:              20000,
	FrontmatterBytes:      1 << 20,
	FrontmatterValues:     100000,
	FrontmatterValueBytes: 4 << 20,
	SearchBytes:           4 << 20,
	ScanBytes:             8,
}

// Capped is one limit a page went past, and what was left out.
type Capped struct {
	// Limit names the limit: "name_bytes", "aliases", "links",
	// "frontmatter_bytes"… (the Limits field in snake case).
	Limit string `json:"limit"`
	// Message says what the page holds, what the limit is and what was
	// left out.
	Message string `json:"message"`
}

func (p *Page) capped(limit, format string, args ...any) {
	p.Capped = append(p.Capped, Capped{Limit: limit, Message: fmt.Sprintf(format, args...)})
}

// CappedText joins a page's capped messages in one line ("" when none).
func CappedText(cs []Capped) string {
	msgs := make([]string, len(cs))
	for i, c := range cs {
		msgs[i] = c.Message
	}
	return strings.Join(msgs, "; ")
}

// limitNames keeps the names of a list that fit the byte limit, then the
// first maxCount of them, and notes what it left out (one and many name
// the items: "alias", "aliases").
func (p *Page) limitNames(names []string, one, many string, maxBytes, maxCount int, limit string) []string {
	long := 0
	out := names[:0:0]
	for _, n := range names {
		if len(n) > maxBytes {
			long++
			continue
		}
		out = append(out, n)
	}
	if long > 0 {
		p.capped("name_bytes", "%s longer than %d bytes left out", count(long, one, many), maxBytes)
	}
	if len(out) > maxCount {
		p.capped(limit, "%s: the first %d kept", count(len(out), one, many), maxCount)
		out = out[:maxCount]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// limitTitle makes a title longer than the limit give way to the file
// name (itself cut to the limit, at a character boundary).
func (p *Page) limitTitle(rel string, lim Limits) {
	if len(p.Title) <= lim.NameBytes {
		return
	}
	p.capped("name_bytes", "a title of %d bytes (over %d): titled by the file name", len(p.Title), lim.NameBytes)
	p.Title = cutUTF8(strings.TrimSuffix(path.Base(rel), path.Ext(rel)), lim.NameBytes)
}

// linkSink keeps the links a page may have, in file order: those whose
// target and heading fit NameBytes, the first Links of them, within
// LinkBytes in all. The parser stops looking for links once it is full.
type linkSink struct {
	lim   Limits
	off   int // added to a kept link's Start and End
	out   []Link
	long  int  // left out: a target or heading too long
	full  bool // left out: past Links or LinkBytes
	bytes int
}

// add keeps l if it may; false when the sink is full (stop looking).
func (k *linkSink) add(l Link) bool {
	if k.full {
		return false
	}
	if len(l.Target) > k.lim.NameBytes || len(l.Heading) > k.lim.NameBytes || len(l.Block) > k.lim.NameBytes {
		k.long++
		return true
	}
	if len(k.out) == k.lim.Links || k.bytes+len(l.Target)+len(l.Heading) > k.lim.LinkBytes {
		k.full = true
		return false
	}
	k.bytes += len(l.Target) + len(l.Heading)
	l.Label = cutUTF8(l.Label, k.lim.NameBytes)
	l.Start += k.off
	l.End += k.off
	k.out = append(k.out, l)
	return true
}

// done returns the links kept and notes in p what was left out.
func (k *linkSink) done(p *Page) []Link {
	if k.long > 0 {
		p.capped("name_bytes", "%s whose target or heading is longer than %d bytes left out", count(k.long, "link", "links"), k.lim.NameBytes)
	}
	if k.full {
		p.capped("links", "more than %d links: the first %d kept (at most %d a page, %d bytes of targets)", len(k.out), len(k.out), k.lim.Links, k.lim.LinkBytes)
	}
	return k.out
}

// count is "1 link", "2 links".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// SearchBody is the part of the body that search indexes: all of it, or
// the first Limits.SearchBytes, cut at a line's end.
func (p *Page) SearchBody() string { return p.Body[:p.searchEnd] }

// limitSearch sets where search stops reading the body.
func (p *Page) limitSearch(lim Limits) {
	p.searchEnd = len(p.Body)
	if len(p.Body) <= lim.SearchBytes {
		return
	}
	p.searchEnd = strings.LastIndexByte(p.Body[:lim.SearchBytes], '\n') + 1
	if p.searchEnd == 0 { // one long line: cut inside it
		p.searchEnd = len(cutUTF8(p.Body, lim.SearchBytes))
	}
	p.capped("search_bytes", "a body of %d bytes: search indexes its first %d", len(p.Body), p.searchEnd)
}

// cutUTF8 cuts s to at most n bytes at a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// withinValues counts the values of a parsed YAML document, each alias as
// many times as it is used, and their scalar bytes, and says which limit
// they go past (nil when none). Each node is measured once (an alias's
// total is remembered), so a bomb of nine aliases nine levels deep costs
// a few dozen steps to refuse, not 9^9.
func withinValues(n *yaml.Node, lim Limits) error {
	m := valueMeter{sizes: map[*yaml.Node][2]int{}, lim: lim}
	values, bytes := m.measure(n, 0)
	switch {
	case values > lim.FrontmatterValues:
		return &capError{"frontmatter_values", fmt.Sprintf("a frontmatter of more than %d values (YAML aliases counted each time they are used) is not read; the page is indexed by its file name and body", lim.FrontmatterValues)}
	case bytes > lim.FrontmatterValueBytes:
		return &capError{"frontmatter_value_bytes", fmt.Sprintf("a frontmatter whose values hold more than %d bytes (YAML aliases counted each time they are used) is not read; the page is indexed by its file name and body", lim.FrontmatterValueBytes)}
	}
	return nil
}

type valueMeter struct {
	sizes map[*yaml.Node][2]int
	lim   Limits
}

// measure returns the values and scalar bytes under n, saturating just
// past the limits (so no count overflows).
func (m *valueMeter) measure(n *yaml.Node, depth int) (values, bytes int) {
	if n == nil {
		return 0, 0
	}
	if s, ok := m.sizes[n]; ok {
		return s[0], s[1]
	}
	if depth > 10000 {
		return m.lim.FrontmatterValues + 1, 0 // deeper than YAML itself allows
	}
	values, bytes = 1, len(n.Value)
	if n.Kind == yaml.AliasNode {
		values, bytes = m.measure(n.Alias, depth+1)
	}
	for _, c := range n.Content {
		v, b := m.measure(c, depth+1)
		values, bytes = min(values+v, m.lim.FrontmatterValues+1), min(bytes+b, m.lim.FrontmatterValueBytes+1)
	}
	m.sizes[n] = [2]int{values, bytes}
	return values, bytes
}
