package markdown

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFrontmatter_SpliceKeepsUnchangedKeys(t *testing.T) {
	src := "# a comment\ntitle: \"Quoted Title\"\ntype: question\ntags:\n  - One\n  - two   # why\n\n# about dates\ncreated: 2024-01-05\nupdated: '2024-02-01'\nrelated: [[x]]\nsources:\n  - web:https://x.org/a\n  - Smith: Title\nextra: {a: 1}\n"
	fm, err := ParseFrontmatter(src)
	if err != nil {
		t.Fatal(err)
	}
	if y, _ := fm.YAML(); y != src {
		t.Fatalf("unchanged frontmatter re-rendered:\n%s", y)
	}
	if fm.Value("created") != "2024-01-05" || fm.Value("updated") != "2024-02-01" {
		t.Errorf("dates as written: %v %v", fm.Value("created"), fm.Value("updated"))
	}
	if !fm.Same("related", []any{[]any{"x"}}) || !fm.Same("extra", map[string]any{"a": 1.0}) || !fm.Same("title", "Quoted Title") {
		t.Error("Same does not match the values get_page returns")
	}
	upd := fm.Node("updated")
	upd.Value = "2024-03-09"
	must(t, fm.Set("updated", upd))
	must(t, fm.Set("status", "done"))
	fm.Delete("extra")
	got, err := fm.YAML()
	must(t, err)
	want := strings.Replace(src, "updated: '2024-02-01'", "updated: '2024-03-09'", 1)
	want = strings.Replace(want, "extra: {a: 1}\n", "status: done\n", 1)
	if got != want {
		t.Errorf("spliced:\n%s\nwant:\n%s", got, want)
	}
}

func TestFrontmatter_CRLF(t *testing.T) {
	src := "title: A\r\nupdated: 2024-01-01\r\ntags: [a]\r\n"
	fm, err := ParseFrontmatter(src)
	must(t, err)
	must(t, fm.Set("updated", "2024-05-05"))
	got, _ := fm.YAML()
	if got != "title: A\r\nupdated: \"2024-05-05\"\r\ntags: [a]\r\n" {
		t.Errorf("CRLF kept: %q", got)
	}
}

func TestFrontmatter_Broken(t *testing.T) {
	// the title comes from the file name unless the block's own title
	// line is valid YAML alone (recover.go)
	for _, c := range []struct{ src, msg, title string }{
		{"title: Foo: bar\ntype: x\n", "line 1: mapping values are not allowed", "x"},
		{"type: x\ntitle: \"A \"b\" c\"\n", "line 2: did not find expected key", "x"},
		{"title: X\n<<<<<<< HEAD\nupdated: 1\n=======\n", "line 2: could not find expected ':'", "X"},
	} {
		fm := KeepFrontmatter(c.src)
		if fm.Err() == nil || !strings.Contains(fm.Err().Error(), c.msg) || fm.Len() != 0 {
			t.Errorf("%q: err %v, want %q", c.src, fm.Err(), c.msg)
		}
		if y, _ := fm.YAML(); y != c.src {
			t.Errorf("%q: kept text %q", c.src, y)
		}
		if _, err := ParseFrontmatter(c.src); err == nil {
			t.Errorf("%q: ParseFrontmatter accepted it", c.src)
		}
		p := Parse("wiki/x.md", []byte("---\n"+c.src+"---\nbody [[y]]\n"))
		if !strings.HasPrefix(p.FMError, "line ") || p.FMLine < 2 || p.Title != c.title || len(p.Links) != 1 {
			t.Errorf("%q: parsed %q line %d title %q links %d", c.src, p.FMError, p.FMLine, p.Title, len(p.Links))
		}
	}
}

func TestSplitDocument(t *testing.T) {
	for _, doc := range []string{"", "body", "\ufeffbody", "---\nt: 1\n---\nb", "\ufeff---\r\nt: 1\r\n---\r\nb\r\n",
		"---\nt: 1\n...\n", "---\nt: 1\n---", "---\nno close\n", "---x\n"} {
		d := SplitDocument(doc)
		if d.BOM+d.Open+d.FM+d.Close+d.Body != doc {
			t.Errorf("%q: parts %+v do not add up", doc, d)
		}
		if strings.HasPrefix(d.Body, "\ufeff") {
			t.Errorf("%q: body keeps the BOM", doc)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzFrontmatterSplice: a parsed frontmatter renders as its text while
// unchanged, and after one key is set every other key keeps its value.
func FuzzFrontmatterSplice(f *testing.F) {
	for _, s := range []string{"title: x\n", "a: 1\n# c\nb: [x, y]\n", "a: |\n  text\n\nb: 2\n", "t: 'q'\r\nu: 2024-01-01\r\n", "a:\n  b: c\nd: e\n"} {
		f.Add(s, "b")
	}
	f.Fuzz(func(t *testing.T, src, key string) {
		fm, err := ParseFrontmatter(src)
		if err != nil || key == "" || !utf8.ValidString(key) {
			return
		}
		if y, _ := fm.YAML(); y != src {
			t.Fatalf("unchanged %q rendered %q", src, y)
		}
		before := map[string]any{}
		for _, k := range fm.Keys() {
			before[k] = fm.Value(k)
		}
		if fm.Set(key, "new value") != nil {
			return
		}
		y, err := fm.YAML()
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseFrontmatter(y)
		if err != nil {
			t.Fatalf("spliced %q into %q, which does not parse: %v", src, y, err)
		}
		if again.Value(key) != "new value" {
			t.Fatalf("%q: %s = %v after set", y, key, again.Value(key))
		}
		for k, v := range before {
			if k != key && !SameValue(again.Value(k), v) {
				t.Fatalf("%q → %q: %s changed from %v to %v", src, y, k, v, again.Value(k))
			}
		}
	})
}
