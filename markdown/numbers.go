package markdown

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Numbers given as JSON (MCP arguments and REST bodies are decoded with
// json.Decoder.UseNumber) are json.Number values: the digits as sent. A
// frontmatter value holding one is written with exactly those digits (an
// integer beyond 2^53, or a float with more digits than a float64 holds,
// is not rounded), and compared with a file's number exactly for
// integers and as float64 otherwise (what get_page returned for a float
// is a float64, so writing it back is no change).

// yamlValue returns v with every json.Number in it (at any depth of []any
// and map[string]any) replaced by a plain YAML scalar of its digits, which
// YAML reads back as the same int or float.
func yamlValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: x.String()}
	case []any:
		out := make([]any, len(x))
		for i, it := range x {
			out[i] = yamlValue(it)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, it := range x {
			out[k] = yamlValue(it)
		}
		return out
	}
	return v
}

// hasNumber reports whether v holds a json.Number at any depth.
func hasNumber(v any) bool {
	switch x := v.(type) {
	case json.Number:
		return true
	case []any:
		for _, it := range x {
			if hasNumber(it) {
				return true
			}
		}
	case map[string]any:
		for _, it := range x {
			if hasNumber(it) {
				return true
			}
		}
	}
	return false
}

// sameNode reports whether node n holds v, a value decoded from JSON with
// json.Number leaves (see Same).
func sameNode(n *yaml.Node, v any, depth int) bool {
	if depth > 64 {
		return false
	}
	if n.Kind == yaml.AliasNode {
		return n.Alias != nil && sameNode(n.Alias, v, depth+1)
	}
	switch x := v.(type) {
	case json.Number:
		return n.Kind == yaml.ScalarNode && sameNumber(n, x)
	case []any:
		if n.Kind != yaml.SequenceNode || len(n.Content) != len(x) {
			return false
		}
		for i, it := range x {
			if !sameNode(n.Content[i], it, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		if n.Kind != yaml.MappingNode {
			return false
		}
		vals := make(map[string]*yaml.Node, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Value == "<<" && k.ShortTag() == "!!merge" {
				return false // a merged mapping: not what a writer sends
			}
			vals[k.Value] = n.Content[i+1]
		}
		if len(vals) != len(x) {
			return false
		}
		for k, it := range x {
			c, ok := vals[k]
			if !ok || !sameNode(c, it, depth+1) {
				return false
			}
		}
		return true
	}
	return SameValue(plainValue(n, depth), v)
}

// sameNumber reports whether scalar n is the number num: integers compare
// exactly (every digit), anything else as float64.
func sameNumber(n *yaml.Node, num json.Number) bool {
	tag := n.ShortTag()
	if tag != "!!int" && tag != "!!float" {
		return false // a string "12" is not the number 12
	}
	s := num.String()
	if tag == "!!int" && !strings.ContainsAny(s, ".eE") {
		a, ok1 := new(big.Int).SetString(n.Value, 0) // YAML ints: 0x…, 0o…, _ separators
		b, ok2 := new(big.Int).SetString(s, 10)
		if ok1 && ok2 {
			return a.Cmp(b) == 0
		}
	}
	x, err := strconv.ParseFloat(s, 64)
	var y float64
	return err == nil && n.Decode(&y) == nil && x == y
}
