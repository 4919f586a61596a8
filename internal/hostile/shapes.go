// Package hostile builds what a vault from anywhere may hold against
// synapse — page files shaped to make parsing and indexing expensive, and
// damaged store files — for the tests that hold synapse to bounded work
// and for tools/hostile, which measures every verb against them.
//
// Everything here is deterministic: a shape of a given size is the same
// bytes on every run.
package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Shape is one hostile page (or a few pages) dropped into a vault's wiki/.
type Shape struct {
	// Name is short and stable ("long-link").
	Name string
	// What says what the page holds, for tables.
	What string
	// Word is a word the page holds that search should find ("" none).
	Word string
	// Title is what `page get` asks for.
	Title string
	// Files are the files to write, vault-relative, with their bytes.
	Files map[string][]byte
}

// Write writes the shape's files into the vault at root.
func (s Shape) Write(root string) error {
	for rel, data := range s.Files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Bytes is the total size of the shape's files.
func (s Shape) Bytes() int64 {
	var n int64
	for _, d := range s.Files {
		n += int64(len(d))
	}
	return n
}

func page(name, title string, data string, word, what string) Shape {
	return Shape{Name: name, What: what, Word: word, Title: title,
		Files: map[string][]byte{"wiki/" + title + ".md": []byte(data)}}
}

// fill repeats unit until the result is about size bytes (at least once).
func fill(b *strings.Builder, size int, unit func(i int) string) int {
	n := 0
	for i := 0; b.Len() < size || i == 0; i++ {
		b.WriteString(unit(i))
		n++
	}
	return n
}

// Shapes returns every page shape, sized for a page of about size bytes
// where the shape grows with its size (the long names, the lists and the
// links); the shapes the issue measured at a fixed size keep it when size
// is smaller than that.
func Shapes(size int) []Shape {
	long := func(n int) string { return strings.Repeat("a", n) }
	nameLen := max(40<<10, size-256) // a single name as long as the page allows
	var out []Shape
	out = append(out,
		page("long-link", "LongLink", "A link to [["+long(nameLen)+"]] and the word zebu.\n", "zebu",
			fmt.Sprintf("one wikilink target of %d bytes", nameLen)),
		page("long-alias", "LongAlias", "---\naliases: ["+long(nameLen)+"]\n---\nzebu\n", "zebu",
			fmt.Sprintf("one alias of %d bytes", nameLen)),
		page("long-tag", "LongTag", "---\ntags: ["+long(nameLen)+"]\n---\nzebu #b"+long(min(nameLen, 40<<10))+"\n", "zebu",
			fmt.Sprintf("a frontmatter tag of %d bytes and an inline #tag of %d", nameLen, min(nameLen, 40<<10))),
		page("long-source", "LongSource", "---\nsources: ["+long(nameLen)+".md]\n---\nzebu\n", "zebu",
			fmt.Sprintf("one sources entry of %d bytes", nameLen)),
		page("long-title", "LongTitle", "---\ntitle: "+long(nameLen)+"\n---\nzebu\n", "zebu",
			fmt.Sprintf("a frontmatter title of %d bytes", nameLen)),
		page("long-heading-link", "LongHeadingLink", "[[x#"+long(nameLen)+"]] zebu\n", "zebu",
			fmt.Sprintf("a link whose heading is %d bytes", nameLen)),
	)
	for _, levels := range []int{7, 8, 9} {
		out = append(out, page(fmt.Sprintf("alias-bomb-%d", levels), fmt.Sprintf("Bomb%d", levels), aliasBomb(levels)+"zebu\n", "zebu",
			fmt.Sprintf("a YAML alias bomb of %d levels (%d bytes; %.0e values expanded)", levels, len(aliasBomb(levels)), pow9(levels+1))))
	}
	out = append(out,
		listShape("many-aliases", "ManyAliases", "aliases", max(160000, size/19), func(i int) string { return fmt.Sprintf("alias %08d", i) }),
		listShape("many-tags", "ManyTags", "tags", max(100000, size/14), func(i int) string { return fmt.Sprintf("t%08d", i) }),
		listShape("many-sources", "ManySources", "sources", max(100000, size/17), func(i int) string { return fmt.Sprintf("s%08d.md", i) }),
		listShape("big-fm-list", "BigList", "related", max(3<<20, size)/17, func(i int) string { return fmt.Sprintf("item%08d", i) }),
	)
	var b strings.Builder
	b.WriteString("zebu\n")
	n := fill(&b, max(9<<20, size), func(int) string { return "[[Target]] " })
	out = append(out, page("many-links", "ManyLinks", b.String(), "zebu", fmt.Sprintf("%d links to one target", n)))
	b.Reset()
	b.WriteString("zebu\n")
	n = fill(&b, max(200000*16, size), func(i int) string { return fmt.Sprintf("[[m%07d]]\n", i) })
	out = append(out, page("distinct-links", "DistinctLinks", b.String(), "zebu", fmt.Sprintf("%d distinct dangling links", n)))
	b.Reset()
	b.WriteString("zebu\n")
	n = fill(&b, max(1<<20, size), func(i int) string { return fmt.Sprintf("[a](b%d", i) })
	out = append(out, page("unclosed-md-links", "Unclosed", b.String(), "zebu", fmt.Sprintf("%d unclosed markdown links on one line", n)))
	b.Reset()
	b.WriteString("zebu\n")
	n = fill(&b, max(1<<20, size), func(i int) string { return strings.Repeat("`", i+1) + "a" })
	out = append(out, page("backtick-runs", "Backticks", b.String(), "zebu", fmt.Sprintf("%d backtick runs of distinct lengths in one paragraph", n)))
	b.Reset()
	b.WriteString("zebu\n")
	n = fill(&b, max(1<<20, size), func(i int) string { return fmt.Sprintf("w%x ", i*2654435761%(1<<32)) })
	out = append(out, page("distinct-words", "Words", b.String(), "zebu", fmt.Sprintf("%d distinct words", n)))
	b.Reset()
	b.WriteString("zebu\n")
	n = fill(&b, max(1<<20, size), func(i int) string { return fmt.Sprintf("# h%d\n", i) })
	out = append(out, page("many-headings", "Headings", b.String(), "zebu", fmt.Sprintf("%d headings", n)))
	depth := max(1<<20, size) / 2
	out = append(out, page("deep-yaml", "Deep", "---\nx: "+strings.Repeat("[", depth)+strings.Repeat("]", depth)+"\n---\nzebu\n", "zebu",
		fmt.Sprintf("a flow list nested %d deep", depth)))
	out = append(out, page("broken-big-yaml", "BrokenYAML", "---\n"+strings.Repeat("k: v\n", max(1<<20, size)/5)+"bad: [\n---\nzebu\n", "zebu",
		"a large frontmatter that does not parse at its end"))
	return out
}

func pow9(n int) float64 {
	x := 1.0
	for i := 0; i < n; i++ {
		x *= 9
	}
	return x
}

// aliasBomb is a YAML frontmatter whose anchors expand 9^levels-fold.
func aliasBomb(levels int) string {
	var b strings.Builder
	b.WriteString("---\na0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i < levels; i++ {
		ref := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(ref+",", 9), ","))
	}
	b.WriteString("---\n")
	return b.String()
}

func listShape(name, title, key string, n int, item func(i int) string) Shape {
	var b strings.Builder
	b.WriteString("---\n" + key + ":\n")
	for i := 0; i < n; i++ {
		b.WriteString("  - " + item(i) + "\n")
	}
	b.WriteString("---\nzebu\n")
	return page(name, title, b.String(), "zebu", fmt.Sprintf("%d items under %s (%d bytes)", n, key, b.Len()))
}
