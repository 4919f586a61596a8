package markdown

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Frontmatter is a page's YAML frontmatter kept as an ordered mapping, so
// that a rewrite keeps every key (known or not) in its original order.
//
// A Frontmatter parsed from text remembers that text: YAML returns it
// byte for byte while nothing changed, and after a change it re-encodes
// only the keys that were set, keeping every other key's lines (quoting,
// comments, flow or block lists, CRLF line endings) exactly as written.
// Text that is not valid YAML can be kept too (KeepFrontmatter): it has
// no keys, Err says why, and YAML returns it unchanged.
//
// The zero value is an empty mapping.
type Frontmatter struct {
	node *yaml.Node // a MappingNode; nil means empty

	src     string          // the text it was parsed from ("" when built in code)
	err     error           // why src is not valid YAML (node is nil then)
	errLine int             // 1-based line of err within src (0 unknown)
	spans   []keySpan       // per original key, in src order; nil: src cannot be spliced
	pre     string          // src before the first key (comments, blank lines)
	dirty   map[string]bool // keys set or deleted since parsing
	crlf    bool            // src uses CRLF line endings
}

// keySpan is where one key of the parsed text lives: its lines, and the
// comment or blank lines after it (which belong to whatever follows).
type keySpan struct {
	key       string
	text, gap string
}

// ParseFrontmatter parses YAML text (without the --- fences). Empty text
// gives an empty mapping; anything but a mapping is an error. The error
// message starts with "line N: " when the line is known (N counts lines
// of text from 1).
func ParseFrontmatter(text string) (*Frontmatter, error) {
	f := KeepFrontmatter(text)
	if f.err != nil {
		return nil, f.err
	}
	return f, nil
}

// KeepFrontmatter parses text like ParseFrontmatter but never fails: text
// that is not a valid YAML mapping gives a Frontmatter without keys whose
// Err says why and whose YAML is text itself, so a page that a human
// broke can be rewritten without losing (or "fixing") its frontmatter.
// Text past DefaultLimits (too long, too many values once its YAML
// aliases are expanded) is kept the same way, unread.
func KeepFrontmatter(text string) *Frontmatter { return keepFrontmatter(text, DefaultLimits) }

// capError is why a frontmatter within the YAML rules is kept unread: it
// goes past a limit.
type capError struct{ limit, msg string }

func (e *capError) Error() string { return "frontmatter: " + e.msg }

func keepFrontmatter(text string, lim Limits) *Frontmatter {
	f := &Frontmatter{src: text, crlf: strings.Contains(text, "\r\n")}
	if len(text) > lim.FrontmatterBytes {
		f.err = &capError{"frontmatter_bytes", fmt.Sprintf("a frontmatter of %d bytes (over %d) is not read; the page is indexed by its file name and body", len(text), lim.FrontmatterBytes)}
		return f
	}
	if n, ok := parseSimpleYAML(text); ok {
		f.node = n
		if err := withinValues(n, lim); err != nil {
			f.node, f.err = nil, err
			return f
		}
		f.index()
		return f
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		f.errLine, f.err = yamlError(text, err)
		return f
	}
	if err := withinValues(&doc, lim); err != nil {
		f.err = err
		return f
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return f
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return f
	}
	if root.Kind != yaml.MappingNode {
		f.err, f.errLine = fmt.Errorf("frontmatter: line %d: expected key: value pairs, found a %s", root.Line, kindName(root.Kind)), root.Line
		return f
	}
	f.node = root
	f.index()
	return f
}

var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): `) })

// yamlError turns a yaml.v3 error into "frontmatter: line N: message",
// finding the line when yaml.v3 does not say it (the first line at which
// the text stops parsing).
func yamlError(text string, err error) (int, error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLineRE().FindStringSubmatch(msg); m != nil {
		// yaml.v3 often names the line where the enclosing mapping
		// starts, not the line at fault
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	// the first line at which the text stops parsing, within the first
	// 500 lines and 4 MiB of parsing
	lines := strings.SplitAfter(text, "\n")
	size, spent := 0, 0
	for k := 1; k <= len(lines) && k <= 500; k++ {
		size += len(lines[k-1])
		if spent += size; spent > 4<<20 {
			break
		}
		var doc yaml.Node
		if yaml.Unmarshal([]byte(text[:size]), &doc) != nil {
			line = k
			break
		}
	}
	if line > 0 {
		return line, fmt.Errorf("frontmatter: line %d: %s", line, msg)
	}
	return 0, fmt.Errorf("frontmatter: %s", msg)
}

// index records where each top-level key's lines are in src, when the
// text is a block mapping whose keys each start a line.
func (f *Frontmatter) index() {
	c := f.node.Content
	if f.src == "" || len(c) == 0 || f.node.Style&yaml.FlowStyle != 0 {
		return
	}
	// line start offsets
	starts := []int{0}
	for i := 0; i < len(f.src); i++ {
		if f.src[i] == '\n' && i+1 < len(f.src) {
			starts = append(starts, i+1)
		}
	}
	prev := 0
	var offs []int
	for i := 0; i+1 < len(c); i += 2 {
		k := c[i]
		if k.Column != 1 || k.Line <= prev || k.Line > len(starts) {
			return
		}
		prev = k.Line
		offs = append(offs, starts[k.Line-1])
	}
	f.pre = f.src[:offs[0]]
	spans := make([]keySpan, len(offs))
	for i, from := range offs {
		to := len(f.src)
		if i+1 < len(offs) {
			to = offs[i+1]
		}
		text := f.src[from:to]
		// trailing comment and blank lines at column 0 are the gap
		cut := len(text)
		for cut > 0 {
			j := strings.LastIndexByte(text[:cut-1], '\n') + 1 // start of the last line before cut
			if j == 0 {
				break // never the key's own line
			}
			l := strings.TrimRight(text[j:cut], "\r\n")
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
				break
			}
			cut = j
		}
		spans[i] = keySpan{key: c[2*i].Value, text: text[:cut], gap: text[cut:]}
	}
	f.spans = spans
}

// Err reports why the text a Frontmatter was kept from is not valid YAML
// (nil when it is). The message starts with "line N: " when known.
func (f *Frontmatter) Err() error {
	if f == nil {
		return nil
	}
	return f.err
}

// ErrLine is the 1-based line of Err within the frontmatter text (0 when
// unknown or no error).
func (f *Frontmatter) ErrLine() int {
	if f == nil {
		return 0
	}
	return f.errLine
}

// Raw returns the text the Frontmatter was parsed or kept from ("" when
// built in code).
func (f *Frontmatter) Raw() string {
	if f == nil {
		return ""
	}
	return f.src
}

// Modified reports whether a key was set or deleted since parsing.
func (f *Frontmatter) Modified() bool { return f != nil && len(f.dirty) > 0 }

// CRLF reports whether the text uses CRLF line endings.
func (f *Frontmatter) CRLF() bool { return f != nil && f.crlf }

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

// Node returns a copy of key's value node (nil when absent), for callers
// that keep a value's YAML style (quoting, flow or block) while changing
// it.
func (f *Frontmatter) Node(key string) *yaml.Node {
	n := f.lookup(key)
	if n == nil {
		return nil
	}
	return cloneNode(n)
}

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

// Value returns the value of key as a plain Go value (nil when absent):
// strings, int64 or float64 numbers, bools, nil, []any and map[string]any.
// A date or timestamp is the string as written ("2026-01-05"), so a value
// read here and given back to a writer compares equal to the file's.
func (f *Frontmatter) Value(key string) any {
	n := f.lookup(key)
	if n == nil {
		return nil
	}
	return plainValue(n, 0)
}

// plainValue converts a node to a JSON-ready value (see Value).
func plainValue(n *yaml.Node, depth int) any {
	if depth > 64 {
		return nil
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias != nil {
			return plainValue(n.Alias, depth+1)
		}
		return nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, plainValue(c, depth+1))
		}
		return out
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Value == "<<" && k.ShortTag() == "!!merge" {
				if m, ok := plainValue(n.Content[i+1], depth+1).(map[string]any); ok {
					for mk, mv := range m {
						if _, set := out[mk]; !set {
							out[mk] = mv
						}
					}
				}
				continue
			}
			out[k.Value] = plainValue(n.Content[i+1], depth+1)
		}
		return out
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil
		case "!!bool":
			var b bool
			if n.Decode(&b) == nil {
				return b
			}
		case "!!int":
			// beyond 2^53 a JSON reader loses digits: such an int is its
			// text, so a value read and given back still compares equal
			var i int64
			if n.Decode(&i) == nil && i <= 1<<53 && i >= -(1<<53) {
				return i
			}
		case "!!float":
			var x float64
			if n.Decode(&x) == nil && !math.IsInf(x, 0) && !math.IsNaN(x) {
				return x
			}
		}
		return n.Value
	}
	return nil
}

// PlainValue converts a YAML node to the plain value Value would give.
func PlainValue(n *yaml.Node) any { return plainValue(n, 0) }

// Same reports whether key holds v: a *yaml.Node, or a value decoded from
// JSON (or given in code), compared as JSON; json.Number values compare
// exactly as integers, else as float64 (numbers.go). A key that is absent is the
// same as nothing but... nothing: Same is false for an absent key.
func (f *Frontmatter) Same(key string, v any) bool {
	n := f.lookup(key)
	if n == nil {
		return false
	}
	if hasNumber(v) {
		return sameNode(n, v, 0) // json.Number leaves: exact integers (numbers.go)
	}
	return SameValue(plainValue(n, 0), v)
}

// SameValue reports whether two values are equal as JSON (a *yaml.Node is
// first converted as Value does).
func SameValue(a, b any) bool {
	if n, ok := a.(*yaml.Node); ok {
		a = plainValue(n, 0)
	}
	if n, ok := b.(*yaml.Node); ok {
		b = plainValue(n, 0)
	}
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// Set sets key to value (any YAML-encodable value, or a *yaml.Node used
// as is), keeping the key's position when it exists and appending it
// otherwise. A json.Number in value is written with its digits as given.
func (f *Frontmatter) Set(key string, value any) error {
	var vn yaml.Node
	if n, ok := value.(*yaml.Node); ok {
		vn = *cloneNode(n)
	} else if err := vn.Encode(yamlValue(value)); err != nil {
		return fmt.Errorf("frontmatter %s: %w", key, err)
	}
	if f.node == nil {
		f.node = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	f.mark(key)
	if n := f.lookup(key); n != nil {
		*n = vn
		return nil
	}
	f.node.Content = append(f.node.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, &vn)
	return nil
}

func (f *Frontmatter) mark(key string) {
	if f.dirty == nil {
		f.dirty = map[string]bool{}
	}
	f.dirty[key] = true
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
			f.mark(key)
			return
		}
	}
}

// Clone returns a deep copy.
func (f *Frontmatter) Clone() *Frontmatter {
	if f == nil {
		return &Frontmatter{}
	}
	c := *f
	if f.node != nil {
		c.node = cloneNode(f.node)
	}
	c.spans = append([]keySpan(nil), f.spans...)
	c.dirty = nil
	if len(f.dirty) > 0 {
		c.dirty = make(map[string]bool, len(f.dirty))
		for k := range f.dirty {
			c.dirty[k] = true
		}
	}
	return &c
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
// empty). Parsed text that nothing changed is returned as it was; after a
// change, keys that were not set keep their original lines and only the
// keys that were set are encoded anew (see Frontmatter). Kept text that is
// not valid YAML is returned as it was.
func (f *Frontmatter) YAML() (string, error) {
	if f == nil {
		return "", nil
	}
	if f.err != nil && len(f.dirty) > 0 {
		return "", fmt.Errorf("the frontmatter is not valid YAML (%v); its keys cannot be changed", f.err)
	}
	if f.src != "" && len(f.dirty) == 0 {
		return f.src, nil
	}
	if f.Len() == 0 {
		return "", nil
	}
	if f.spans == nil {
		return encodeNode(f.node)
	}
	var b strings.Builder
	b.WriteString(f.pre)
	orig := make(map[string]bool, len(f.spans))
	for _, sp := range f.spans {
		orig[sp.key] = true
		if n := f.lookup(sp.key); n != nil {
			if !f.dirty[sp.key] {
				b.WriteString(sp.text)
			} else if err := f.encodeKey(&b, sp.key, n); err != nil {
				return "", err
			}
		}
		b.WriteString(sp.gap)
	}
	c := f.node.Content
	for i := 0; i+1 < len(c); i += 2 {
		if !orig[c[i].Value] {
			if err := f.encodeKey(&b, c[i].Value, c[i+1]); err != nil {
				return "", err
			}
		}
	}
	return b.String(), nil
}

// encodeKey writes one key: value pair as YAML, in the text's line endings.
func (f *Frontmatter) encodeKey(b *strings.Builder, key string, v *yaml.Node) error {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v}}
	s, err := encodeNode(m)
	if err != nil {
		return err
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteString(f.newline())
	}
	if f.crlf {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	b.WriteString(s)
	return nil
}

func (f *Frontmatter) newline() string {
	if f.crlf {
		return "\r\n"
	}
	return "\n"
}

func encodeNode(n *yaml.Node) (string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
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

// SplitFrontmatter splits a document into its frontmatter text (between
// the --- fences, without them), the body, and whether a frontmatter block
// was present. A document whose first line is "---" but has no closing
// fence has no frontmatter.
func SplitFrontmatter(doc string) (fm, body string, ok bool) {
	d := SplitDocument(doc)
	if !d.HasFM {
		return "", doc, false
	}
	return d.FM, d.Body, true
}

// Document is a page file cut into its parts, so that BOM + Open + FM +
// Close + Body is the file byte for byte.
type Document struct {
	BOM   string // "\ufeff" or ""
	Open  string // the opening fence line with its line ending ("" without frontmatter)
	FM    string // the frontmatter text between the fences
	Close string // the closing fence line ("---" or "...") with its line ending, if any
	Body  string // everything after
	HasFM bool
}

// SplitDocument cuts a page into its parts (see Document). A document
// whose first line is "---" but has no closing fence has no frontmatter.
func SplitDocument(doc string) Document {
	d := Document{Body: doc}
	s := doc
	if strings.HasPrefix(s, "\ufeff") {
		d.BOM, s = "\ufeff", s[len("\ufeff"):]
	}
	if !strings.HasPrefix(s, "---") {
		if d.BOM != "" {
			d.Body = s
		}
		return d
	}
	first, rest, found := strings.Cut(s, "\n")
	if !found || strings.TrimRight(first, " \t\r") != "---" {
		if d.BOM != "" {
			d.Body = s
		}
		return d
	}
	open := first + "\n"
	off := 0
	for {
		line, after, more := strings.Cut(rest[off:], "\n")
		t := strings.TrimRight(line, " \t\r")
		if t == "---" || t == "..." {
			d.Open, d.FM, d.Body, d.HasFM = open, rest[:off], after, true
			d.Close = rest[off : len(rest)-len(after)]
			return d
		}
		if !more {
			if d.BOM != "" {
				d.Body = s
			}
			return d
		}
		off += len(line) + 1
	}
}
