package markdown

import (
	"strings"
	"testing"
)

const sectionDoc = "# Title\n\nIntro.\n\n## Setup\n\nOld setup.\n\n### Linux\n\nApt.\n\n```\n## not a heading\n```\n\n## Usage\nRun it.\n\n## Setup notes\n\nMore.\n"

func TestSections_Bounds(t *testing.T) {
	secs := Sections(sectionDoc)
	var got []string
	for _, s := range secs {
		got = append(got, strings.Repeat("#", s.Level)+" "+s.Text+"|"+sectionDoc[s.Start:s.End])
	}
	want := []string{
		"# Title|" + sectionDoc,
		"## Setup|## Setup\n\nOld setup.\n\n### Linux\n\nApt.\n\n```\n## not a heading\n```\n\n",
		"### Linux|### Linux\n\nApt.\n\n```\n## not a heading\n```\n\n",
		"## Usage|## Usage\nRun it.\n\n",
		"## Setup notes|## Setup notes\n\nMore.\n",
	}
	if strings.Join(got, "\n--\n") != strings.Join(want, "\n--\n") {
		t.Fatalf("sections:\n%s", strings.Join(got, "\n--\n"))
	}
	if secs[2].Line != 9 || strings.Join(secs[2].Parents, ">") != "Title>Setup" {
		t.Errorf("Linux: line %d parents %v", secs[2].Line, secs[2].Parents)
	}
}

func TestFindSection(t *testing.T) {
	doc := sectionDoc + "\n# Appendix\n\n## Linux\n\nYum.\n"
	for _, c := range []struct {
		spec      string
		line      int
		ambiguous int
	}{
		{"Setup", 5, 0},
		{"  setup ", 5, 0},
		{"## Usage", 17, 0},
		{"### Usage", 0, 0},
		{"Linux", 0, 2},
		{"Setup#Linux", 9, 0},
		{"Appendix#Linux", 26, 0},
		{"### Linux", 9, 0},
		{"not a heading", 0, 0},
		{"Nothing", 0, 0},
	} {
		s, ok, amb := FindSection(doc, ParseSectionSpec(c.spec))
		if ok != (c.line > 0) || ok && s.Line != c.line || len(amb) != c.ambiguous {
			t.Errorf("%q: found %v line %d, %d ambiguous", c.spec, ok, s.Line, len(amb))
		}
	}
}

func TestReplaceSection(t *testing.T) {
	find := func(doc, spec string) Section {
		s, ok, _ := FindSection(doc, ParseSectionSpec(spec))
		if !ok {
			t.Fatalf("no %q", spec)
		}
		return s
	}
	for _, c := range []struct {
		name, doc, spec, text, want string
	}{
		{"keeps the spacing", sectionDoc, "Usage", "Run it twice.\n",
			strings.Replace(sectionDoc, "## Usage\nRun it.\n\n", "## Usage\nRun it twice.\n\n", 1)},
		{"subsections go with it", sectionDoc, "Setup", "New setup.",
			"# Title\n\nIntro.\n\n## Setup\n\nNew setup.\n\n## Usage\nRun it.\n\n## Setup notes\n\nMore.\n"},
		{"its own heading sent back is dropped", sectionDoc, "Setup notes", "## Setup notes\n\nLess.\n",
			strings.Replace(sectionDoc, "More.", "Less.", 1)},
		{"the last section, no final newline", "# A\n\nx", "A", "y\n", "# A\n\ny\n"},
		{"an empty section before another", "## A\n## B\nb\n", "A", "a", "## A\n\na\n\n## B\nb\n"},
		{"a heading that ends the file", "## A", "A", "a", "## A\n\na\n"},
		{"emptied", "## A\n\nx\n\n## B\n", "A", "", "## A\n\n## B\n"},
	} {
		if got := ReplaceSection(c.doc, find(c.doc, c.spec), c.text); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestAppendSection(t *testing.T) {
	for _, c := range []struct {
		body, heading, text string
		level               int
		want                string
	}{
		{"Intro.\n", "Sources", "- a\n", 0, "Intro.\n\n## Sources\n\n- a\n"},
		{"Intro.", "Sources", "- a", 3, "Intro.\n\n### Sources\n\n- a\n"},
		{"Intro.\n\n", "S", "x", 0, "Intro.\n\n## S\n\nx\n"},
		{"", "S", "x", 0, "## S\n\nx\n"},
		{"Intro.\n", "S", "## S\nx\n", 0, "Intro.\n\n## S\n\nx\n"},
		{"Intro.\n", "S", "### S\nx\n", 0, "Intro.\n\n### S\n\nx\n"},
		{"Intro.\n", "S", "### S\nx\n", 2, "Intro.\n\n## S\n\n### S\nx\n"},
	} {
		if got := AppendSection(c.body, c.level, c.heading, c.text); got != c.want {
			t.Errorf("%q + %q: got %q, want %q", c.body, c.heading, got, c.want)
		}
	}
}

func TestAppendToSection(t *testing.T) {
	for _, c := range []struct {
		name, doc, spec, text, want string
	}{
		{"a paragraph after a paragraph", "## A\n\nOne.\n\n## B\nb\n", "A", "Two.", "## A\n\nOne.\n\nTwo.\n\n## B\nb\n"},
		{"a list item continues the list", "## A\n\n- one\n\n## B\n", "A", "- two\n", "## A\n\n- one\n- two\n\n## B\n"},
		{"a table row continues the table", "## A\n| a |\n|---|\n| 1 |\n", "A", "| 2 |", "## A\n| a |\n|---|\n| 1 |\n| 2 |\n"},
		{"before the first subsection", sectionDoc, "Setup", "Also.\n",
			strings.Replace(sectionDoc, "Old setup.\n\n### Linux", "Old setup.\n\nAlso.\n\n### Linux", 1)},
		{"the last section, no final newline", "# A\n\nx", "A", "y", "# A\n\nx\n\ny\n"},
		{"an empty section", "## A\n## B\nb\n", "A", "a", "## A\n\na\n\n## B\nb\n"},
		{"its own heading sent is dropped", "## A\n\n- x\n", "A", "## A\n- y\n", "## A\n\n- x\n- y\n"},
		{"CRLF kept for the separator", "## A\r\n\r\nx\r\n", "A", "y\r\n", "## A\r\n\r\nx\r\n\r\ny\r\n"},
	} {
		s, ok, _ := FindSection(c.doc, ParseSectionSpec(c.spec))
		if !ok {
			t.Fatalf("%s: no %q", c.name, c.spec)
		}
		if got := AppendToSection(c.doc, s, c.text); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestAppendToBody(t *testing.T) {
	for _, c := range []struct{ body, text, want string }{
		{"Intro.\n", "More.", "Intro.\n\nMore.\n"},
		{"Intro.\n\n\n", "\nMore.\n\n", "Intro.\n\nMore.\n\n\n"},
		{"- a\n", "- b\n", "- a\n- b\n"},
		{"", "x", "x\n"},
		{"\n\n", "x\n", "x\n"},
		{"Intro.", "", "Intro."},
	} {
		if got := AppendToBody(c.body, c.text); got != c.want {
			t.Errorf("%q + %q: got %q, want %q", c.body, c.text, got, c.want)
		}
	}
}

// FuzzSections: every section lies within the body, starts on its heading
// line and ends at or before the next heading of its level or above;
// replacing a section with its own text changes nothing.
func FuzzSections(f *testing.F) {
	f.Add(sectionDoc)
	f.Add("## A\r\n\r\nx\r\n### B\r\ny\r\n## C")
	f.Add("# A\n```\n# B\n```\n#C\n# D #\n")
	f.Fuzz(func(t *testing.T, body string) {
		secs := Sections(body)
		for i, s := range secs {
			if s.Start < 0 || s.Start >= s.BodyStart || s.BodyStart > s.End || s.End > len(body) {
				t.Fatalf("section %d %+v out of a %d-byte body", i, s, len(body))
			}
			if i > 0 && secs[i-1].Start >= s.Start {
				t.Fatalf("sections out of order: %+v, %+v", secs[i-1], s)
			}
			for _, o := range secs[i+1:] {
				if o.Level <= s.Level {
					if s.End != o.Start {
						t.Fatalf("section %q ends at %d, the next of its level starts at %d", s.Text, s.End, o.Start)
					}
					break
				}
			}
			own := body[s.BodyStart:s.End]
			if got := ReplaceSection(body, s, own); strings.TrimSpace(own) != "" && got != body && strings.HasSuffix(body, "\n") {
				t.Fatalf("replacing %q with its own text changed the body:\n%q\n%q", s.Text, body, got)
			}
		}
	})
}
