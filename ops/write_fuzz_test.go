package ops

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
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
		if windowsDevices[s] {
			t.Fatalf("Slug(%q) = %q, a name Windows reserves", title, s)
		}
		if Slug(s) != s {
			t.Fatalf("Slug is not stable: %q → %q → %q", title, s, Slug(s))
		}
	})
}

// FuzzWritePage_RoundTrip: whatever a page file holds (frontmatter of any
// shape, broken YAML, CRLF, a BOM), writing back what get_page returned
// (content and frontmatter, as MCP and REST callers do, or the text the
// CLI prints) changes nothing.
func FuzzWritePage_RoundTrip(f *testing.F) {
	for _, s := range []string{
		"---\ntitle: A\ntags: [x, Y]\ncreated: 2024-01-05\nupdated: \"2024-02-01\"\n---\nBody [[B]].\n",
		"---\ntitle: Foo: bar\n---\nbroken\n",
		"\ufeff---\r\ntitle: 'q'\r\nsources:\r\n  - [[x]]\r\n  - Smith: Title\r\n---\r\nCRLF\r\n",
		"no frontmatter",
		"---\nrelated: [[a]]\nn: 12345678901234567890\nf: 1.50\nz: ~\nm: {a: [1, 2]}\n---\n",
		"---\n# comment\nalias: One\ntype: Question\nlast_updated: 2024-01-01 10:00\n---\nx",
	} {
		f.Add(s)
	}
	v := testvault.New(f)
	e, _ := openEnv(f, v)
	const p = "wiki/fuzz.md"
	f.Fuzz(func(t *testing.T, file string) {
		if !utf8.ValidString(file) || strings.ContainsRune(file, 0) || len(file) > 64<<10 {
			return
		}
		testvault.Write(t, v, p, file)
		if _, err := e.Index.Scan(context.Background(), index.ScanOptions{Paths: []string{p}}); err != nil {
			t.Fatal(err)
		}
		g, err := getPage(context.Background(), e, &GetPageIn{Title: p})
		if err != nil {
			t.Fatalf("get_page: %v", err)
		}
		raw, _ := json.Marshal(g.Frontmatter)
		var fm map[string]any
		if err := json.Unmarshal(raw, &fm); err != nil {
			t.Fatal(err)
		}
		out, err := WritePage(context.Background(), e, &WritePageIn{Title: p, Content: g.Content, Frontmatter: fm})
		if err != nil {
			if strings.TrimSpace(g.Content) == "" && errs.CodeOf(err) == errs.Invalid {
				return // an empty body cannot be written (nothing to send)
			}
			t.Fatalf("writing back %q: %v", file, err)
		}
		if !out.Unchanged || readFile(t, v, p) != file {
			t.Fatalf("writing back %q changed it to %q", file, readFile(t, v, p))
		}
		// the text `page get` prints on a pipe (cmd_page.go), piped back
		text := g.Content
		if y, _ := g.Frontmatter.YAML(); y != "" || strings.HasPrefix(text, "---") {
			text = "---\n" + y + "---\n" + text
		}
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		out, err = WritePage(context.Background(), e, &WritePageIn{Title: p, Content: text})
		if err != nil {
			t.Fatalf("piping back %q as %q: %v", file, text, err)
		}
		if !out.Unchanged || readFile(t, v, p) != file {
			t.Fatalf("piping back %q as %q changed it to %q", file, text, readFile(t, v, p))
		}
	})
}
