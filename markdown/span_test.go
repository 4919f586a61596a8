package markdown

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkSpans fails when a link's Start:End does not hold its target as
// written: the target itself for a wikilink, its escaped form for a
// markdown link.
func checkSpans(t *testing.T, name, doc string, p *Page) {
	t.Helper()
	for _, l := range p.Links {
		if l.Start < 0 || l.End < l.Start || l.End > len(doc) {
			t.Fatalf("%s: link %q span %d:%d out of %d bytes", name, l.Target, l.Start, l.End, len(doc))
		}
		raw := doc[l.Start:l.End]
		got := raw
		if l.Kind == MarkdownLink {
			if u, err := url.PathUnescape(raw); err == nil {
				got = u
			}
		}
		if got != l.Target {
			t.Errorf("%s line %d: span holds %q, target %q", name, l.Line, raw, l.Target)
		}
	}
}

func TestParse_LinkSpans(t *testing.T) {
	for _, doc := range []string{
		"\ufeff---\r\nrelated: \"[[ X | y]]\"\r\nsee: ['[[Z#h]]', \"[[a\\\\|b]]\"]\r\n---\r\n[[T#H|l]] ![[E]] [m](<My Page.md#x>) [n](../a%20b.md)\r\n",
		"| a | [[P\\|label]] |\n[[  spaced  ]] [x](y.md \"t\") [[#local]] `[[code]]`\n",
	} {
		checkSpans(t, "doc", doc, Parse("wiki/x.md", []byte(doc)))
	}
	root := "../testdata/obsidian-help-en"
	n := 0
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		data, _ := os.ReadFile(p)
		pg := Parse(p, data)
		n += len(pg.Links)
		checkSpans(t, p, string(data), pg)
		return nil
	})
	if n < 1000 {
		t.Fatalf("only %d links in the corpus", n)
	}
}
