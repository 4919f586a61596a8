package markdown

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// Lenient recovery of a broken frontmatter block. A block that is not valid
// YAML as a whole (most often a value holding an unquoted ": ", such as
// `summary: Note: read this first`) still usually says plainly what the
// page is called and what it is: its `title:`, `type:`, `aliases:` and
// `tags:` lines are each valid YAML on their own. recoverKeys reads those
// keys one by one, each only where its own lines are valid YAML, so the
// page keeps its title and type; everything else
// about the block stays as it is (kept byte for byte, no keys, the error
// reported).

// recovered holds the keys read from a broken block.
type recovered struct {
	title, typ    string
	aliases, tags []string
}

// recoverLimits bound the work on a broken block: the lines looked at and
// the items kept per list.
const (
	recoverMaxLines = 2000
	recoverMaxItems = 1000
)

// recoverKeys reads the plain top-level title, type, aliases (or alias) and
// tags of a frontmatter text that does not parse as a whole. A key is read
// from its own line and the indented or "- " lines under it, parsed alone;
// a key whose lines do not parse alone (the broken line itself, such as
// `title: Note: read`) is not read: the page falls back as it would without
// it (the title to the file name, the type to the folder's). The first
// occurrence of a key counts. Line endings may be CRLF.
func recoverKeys(text string) recovered {
	var r recovered
	seen := map[string]bool{}
	lines := strings.Split(text, "\n")
	if len(lines) > recoverMaxLines {
		lines = lines[:recoverMaxLines]
	}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSuffix(lines[i], "\r")
		key, ok := topLevelKey(line)
		if !ok || seen[key] {
			continue
		}
		switch key {
		case "title", "type", "aliases", "alias", "tags":
		default:
			continue
		}
		seen[key] = true
		// the key's block: its line and the lines nested under it
		block := []string{line}
		for i+1 < len(lines) {
			next := strings.TrimSuffix(lines[i+1], "\r")
			if next == "" || next[0] != ' ' && next[0] != '\t' && !strings.HasPrefix(next, "- ") && next != "-" {
				break
			}
			block = append(block, next)
			i++
		}
		node := parseKeyBlock(strings.Join(block, "\n"))
		switch key {
		case "title", "type":
			s := scalarText(node)
			if key == "title" {
				r.title = s
			} else {
				r.typ = strings.ToLower(s)
			}
		case "aliases", "alias":
			r.aliases = append(r.aliases, listItems(node)...)
		case "tags":
			r.tags = append(r.tags, listItems(node)...)
		}
	}
	return r
}

// topLevelKey is the key of a "key: value" line that starts at column 0
// (a plain or quoted key).
func topLevelKey(line string) (key string, ok bool) {
	if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' || line[0] == '-' {
		return "", false
	}
	c := keyEnd(line)
	if c <= 0 {
		return "", false
	}
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(line[:c]), `"'`)), true
}

// parseKeyBlock parses one key's lines as YAML and returns the value node
// (nil when they do not parse alone).
func parseKeyBlock(text string) *yaml.Node {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(text), &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode || len(m.Content) < 2 {
		return nil
	}
	return m.Content[1]
}

// scalarText is a scalar node's value ("" for anything else).
func scalarText(n *yaml.Node) string {
	if n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() != "!!null" {
		return strings.TrimSpace(n.Value)
	}
	return ""
}

// listItems reads a list value: a sequence of scalars, or one scalar
// split on commas.
func listItems(n *yaml.Node) []string {
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" && len(out) < recoverMaxItems {
			out = append(out, s)
		}
	}
	switch {
	case n == nil:
	case n.Kind == yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind == yaml.ScalarNode && c.ShortTag() != "!!null" {
				add(c.Value)
			}
		}
	case n.Kind == yaml.ScalarNode && n.ShortTag() != "!!null":
		for _, p := range strings.Split(n.Value, ",") {
			add(p)
		}
	}
	return out
}
