package embed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/markdown"
)

// FuzzChunkPage: whatever a page holds, ChunkPage returns at least one
// chunk; every chunk's text starts with the title (or the heading path
// that repeats it), is valid UTF-8 when the page is, and holds at most
// MaxChunkBytes (plus a joined short tail) of section text after its head
// line; cutting is deterministic, and keys do not depend on the title (a
// renamed page keeps them). Seeds: pages of the Obsidian Help vault and
// hand-made edge cases.
func FuzzChunkPage(f *testing.F) {
	for _, s := range []string{
		"",
		"---\ntags: [x]\n---\n",
		"# T\n\n## A\n\n### B\n\ntext\n",
		"#\n##\n# \n#nospace\n",
		"```\n# not a heading\n```\n# Real\nbody",
		"# " + strings.Repeat("é", 300) + "\n" + strings.Repeat("word ", 400),
		strings.Repeat("x", 2000),
		"| a | b |\n|---|---|\n| [[L|label]] | ![[img.png]] |\n",
		"<!-- c -->%% hidden %%\n> [!warning]+ Title\n> text\n",
		"# A\n\xff\xfe invalid \xc3\n",
		strings.Repeat("\x80", 2000),
	} {
		f.Add("Title", s)
	}
	corpus := testvault.CorpusDir()
	n := 0
	_ = filepath.WalkDir(corpus, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") || n >= 20 {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil {
			f.Add(strings.TrimSuffix(d.Name(), ".md"), string(data))
			n++
		}
		return nil
	})
	f.Fuzz(func(t *testing.T, title, doc string) {
		if strings.TrimSpace(title) == "" || strings.ContainsAny(title, "\n\r") {
			return // a page's title is one non-empty line
		}
		pg := markdown.Parse(title+".md", []byte(doc))
		cs := ChunkPage(title, pg)
		if len(cs) == 0 {
			t.Fatal("no chunk")
		}
		again := ChunkPage(title, markdown.Parse(title+".md", []byte(doc)))
		renamed := ChunkPage("Other "+title, pg)
		if len(again) != len(cs) || len(renamed) != len(cs) {
			t.Fatalf("%d chunks, %d the second time, %d renamed", len(cs), len(again), len(renamed))
		}
		for i, c := range cs {
			if c != again[i] {
				t.Fatalf("chunk %d differs the second time: %+v vs %+v", i, c, again[i])
			}
			if i < len(cs)-1 || len(cs) > 1 || pg.Body != "" || c.Heading != "" {
				// (an empty page's one chunk is keyed by its title)
				if renamed[i].Key != c.Key && !(len(cs) == 1 && strings.TrimSpace(c.Text) == title) {
					t.Fatalf("chunk %d: key changes with the title", i)
				}
			}
			head, body, _ := strings.Cut(c.Text, "\n")
			if !strings.HasPrefix(head, title) && !strings.HasPrefix(strings.ToLower(head), strings.ToLower(strings.SplitN(c.Heading, " > ", 2)[0])) {
				t.Fatalf("chunk %d starts %q, not with the title %q or its heading path %q", i, head, title, c.Heading)
			}
			if len(body) > MaxChunkBytes+minPieceBytes+1 {
				t.Fatalf("chunk %d holds %d bytes of text", i, len(body))
			}
			if utf8.ValidString(title) && utf8.ValidString(doc) && !utf8.ValidString(c.Text) {
				t.Fatalf("chunk %d is not valid UTF-8: %q", i, c.Text)
			}
			if strings.TrimSpace(c.Text) == "" {
				t.Fatalf("chunk %d is empty", i)
			}
		}
	})
}

// TestSplit_NoRuneStart: text in which no rune starts (invalid UTF-8) is
// still cut into bounded pieces (split once looped forever on it).
func TestSplit_NoRuneStart(t *testing.T) {
	done := make(chan []string)
	go func() { done <- split(strings.Repeat("\x80", 2000), MaxChunkBytes) }()
	select {
	case ps := <-done:
		total := 0
		for _, p := range ps {
			if len(p) > MaxChunkBytes+minPieceBytes+1 {
				t.Errorf("piece of %d bytes", len(p))
			}
			total += len(p)
		}
		if total != 2000 {
			t.Errorf("pieces hold %d of 2000 bytes", total)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("split did not return")
	}
}
