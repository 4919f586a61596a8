package markdown

import (
	"path"
	"strings"
	"testing"
)

func TestClassifySource(t *testing.T) {
	cases := []struct {
		in     string
		kind   SourceKind
		path   string // SourceFile
		target string // SourceLink
	}{
		{"", SourceEmpty, "", ""},
		{"   ", SourceEmpty, "", ""},
		// files under raw/sources/
		{"raw/sources/x.md", SourceFile, "raw/sources/x.md", ""},
		{"x.md", SourceFile, "raw/sources/x.md", ""},
		{" x.md ", SourceFile, "raw/sources/x.md", ""},
		{"sources/x.md", SourceFile, "raw/sources/x.md", ""},
		{"./raw/sources/a/b.pdf", SourceFile, "raw/sources/a/b.pdf", ""},
		{"/raw/sources/x.md", SourceFile, "raw/sources/x.md", ""},
		{`raw\sources\win.md`, SourceFile, "raw/sources/win.md", ""},
		{"../../raw/sources/x.md", SourceFile, "raw/sources/x.md", ""},
		{"papers/attention", SourceFile, "raw/sources/papers/attention", ""},
		{"My Notes (2020).pdf", SourceFile, "raw/sources/My Notes (2020).pdf", ""},
		{"raw/sources/with space (1).md", SourceFile, "raw/sources/with space (1).md", ""},
		{"Café.MD", SourceFile, "raw/sources/Café.MD", ""},
		{"10:30 meeting.md", SourceFile, "raw/sources/10:30 meeting.md", ""},
		{"raw/sources/a/../b.md", SourceFile, "raw/sources/b.md", ""},
		// external citations, byte for byte
		{"https://learn.microsoft.com/en-us/azure/x?y=1#z", SourceExternal, "", ""},
		{"web:https://learn.microsoft.com/x", SourceExternal, "", ""},
		{"kb:azure-storage", SourceExternal, "", ""},
		{"kb:Some Page Title", SourceExternal, "", ""},
		{"doi:10.1038/nature14539", SourceExternal, "", ""},
		{"isbn:978-0262035613", SourceExternal, "", ""},
		{"guide:onboarding/step-2", SourceExternal, "", ""},
		{"arXiv:1706.03762", SourceExternal, "", ""},
		{"file:///etc/passwd", SourceExternal, "", ""},
		// wikilinks
		{"[[Page]]", SourceLink, "", "Page"},
		{"[[Some Page|label]]", SourceLink, "", "Some Page"},
		{"[[Page#Heading]]", SourceLink, "", "Page"},
		{"![[Embedded]]", SourceLink, "", "Embedded"},
		{"[[]]", SourceText, "", ""},
		// bare names: not plausibly files
		{"karpathy-llm-wiki", SourceName, "", ""},
		{"nature.com", SourceName, "", ""},
		{"gpt-4o", SourceName, "", ""},
		// free text
		{"Smith J. (2020) Deep learning", SourceText, "", ""},
		{"Interview with the team, May 2024", SourceText, "", ""},
		{"Note: from the call", SourceText, "", ""},
		{"Smith: Title of the paper", SourceText, "", ""},
		{"a, b", SourceText, "", ""},
		// paths outside raw/sources/
		{"raw/assets/img.png", SourceOutside, "", ""},
		{"raw/x.md", SourceOutside, "", ""},
		{"wiki/concepts/x.md", SourceOutside, "", ""},
		{"../x.md", SourceOutside, "", ""},
		{"raw/sources/../../etc/passwd", SourceOutside, "", ""},
		{"sources/../../x.md", SourceOutside, "", ""},
		{`C:\Users\me\x.md`, SourceOutside, "", ""},
		{"raw/sources/", SourceOutside, "", ""},
	}
	for _, c := range cases {
		got := ClassifySource(c.in)
		if got.Kind != c.kind || got.Path != c.path || got.Target != c.target {
			t.Errorf("ClassifySource(%q) = %v %q %q; want %v %q %q", c.in, got.Kind, got.Path, got.Target, c.kind, c.path, c.target)
		}
		if got.Raw != strings.TrimSpace(c.in) {
			t.Errorf("ClassifySource(%q).Raw = %q; want the entry as written", c.in, got.Raw)
		}
	}
}

func TestSourceEntries(t *testing.T) {
	cases := []struct {
		yaml string
		want []string
	}{
		{"sources: [a.md, b.md]", []string{"a.md", "b.md"}},
		{"sources: a.md, https://x.org/y", []string{"a.md", "https://x.org/y"}},
		{"sources: Smith, J. (2020) Title", []string{"Smith, J. (2020) Title"}},
		{"sources: [[Page]]", []string{"[[Page]]"}},
		{"sources:\n  - [[Page One]]\n  - \"[[Page Two]]\"\n  - raw/sources/x.md", []string{"[[Page One]]", "[[Page Two]]", "raw/sources/x.md"}},
		{"sources:\n  - Smith: Title of paper\n  - web:https://x", []string{"Smith: Title of paper", "web:https://x"}},
		{"sources:\n  - [[a|label]]", []string{"[[a|label]]"}},
		{"sources:", nil},
		{"title: x", nil},
	}
	for _, c := range cases {
		fm, err := ParseFrontmatter(c.yaml)
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		got := fm.SourceEntries("sources")
		if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
			t.Errorf("%q: entries %q; want %q", c.yaml, got, c.want)
		}
	}
	if got := CitedFiles([]string{"a.md", "raw/sources/a.md", "[[a]]", "web:x", "b.pdf"}); strings.Join(got, ",") != "raw/sources/a.md,raw/sources/b.pdf" {
		t.Errorf("CitedFiles = %q", got)
	}
}

// FuzzClassifySource holds the classification to its contract: total,
// stable, and a file is always a clean path inside raw/sources/.
func FuzzClassifySource(f *testing.F) {
	for _, s := range []string{"x.md", "raw/sources/a/b.md", "../../raw/sources/x", "web:https://x", "[[a|b]]",
		"Smith (2020)", "raw/sources/../../x", "\\\\server\\x", "a:b", "/etc/passwd", "sources/./../x.md", "C:/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s := ClassifySource(in)
		if (s.Kind == SourceEmpty) != (strings.TrimSpace(in) == "") {
			t.Fatalf("%q: kind %v", in, s.Kind)
		}
		if s.Raw != strings.TrimSpace(in) {
			t.Fatalf("%q: raw %q", in, s.Raw)
		}
		switch s.Kind {
		case SourceFile:
			if !strings.HasPrefix(s.Path, "raw/sources/") || path.Clean(s.Path) != s.Path {
				t.Fatalf("%q: file path %q is not a clean path under raw/sources/", in, s.Path)
			}
			for _, el := range strings.Split(s.Path, "/") {
				if el == ".." || el == "." || el == "" {
					t.Fatalf("%q: file path %q has element %q", in, s.Path, el)
				}
			}
			// a cited file's key classifies as itself
			if again := ClassifySource(s.Path); again.Kind != SourceFile || again.Path != s.Path {
				t.Fatalf("%q: key %q reclassifies as %v %q", in, s.Path, again.Kind, again.Path)
			}
		case SourceLink:
			if s.Target == "" {
				t.Fatalf("%q: empty link target", in)
			}
		default:
			if s.Path != "" {
				t.Fatalf("%q: %v with a path", in, s.Kind)
			}
		}
	})
}
