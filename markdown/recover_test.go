package markdown

import (
	"slices"
	"strings"
	"testing"
)

// TestParse_BrokenFrontmatterKeepsPlainKeys: a block that is not valid YAML
// (an unquoted ": " in summary, conflict markers) still gives the page the
// title, type, aliases and tags its own lines say plainly, with a BOM, with
// CRLF line endings, and with the keys after the broken line; the error is
// still reported and no other key is read.
func TestParse_BrokenFrontmatterKeepsPlainKeys(t *testing.T) {
	const block = "---\ntitle: Cluster-Aware Updating\ntype: Topic\nsummary: Note: read this first\naliases: [CAU, \"Cluster updating\"]\ntags:\n  - windows\n  - ops\n---\n# Body\n"
	for _, c := range []struct {
		name, doc string
	}{
		{"plain", block},
		{"bom", "\ufeff" + block},
		{"crlf", strings.ReplaceAll(block, "\n", "\r\n")},
		{"bom and crlf", "\ufeff" + strings.ReplaceAll(block, "\n", "\r\n")},
		{"broken line first", strings.Replace(block, "title: Cluster-Aware Updating\ntype: Topic\nsummary: Note: read this first\n", "summary: Note: read this first\ntitle: Cluster-Aware Updating\ntype: Topic\n", 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Parse("wiki/concepts/cau.md", []byte(c.doc))
			if p.FMError == "" {
				t.Fatal("the block parsed; the test needs a broken one")
			}
			if p.Title != "Cluster-Aware Updating" || p.Type != "topic" {
				t.Errorf("title %q type %q", p.Title, p.Type)
			}
			if !slices.Equal(p.Aliases, []string{"CAU", "Cluster updating"}) {
				t.Errorf("aliases %q", p.Aliases)
			}
			if !slices.Equal(p.Tags, []string{"windows", "ops"}) {
				t.Errorf("tags %q", p.Tags)
			}
			if p.Frontmatter.Len() != 0 || p.Frontmatter.Raw() == "" {
				t.Errorf("the broken block must be kept as text with no keys: %d keys", p.Frontmatter.Len())
			}
		})
	}
}

// TestRecoverKeys covers the value forms read from a broken block.
func TestRecoverKeys(t *testing.T) {
	for _, c := range []struct {
		text    string
		title   string
		typ     string
		aliases []string
	}{
		{"title: A: B\nx: [\n", "", "", nil},
		{"title: \"Quoted: yes\"\nbad: a: b\n", "Quoted: yes", "", nil},
		{"title: 'It''s'\nbad: a: b\n", "It's", "", nil},
		{"title: T # a comment\nbad: a: b\n", "T", "", nil},
		{"title: T\ntitle: Second\nbad: a: b\n", "T", "", nil},
		{"  title: indented\nbad: a: b\n", "", "", nil},
		{"aliases:\n- one\n- two\nbad: a: b\n", "", "", []string{"one", "two"}},
		{"alias: one, two\nbad: a: b\n", "", "", []string{"one", "two"}},
		{"type: entity\nbad: a: b\n", "", "entity", nil},
		{"type:\nbad: a: b\n", "", "", nil},
	} {
		r := recoverKeys(c.text)
		if r.title != c.title || r.typ != c.typ || !slices.Equal(r.aliases, c.aliases) {
			t.Errorf("%q: title %q type %q aliases %q", c.text, r.title, r.typ, r.aliases)
		}
	}
}
