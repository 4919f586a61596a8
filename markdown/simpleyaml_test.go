package markdown

import (
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

// sameAsYAML checks that when the fast path accepts text, its tree decodes
// and re-encodes exactly as yaml.v3's own.
func sameAsYAML(t *testing.T, text string) bool {
	t.Helper()
	fast, ok := parseSimpleYAML(text)
	if !ok {
		return false
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("fast path accepted what yaml.v3 refuses (%v):\n%s", err, text)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		t.Fatalf("fast path accepted a non-mapping:\n%q", text)
	}
	var want, got any
	if err := doc.Content[0].Decode(&want); err != nil {
		t.Fatal(err)
	}
	if err := fast.Decode(&got); err != nil {
		t.Fatalf("fast tree does not decode: %v\n%q", err, text)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("decoded values differ for %q:\nyaml.v3 %#v\nfast    %#v", text, want, got)
	}
	a, _ := (&Frontmatter{node: doc.Content[0]}).YAML()
	b, _ := (&Frontmatter{node: fast}).YAML()
	if a != b {
		t.Fatalf("re-encoded YAML differs for %q:\nyaml.v3 %q\nfast    %q", text, a, b)
	}
	return true
}

func TestSimpleYAML_MatchesYAMLv3(t *testing.T) {
	accepted := []string{
		"title: Foo Title\ntype: concept\n",
		"aliases:\n  - Start here\n  - Home page\ncssclasses:\n  - list-cards\npermalink: /\n",
		"tags: [set, views]\ncreated: 2026-01-14\n",
		"count: 12\nratio: 1.5\nflag: true\nnothing: null\nempty:\n",
		"title: Café au lait\nsources: [raw/sources/a.md, b.md]\n",
		"aliases:\n- same indent\n- works too\n",
		"tags: []\n",
		"version: v1.2\nmodel: gpt-4o\n",
	}
	for _, s := range accepted {
		if !sameAsYAML(t, s) {
			t.Errorf("fast path declined %q", s)
		}
	}
	declined := []string{
		"# comment\ntitle: x\n", "title: 'quoted'\n", "title: \"q\"\n", "a: b: c\n", "a: x # comment\n",
		"a:\n  b: c\n", "a: |\n  block\n", "a: &anchor x\n", "a: *ref\n", "a: x\na: y\n",
		"a: [x, [y]]\n", "a: {b: c}\n", "  indented: x\n", "a:\n  - x\n    - y\n", "",
		"a: - x\n", "a: ~\n", "a: !tag x\n", "\"quoted key\": x\n",
	}
	for _, s := range declined {
		if _, ok := parseSimpleYAML(s); ok {
			t.Errorf("fast path accepted %q", s)
		}
	}
}

func FuzzSimpleYAML(f *testing.F) {
	for _, s := range []string{"title: x\n", "tags: [a, b]\n", "aliases:\n  - a\n", "n: 1\nb: yes\n", "x: 0x1F\n", "d: 2026-01-02T10:00:00Z\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { sameAsYAML(t, s) })
}
