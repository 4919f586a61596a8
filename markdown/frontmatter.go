package markdown

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Frontmatter is a page's YAML frontmatter kept as an ordered mapping, so
// that a rewrite keeps every key (known or not) in its original order.
// The zero value is an empty mapping.
type Frontmatter struct {
	node *yaml.Node // a MappingNode; nil means empty
}

// ParseFrontmatter parses YAML text (without the --- fences). Empty text
// gives an empty mapping; anything but a mapping is an error.
func ParseFrontmatter(text string) (*Frontmatter, error) {
	if n, ok := parseSimpleYAML(text); ok {
		return &Frontmatter{node: n}, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("frontmatter: %w", cleanYAMLError(err))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return &Frontmatter{}, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return &Frontmatter{}, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("frontmatter: expected key: value pairs, found a %s", kindName(root.Kind))
	}
	return &Frontmatter{node: root}, nil
}

func cleanYAMLError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	return fmt.Errorf("%s", msg)
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "single value"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

// Keys returns the keys in order.
func (f *Frontmatter) Keys() []string {
	if f == nil || f.node == nil {
		return nil
	}
	keys := make([]string, 0, len(f.node.Content)/2)
	for i := 0; i+1 < len(f.node.Content); i += 2 {
		keys = append(keys, f.node.Content[i].Value)
	}
	return keys
}

// Len returns the number of keys.
func (f *Frontmatter) Len() int {
	if f == nil || f.node == nil {
		return 0
	}
	return len(f.node.Content) / 2
}

func (f *Frontmatter) lookup(key string) *yaml.Node {
	if f == nil || f.node == nil {
		return nil
	}
	for i := 0; i+1 < len(f.node.Content); i += 2 {
		if f.node.Content[i].Value == key {
			return f.node.Content[i+1]
		}
	}
	return nil
}

// Has reports whether key is present.
func (f *Frontmatter) Has(key string) bool { return f.lookup(key) != nil }

// String returns a scalar value as text ("" when absent or not a scalar).
func (f *Frontmatter) String(key string) string {
	n := f.lookup(key)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return ""
	}
	return strings.TrimSpace(n.Value)
}

// List returns a value as a list of strings: a YAML sequence of scalars,
// or a single scalar (split on commas when split is true). Empty items are
// dropped.
func (f *Frontmatter) List(key string, split bool) []string {
	n := f.lookup(key)
	if n == nil {
		return nil
	}
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind == yaml.ScalarNode && c.ShortTag() != "!!null" {
				add(c.Value)
			}
		}
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return nil
		}
		if split {
			for _, p := range strings.Split(n.Value, ",") {
				add(p)
			}
		} else {
			add(n.Value)
		}
	}
	return out
}

// Value decodes the value of key into a plain Go value (nil when absent).
func (f *Frontmatter) Value(key string) any {
	n := f.lookup(key)
	if n == nil {
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return n.Value
	}
	return jsonable(v)
}

// Set sets key to value (any YAML-encodable value), keeping the key's
// position when it exists and appending it otherwise.
func (f *Frontmatter) Set(key string, value any) error {
	var vn yaml.Node
	if err := vn.Encode(value); err != nil {
		return fmt.Errorf("frontmatter %s: %w", key, err)
	}
	if f.node == nil {
		f.node = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	if n := f.lookup(key); n != nil {
		*n = vn
		return nil
	}
	f.node.Content = append(f.node.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, &vn)
	return nil
}

// Delete removes key if present.
func (f *Frontmatter) Delete(key string) {
	if f == nil || f.node == nil {
		return
	}
	c := f.node.Content
	for i := 0; i+1 < len(c); i += 2 {
		if c[i].Value == key {
			f.node.Content = append(c[:i:i], c[i+2:]...)
			return
		}
	}
}

// Clone returns a deep copy.
func (f *Frontmatter) Clone() *Frontmatter {
	if f == nil || f.node == nil {
		return &Frontmatter{}
	}
	return &Frontmatter{node: cloneNode(f.node)}
}

func cloneNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = cloneNode(x)
	}
	return &c
}

// YAML renders the mapping as YAML text ending in a newline ("" when
// empty).
func (f *Frontmatter) YAML() (string, error) {
	if f.Len() == 0 {
		return "", nil
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(f.node); err != nil {
		return "", err
	}
	_ = enc.Close()
	return buf.String(), nil
}

// MarshalJSON renders the mapping as a JSON object with keys in order.
func (f *Frontmatter) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range f.Keys() {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := json.Marshal(f.Value(k))
		if err != nil {
			vb = []byte("null")
		}
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// jsonable converts YAML-decoded maps with non-string keys into
// JSON-encodable ones, recursively.
func jsonable(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = jsonable(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = jsonable(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = jsonable(x)
		}
		return t
	}
	return v
}

// SplitFrontmatter splits a document into its frontmatter text (between
// the --- fences, without them), the body, and whether a frontmatter block
// was present. A document whose first line is "---" but has no closing
// fence has no frontmatter.
func SplitFrontmatter(doc string) (fm, body string, ok bool) {
	s := strings.TrimPrefix(doc, "\ufeff")
	if !strings.HasPrefix(s, "---") {
		return "", doc, false
	}
	first, rest, found := strings.Cut(s, "\n")
	if !found || strings.TrimRight(first, " \t\r") != "---" {
		return "", doc, false
	}
	off := 0
	for {
		line, after, more := strings.Cut(rest[off:], "\n")
		t := strings.TrimRight(line, " \t\r")
		if t == "---" || t == "..." {
			return rest[:off], after, true
		}
		if !more {
			return "", doc, false
		}
		off += len(line) + 1
	}
}
