package ops

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/vault"
)

// FuzzSlug: a slug is a usable, stable file name for any title.
func FuzzSlug(f *testing.F) {
	for _, s := range []string{"Café au lait", "C++ / C#", "../../etc", "東京", "a\x00b", "---", "Ⅻ", strings.Repeat("é", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, title string) {
		s := Slug(title)
		if s == "" || len(s) > 120 || !utf8.ValidString(s) {
			t.Fatalf("Slug(%q) = %q", title, s)
		}
		if strings.ContainsAny(s, "/\\.\x00 ") || strings.HasPrefix(s, "-") || strings.HasSuffix(s, "-") {
			t.Fatalf("Slug(%q) = %q is not a plain file name", title, s)
		}
		if Slug(s) != s {
			t.Fatalf("Slug is not stable: %q → %q → %q", title, s, Slug(s))
		}
	})
}

// FuzzCatalogLinks: whenever the write path vouches for the links of a
// catalogue (exact), they are what the scanner stores after parsing the
// whole file, and the file has no tags.
func FuzzCatalogLinks(f *testing.F) {
	f.Add("Alan Turing (mathematician)", "wiki/entities/alan-turing.md", "C# [draft] | 50%", "wiki/x/c.md", "person")
	f.Add("`code` title", "wiki/a b/%%x.md", "<!-- x", "wiki/y.md", "#tag")
	f.Add("a #tag", "wiki/t.md", "[[x]]", "wiki/[[x]].md", "t")
	f.Fuzz(func(t *testing.T, t1, p1, t2, p2, typ string) {
		var b bytes.Buffer
		b.WriteString(indexHeader)
		b.WriteString("\n## Concepts (2)\n\n")
		for _, e := range [][2]string{{t1, p1}, {t2, p2}} {
			p := vault.WikiDir + "/" + strings.TrimPrefix(e[1], "/") + ".md"
			if !utf8.ValidString(e[0]) || !utf8.ValidString(p) || strings.ContainsAny(e[0]+p, "\r\n") {
				t.Skip()
			}
			catalogLine(&b, e[0], p)
		}
		b.WriteString("\n## " + oneLine(typ) + " (0)\n\n")
		data := b.Bytes()
		links, exact := catalogLinks(data)
		if !exact {
			return
		}
		parsed := markdown.Parse(vault.IndexPage, data)
		if len(parsed.Tags) > 0 {
			t.Fatalf("exact catalogue has tags %v:\n%s", parsed.Tags, data)
		}
		want := index.LinkRecs(parsed.Links)
		if len(want) == 0 && len(links) == 0 {
			return
		}
		if !reflect.DeepEqual(links, want) {
			t.Fatalf("links\n%+v\nscanner\n%+v\nfile:\n%s", links, want, data)
		}
	})
}
