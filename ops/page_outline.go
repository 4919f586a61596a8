package ops

import (
	"fmt"
	"strings"

	"github.com/synapse-wiki/synapse/markdown"
)

// MaxPageGetBytes is the most content get_page returns unless asked for
// in full: a page (or a section) over it comes as its outline, so that
// one read of a huge page does not fill a caller's context. The content
// is then empty, never a part that could be taken for the whole.
const MaxPageGetBytes = 32 << 10

// maxOutline bounds the headings an outline lists.
const maxOutline = 100

// maxOmittedLinks bounds the links listed beside an outline.
const maxOmittedLinks = 50

// OutlineEntry is one heading of a page whose content was left out.
type OutlineEntry struct {
	// Heading is the heading as get_page's section takes it ("## Setup").
	Heading string `json:"heading"`
	// Line is the heading's line in the file.
	Line int `json:"line"`
	// Bytes is the size of the section: what section would return.
	Bytes int `json:"bytes"`
}

// omitContent replaces the content (the body, or the section asked for)
// by its outline, and the links by their first maxOmittedLinks; asked is
// set when the outline was asked for, whatever the size.
func (o *GetPageOut) omitContent(data []byte, asked bool) {
	first := o.SectionLine
	if first == 0 {
		doc := strings.ToValidUTF8(string(data), "\uFFFD") // as markdown.Parse reads it
		first = 1 + strings.Count(doc[:len(doc)-len(o.Content)], "\n")
	}
	secs := markdown.Sections(o.Content)
	o.ContentOmitted, o.ContentBytes, o.OutlineTotal = true, len(o.Content), len(secs)
	o.Outline = []OutlineEntry{}
	for _, s := range secs[:min(len(secs), maxOutline)] {
		o.Outline = append(o.Outline, OutlineEntry{Heading: strings.Repeat("#", s.Level) + " " + s.Text, Line: first + s.Line - 1, Bytes: s.End - s.Start})
	}
	if len(o.Links) > maxOmittedLinks {
		o.LinksTotal, o.Links = len(o.Links), o.Links[:maxOmittedLinks]
	}
	what := "the page's content"
	if o.Section != "" {
		what = "the section " + o.Section
	}
	o.Content = ""
	if asked {
		o.Note = fmt.Sprintf("the outline, as asked: %s is %d bytes; read one section with section (on the CLI --section \"## Heading\"; sha256 is the whole page's, the if_match of a section write)", what, o.ContentBytes)
		return
	}
	o.Note = fmt.Sprintf("%s is %d bytes, more than get_page returns whole (%d): content is empty and outline lists its headings with their sizes; read one section (section, on the CLI --section \"## Heading\"; sha256 is the whole page's, the if_match of a section write), or all of it (full, --full)", what, o.ContentBytes, MaxPageGetBytes)
}
