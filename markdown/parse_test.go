package markdown

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func linkSummary(ls []Link) []string {
	var out []string
	for _, l := range ls {
		s := fmt.Sprintf("%d:%s", l.Line, l.Target)
		if l.Property != "" {
			s += "@" + l.Property
		}
		if l.Label != "" {
			s += "|" + l.Label
		}
		out = append(out, s)
	}
	return out
}

// TestParse_MarkdownLinksToFiles: a markdown link names a page (.md) or an
// attachment by its extension (kept, never a page link); URLs, fragments
// and other destinations are no links.
func TestParse_MarkdownLinksToFiles(t *testing.T) {
	p := Parse("wiki/a.md", []byte("![d](../raw/assets/d.png) [paper](<My Paper.pdf>) [p](b.md)\n"+
		"[site](https://x.org/a.png) [top](#top) [host](www.example.com) [dir](notes/) ![e](img/e%20f.JPG)\n"))
	var got []string
	for _, l := range p.Links {
		got = append(got, fmt.Sprintf("%s page=%v embed=%v", l.Target, l.IsPageLink(), l.Embed))
	}
	want := "../raw/assets/d.png page=false embed=true,My Paper.pdf page=false embed=false,b.md page=true embed=false,img/e f.JPG page=false embed=true"
	if strings.Join(got, ",") != want {
		t.Errorf("links\n got %s\nwant %s", strings.Join(got, ","), want)
	}
}

func TestParse_FrontmatterLinks(t *testing.T) {
	doc := strings.Join([]string{
		"---",                                     // 1
		"title: Don't [[Stop]]",                   // 2: a link in a string value, the apostrophe opens nothing
		`related: "[[Quoted]]"`,                   // 3
		`see: ["[[a]]", '[[b|B label]]']`,         // 4: flow list items
		"sources: [[unquoted]]",                   // 5: YAML reads a nested list
		"matrix: [[1, 2], [3]]",                   // 6: a real nested list, no link
		"list:",                                   // 7
		"  - \"[[Item One#Part]]\"",               // 8
		"  - plain # [[in a comment]]",            // 9
		"# [[commented out]]",                     // 10
		"\"[[key]]\": value",                      // 11: keys hold no links
		"note: a # b [[after comment]]",           // 12
		"hash: \"# [[inside quotes]]\"",           // 13
		"---",                                     // 14
		"Body [[Body Link]] line 15.",             // 15
		"",                                        // 16
		"[md](Some%20Page.md) and [[Last]] on 17", // 17
	}, "\n") + "\n"
	p := Parse("wiki/x.md", []byte(doc))
	if p.FMError != "" {
		t.Fatalf("frontmatter: %s", p.FMError)
	}
	want := []string{
		"2:Stop@title", "3:Quoted@related", "4:a@see", "4:b@see|B label", "5:unquoted@sources",
		"8:Item One@list", "13:inside quotes@hash",
		"15:Body Link", "17:Some Page.md|md", "17:Last",
	}
	if got := linkSummary(p.Links); strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("links\n got %v\nwant %v", got, want)
	}
	if p.Links[5].Heading != "Part" {
		t.Errorf("heading %q", p.Links[5].Heading)
	}
}

// TestParse_LinkLinesFromTop: link lines count from the top of the file,
// whatever precedes the body.
func TestParse_LinkLinesFromTop(t *testing.T) {
	cases := []struct {
		name, doc string
		line      int
	}{
		{"no frontmatter", "a\n[[T]]\n", 2},
		{"frontmatter", "---\ntitle: x\ntags: [a]\n---\n\n[[T]]\n", 6},
		{"CRLF", "---\r\ntitle: x\r\n---\r\n[[T]]\r\n", 4},
		{"BOM", "\ufeff---\ntitle: x\n---\n[[T]]\n", 4},
		{"empty frontmatter", "---\n---\n[[T]]\n", 3},
		{"broken frontmatter", "---\ntitle: a: b: [\n---\nx\n[[T]]\n", 5},
	}
	for _, c := range cases {
		p := Parse("wiki/x.md", []byte(c.doc))
		if len(p.Links) != 1 || p.Links[0].Line != c.line {
			t.Errorf("%s: links %v, want [[T]] on line %d", c.name, linkSummary(p.Links), c.line)
		}
	}
}

// TestParse_BrokenFrontmatterHasNoFrontmatterLinks: as in Obsidian, a
// frontmatter block that does not parse has no properties, so no links.
func TestParse_BrokenFrontmatterHasNoFrontmatterLinks(t *testing.T) {
	p := Parse("wiki/x.md", []byte("---\ntitle: a: b\nrelated: \"[[X]]\"\n<<<<<<< HEAD\n---\n[[Body]]\n"))
	if p.FMError == "" {
		t.Skip("the frontmatter parser accepts this block")
	}
	if got := linkSummary(p.Links); len(got) != 1 || got[0] != "6:Body" {
		t.Errorf("links %v", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("---\nrelated: [[x]]\nsee: [\"[[y|z]]\"]\n---\n[[a]] [b](c.md)\n")
	f.Add("---\r\ntitle: 'it''s [[q]]' # [[c]]\r\n---\r\n")
	f.Add("[[a]]\n```\n[[b]]\n```\n")
	f.Fuzz(func(t *testing.T, doc string) {
		p := Parse("wiki/f.md", []byte(doc))
		if utf8.ValidString(doc) {
			checkSpans(t, "fuzz", doc, p)
		}
		lines := strings.Count(doc, "\n") + 1
		for _, l := range p.Links {
			if l.Line < 1 || l.Line > lines {
				t.Fatalf("link %q on line %d of a %d-line document", l.Target, l.Line, lines)
			}
			if l.Target == "" {
				t.Fatalf("empty target: %+v", l)
			}
		}
	})
}
