package markdown

import (
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// parseSimpleYAML parses the frontmatter most pages have — `key: plain
// value`, `key: [a, b]` and `key:` followed by `- item` lines — without
// the general YAML parser, which costs more than the rest of a page's
// parse. It builds the same node tree yaml.v3 would (plain scalars carry
// no tag and resolve the same way), and declines (ok false) anything else:
// comments, quotes, anchors, block scalars, nested maps, duplicate keys.
// A fuzz test holds it to yaml.v3's result.
func parseSimpleYAML(text string) (*yaml.Node, bool) {
	if !utf8.ValidString(text) {
		return nil, false
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	seen := map[string]bool{}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) == 1 && strings.TrimSpace(lines[0]) == "" {
		return nil, false // empty: the general path says what empty means
	}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSuffix(lines[i], "\r")
		if line == "" || line[0] == ' ' || line[0] == '\t' {
			return nil, false
		}
		colon := strings.IndexByte(line, ':')
		if colon <= 0 {
			return nil, false
		}
		key := line[:colon]
		if !simpleKey(key) || seen[key] {
			return nil, false
		}
		seen[key] = true
		keyLine := i + 1
		rest := line[colon+1:]
		var val *yaml.Node
		switch {
		case rest == "" || strings.TrimSpace(rest) == "":
			if strings.TrimSpace(rest) != rest && rest != "" {
				return nil, false // trailing blanks: let the real parser decide
			}
			// a block sequence, or null
			seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			indent := -1
			for i+1 < len(lines) {
				next := strings.TrimSuffix(lines[i+1], "\r")
				trimmed := strings.TrimLeft(next, " ")
				ind := len(next) - len(trimmed)
				if !strings.HasPrefix(trimmed, "- ") {
					break
				}
				if indent >= 0 && ind != indent {
					return nil, false
				}
				indent = ind
				item := trimmed[2:]
				if !plainScalar(item) {
					return nil, false
				}
				seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: item})
				i++
			}
			if len(seq.Content) == 0 {
				val = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
			} else {
				val = seq
			}
		case rest[0] != ' ':
			return nil, false
		default:
			v := rest[1:]
			if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
				seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
				inner := v[1 : len(v)-1]
				if strings.TrimSpace(inner) != "" {
					for _, part := range strings.Split(inner, ",") {
						item := strings.TrimSpace(part)
						if !plainScalar(item) || strings.ContainsAny(item, "[]{},") {
							return nil, false
						}
						seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: item})
					}
				}
				val = seq
			} else {
				if !plainScalar(v) {
					return nil, false
				}
				val = &yaml.Node{Kind: yaml.ScalarNode, Value: v}
			}
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: keyLine, Column: 1}, val)
	}
	return m, true
}

// simpleKey accepts keys of up to 128 letters, digits, '_' and '-'
// (starting with a letter or '_'); YAML caps implicit keys at 1024.
func simpleKey(k string) bool {
	if len(k) > 128 {
		return false
	}
	for i, r := range k {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
		case i > 0 && (r >= '0' && r <= '9' || r == '-'):
		default:
			return false
		}
	}
	return k != ""
}

// plainScalar accepts a value that YAML reads as a plain scalar holding
// exactly these characters: no indicator at its start, no ": " or " #"
// inside, no surrounding blanks, nothing but printable text.
func plainScalar(v string) bool {
	if v == "" || v != strings.TrimSpace(v) {
		return false
	}
	switch v[0] {
	case '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', '#', ',', '?', ':', '-', '<', '=', '~':
		return false
	}
	if strings.Contains(v, ": ") || strings.Contains(v, " #") || strings.HasSuffix(v, ":") || strings.Contains(v, "\t") {
		return false
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f || r == 0xfeff || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}
