package wildgen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/vault"
)

func generate(t *testing.T, o Options) (string, *Manifest) {
	t.Helper()
	dir := t.TempDir()
	m, err := Generate(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// TestGenerate_Conventions checks that the generated vault carries every
// convention the package promises, and that the manifest tells the truth
// about each page as synapse's parser reads it.
func TestGenerate_Conventions(t *testing.T) {
	dir, m := generate(t, Options{Seed: 1})
	if len(m.Pages) != 300 {
		t.Fatalf("%d pages, want 300", len(m.Pages))
	}
	seen := map[Hazard]int{}
	paths := map[string]bool{}
	for _, p := range m.Pages {
		if paths[p.Path] {
			t.Fatalf("two pages at %s", p.Path)
		}
		paths[p.Path] = true
		for _, h := range p.Hazards {
			seen[h]++
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p.Path)))
		if err != nil {
			t.Fatal(err)
		}
		parsed := markdown.Parse(p.Path, data)
		if broken := parsed.FMError != ""; broken != p.Has(BrokenYAML) {
			t.Errorf("%s: FMError %q, manifest says broken=%v", p.Path, parsed.FMError, p.Has(BrokenYAML))
		}
		if parsed.HasFM == p.Has(NoFrontmatter) {
			t.Errorf("%s: HasFM %v, manifest says no-frontmatter=%v", p.Path, parsed.HasFM, p.Has(NoFrontmatter))
		}
		if parsed.Title != p.Title {
			t.Errorf("%s: title %q, manifest %q", p.Path, parsed.Title, p.Title)
		}
		typ := vault.NormalizeType(parsed.Type)
		if typ == "" {
			typ = vault.TypeFromPath(p.Path)
		}
		if typ != p.Type {
			t.Errorf("%s: type %q, manifest %q", p.Path, typ, p.Type)
		}
		if got := bytes.Contains(data, []byte("\r\n")); got != p.Has(CRLF) {
			t.Errorf("%s: CRLF %v, manifest %v", p.Path, got, p.Has(CRLF))
		}
		if got := bytes.HasPrefix(data, []byte("\ufeff")); got != p.Has(BOM) {
			t.Errorf("%s: BOM %v, manifest %v", p.Path, got, p.Has(BOM))
		}
		if got := len(data) > 1<<20; got != p.Has(Huge) {
			t.Errorf("%s: %d bytes, manifest huge=%v", p.Path, len(data), p.Has(Huge))
		}
	}
	for _, h := range []Hazard{BrokenYAML, ConflictYAML, NoFrontmatter, CRLF, BOM, Twin, DupTitle, Huge, OddName, NestedLink, StrayColon, BodySources} {
		if seen[h] == 0 {
			t.Errorf("no page carries %s", h)
		}
	}
	want := []string{"concept", "dataset", "entity", "entry", "estimator", "note", "question", "source", "synthesis", "topic"}
	if got := m.Types(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("types %v, want %v", got, want)
	}
	// every kind of citation is there
	var all strings.Builder
	for _, p := range m.Pages {
		data, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p.Path)))
		all.Write(data)
	}
	text := all.String()
	for _, s := range []string{"- https://", "- doi:", "- web:https://", "- kb:", "- guide:", "J. (20", "- [[", "\"[[", "raw_paths:", "source_file:",
		"page_type: paper", "kind: paper", "category: paper", "last_updated:", "date: ", "T09:15:00Z", "created: \"", "created: '",
		"<<<<<<< HEAD", "](../../raw/sources/", "[[../../raw/sources/", "|original]]", "**Sources**:", "![[", "#Overview]]"} {
		if !strings.Contains(text, s) {
			t.Errorf("no page contains %q", s)
		}
	}
	if len(m.External) == 0 || len(m.Missing) == 0 {
		t.Errorf("external %d, missing %d", len(m.External), len(m.Missing))
	}
	for _, miss := range m.Missing {
		if _, err := os.Stat(filepath.Join(dir, miss)); err == nil {
			t.Errorf("missing source %s exists", miss)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "wiki", "index.md")); err != nil || st.Size() < 985<<10 {
		t.Errorf("index.md: %v %v", st, err)
	}
	for _, twin := range []string{"en", "ru"} {
		if ents, _ := os.ReadDir(filepath.Join(dir, "wiki", twin)); len(ents) < 2 {
			t.Errorf("wiki/%s has %d pages", twin, len(ents))
		}
	}
}

// TestGenerate_Deterministic: the same seed gives the same bytes.
func TestGenerate_Deterministic(t *testing.T) {
	a, _ := generate(t, Options{Seed: 7, Pages: 120, NoHuge: true})
	b, _ := generate(t, Options{Seed: 7, Pages: 120, NoHuge: true})
	n := 0
	err := filepath.Walk(a, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		x, _ := os.ReadFile(p)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with one seed", rel)
		}
		n++
		return nil
	})
	if err != nil || n < 120 {
		t.Fatalf("%d files, %v", n, err)
	}
}
