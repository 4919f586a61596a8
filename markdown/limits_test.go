package markdown

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// small limits, so that each case is a few lines
var testLimits = Limits{
	NameBytes: 16, SourceBytes: 24, Aliases: 3, Tags: 3, Sources: 3, Links: 5, LinkBytes: 60,
	Headings: 3, FrontmatterBytes: 300, FrontmatterValues: 40, FrontmatterValueBytes: 200, SearchBytes: 200, ScanBytes: 2,
}

func cappedLimits(p *Page) string {
	var l []string
	for _, c := range p.Capped {
		l = append(l, c.Limit)
	}
	return strings.Join(l, ",")
}

// TestParse_Limits: what goes past a limit is left out of the parsed page
// and named in Capped; what is within is kept as Parse always kept it.
func TestParse_Limits(t *testing.T) {
	long := strings.Repeat("x", 17)
	for _, tc := range []struct {
		name, doc string
		check     func(p *Page) string // "" when the page is as expected
		capped    string
	}{
		{"within every limit", "---\ntitle: T\naliases: [a, b]\ntags: [c]\n---\n# H\n[[x]] [y](y.md) #d\n",
			func(p *Page) string {
				return want(p.Title == "T" && len(p.Aliases) == 2 && len(p.Tags) == 2 && len(p.Links) == 2 && len(p.Headings) == 1, p)
			}, ""},
		{"title too long: the file name", "---\ntitle: " + long + "\n---\nbody\n",
			func(p *Page) string { return want(p.Title == "page", p) }, "name_bytes"},
		{"long and surplus aliases", "---\naliases: [" + long + ", a, b, c, d]\n---\n",
			func(p *Page) string { return want(strings.Join(p.Aliases, ",") == "a,b,c", p) }, "name_bytes,aliases"},
		{"long and surplus tags, inline ones too", "---\ntags: [a, b]\n---\n#c #d #" + long + "\n",
			func(p *Page) string { return want(strings.Join(p.Tags, ",") == "a,b,c", p) }, "name_bytes,tags"},
		{"long and surplus sources", "---\nsources: [" + strings.Repeat("s", 25) + ".md, a.md, b.md, c.md, d.md]\n---\n",
			func(p *Page) string { return want(strings.Join(p.Sources, ",") == "a.md,b.md,c.md", p) }, "name_bytes,sources"},
		{"long link targets and headings left out", "[[" + long + "]] [[a#" + long + "]] [[b]] [x](" + long + ".md)\n",
			func(p *Page) string { return want(len(p.Links) == 1 && p.Links[0].Target == "b", p) }, "name_bytes"},
		{"surplus links: the first ones, frontmatter first", "---\nrel: \"[[f]]\"\n---\n[[a]] [[b]] [[c]] [[d]] [[e]] [[g]]\n",
			func(p *Page) string {
				return want(len(p.Links) == 5 && p.Links[0].Target == "f" && p.Links[4].Target == "d", p)
			}, "links"},
		{"link bytes", "[[aaaaaaaaaaaaaaa]] [[bbbbbbbbbbbbbbb]] [[ccccccccccccccc]] [[ddddddddddddddd]] [[e]]\n",
			func(p *Page) string { return want(len(p.Links) == 4, p) }, "links"},
		{"surplus headings", "# a\n# b\n# c\n# d\n# e\n",
			func(p *Page) string { return want(len(p.Headings) == 3, p) }, "headings"},
		{"frontmatter too long: kept unread, the body indexed", "---\ntitle: T\nx: " + strings.Repeat("y", 300) + "\n---\n[[a]]\n",
			func(p *Page) string {
				return want(p.Title == "page" && p.FMError != "" && p.Frontmatter.Raw() != "" && len(p.Links) == 1, p)
			}, "frontmatter_bytes"},
		{"search reads the first lines of a long body", "one line\n" + strings.Repeat("x", 300) + "\nlast\n",
			func(p *Page) string { return want(p.SearchBody() == "one line\n" && len(p.Body) == 315, p) }, "search_bytes"},
		{"search cuts a long line", strings.Repeat("é", 150),
			func(p *Page) string { return want(p.SearchBody() == strings.Repeat("é", 100), p) }, "search_bytes"},
		{"values past the limit through aliases", "---\na: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\nb: [*a, *a, *a, *a]\n---\n",
			func(p *Page) string { return want(p.FMError != "" && p.Frontmatter.Len() == 0, p) }, "frontmatter_values"},
		{"value bytes past the limit through aliases", "---\na: &a " + strings.Repeat("z", 60) + "\nb: [*a, *a, *a, *a]\n---\n",
			func(p *Page) string { return want(p.FMError != "", p) }, "frontmatter_value_bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ParseLimited("wiki/page.md", []byte(tc.doc), testLimits)
			if got := cappedLimits(p); got != tc.capped {
				t.Errorf("capped %q, want %q (%+v)", got, tc.capped, p.Capped)
			}
			if msg := tc.check(p); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func want(ok bool, p *Page) string {
	if ok {
		return ""
	}
	return fmt.Sprintf("title %q aliases %q tags %q sources %q links %v headings %v fm error %q",
		p.Title, p.Aliases, p.Tags, p.Sources, linkSummary(p.Links), p.Headings, p.FMError)
}

// TestParse_AliasBombIsRefusedUnexpanded: a YAML alias bomb that names
// billions of values is measured without being expanded, and its
// frontmatter is kept as text, unread (Value never walks it).
func TestParse_AliasBombIsRefusedUnexpanded(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 12; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 9), ","))
	}
	b.WriteString("---\nbody\n")
	p := Parse("wiki/bomb.md", []byte(b.String()))
	if cappedLimits(p) != "frontmatter_values" || p.Frontmatter.Len() != 0 {
		t.Fatalf("capped %v, keys %v", p.Capped, p.Frontmatter.Keys())
	}
	if js, _ := p.Frontmatter.MarshalJSON(); string(js) != "{}" {
		t.Errorf("frontmatter JSON %s", js)
	}
	if y, _ := p.Frontmatter.YAML(); !strings.Contains(y, "*a10") {
		t.Errorf("the text is not kept: %q", y)
	}
}

// TestParse_UnclosedMarkdownLinksStopLooking: a line of unclosed markdown
// links, each read to the end of the line, stops the search for markdown
// links once it has cost the budget; links before it are kept, and
// wikilinks are still found after it.
func TestParse_UnclosedMarkdownLinksStopLooking(t *testing.T) {
	doc := "[a](a.md)\n" + strings.Repeat("[a](b", 2000) + "\n[[after]]\n"
	lim := testLimits
	lim.SearchBytes = len(doc)
	p := ParseLimited("wiki/page.md", []byte(doc), lim)
	if cappedLimits(p) != "scan_bytes" {
		t.Fatalf("capped %v", p.Capped)
	}
	if got := strings.Join(linkSummary(p.Links), " "); got != "1:a.md|a 3:after" {
		t.Errorf("links %s", got)
	}
	few := "[a](a.md)\n" + strings.Repeat("[a](b", 200) + "\n[[after]]\n"
	if p := Parse("wiki/page.md", []byte(few)); len(p.Capped) != 0 || len(p.Links) != 2 {
		t.Errorf("the default budget is spent by a line of 200: %v", p.Capped)
	}
}

// TestMask_CodeSpansAsRead: finding where code spans close from an index
// of the backtick runs masks what reading ahead from each run masked
// (random paragraphs of backtick runs of many lengths).
func TestMask_CodeSpansAsRead(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		var b strings.Builder
		for j := rnd.Intn(30); j >= 0; j-- {
			switch rnd.Intn(6) {
			case 0:
				b.WriteString(strings.Repeat("`", 1+rnd.Intn(4)))
			case 1:
				b.WriteString("\n")
			case 2:
				b.WriteString("\n  \n")
			case 3:
				b.WriteString("\\`")
			default:
				b.WriteString("ab[[x]] ")
			}
		}
		s := b.String()
		spans := newCodeSpans(s)
		for from := 0; from <= len(s); from++ {
			if from > 0 && s[from-1] == '`' && (from == len(s) || s[from] != '`') {
				n := 0
				for from-n > 0 && s[from-n-1] == '`' {
					n++
				}
				if got, want := spans.closing(from, n), readAhead(s, from, n); got != want {
					t.Fatalf("%q from %d, run of %d: closes at %d, read ahead %d", s, from, n, got, want)
				}
			}
		}
	}
}

// readAhead finds the closer of a code span by reading ahead, as the
// parser did before it indexed the runs.
func readAhead(s string, from, n int) int {
	for i := from; i < len(s); {
		if s[i] == '\n' && i+1 < len(s) && (s[i+1] == '\n' || strings.TrimSpace(s[i+1:indexByteFrom(s, '\n', i+1)]) == "") {
			return -1
		}
		if s[i] != '`' {
			i++
			continue
		}
		m := 0
		for i+m < len(s) && s[i+m] == '`' {
			m++
		}
		if m == n {
			return i + m
		}
		i += m
	}
	return -1
}

// TestParse_BrokenFrontmatterRecoveryIsCapped: the title, aliases and tags
// read back from the plain lines of a frontmatter that is not valid YAML
// are held to the same limits as a valid block's, and a block over the
// frontmatter byte limit is not read for them at all.
func TestParse_BrokenFrontmatterRecoveryIsCapped(t *testing.T) {
	long := strings.Repeat("a", 40<<10)
	lim := DefaultLimits
	broken := "---\ntitle: " + long + "\naliases: [" + long + ", short]\ntags: [" + long + "]\nbad: [\n---\nbody\n"
	p := ParseLimited("wiki/Broken.md", []byte(broken), lim)
	if p.FMError == "" {
		t.Fatal("the block parsed")
	}
	if p.Title != "Broken" || len(p.Aliases) != 1 || p.Aliases[0] != "short" || len(p.Tags) != 0 {
		t.Errorf("title %.20q, aliases %d %.20q, tags %d", p.Title, len(p.Aliases), p.Aliases, len(p.Tags))
	}
	if len(p.Capped) == 0 {
		t.Error("nothing said about what was left out")
	}
	lim.FrontmatterBytes = 64
	p = ParseLimited("wiki/Broken.md", []byte("---\ntitle: Kept\naliases: [x]\nbad: [\n"+strings.Repeat("k: v\n", 20)+"---\nbody\n"), lim)
	if p.Title != "Broken" || len(p.Aliases) != 0 {
		t.Errorf("a block over the limit was read: title %q aliases %q", p.Title, p.Aliases)
	}
}
