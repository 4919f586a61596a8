// Package vaultgen generates large synthetic vaults for benchmarks: pages
// with frontmatter (titles, types, aliases, tags, sources), headings,
// paragraphs drawn from a real English vocabulary with a Zipf
// distribution, wikilinks with a power-law popularity, some dangling links,
// markdown links, code blocks, and raw sources. Output is deterministic for
// a seed.
package vaultgen

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Options tune a generated vault.
type Options struct {
	Pages     int   // number of wiki pages
	Sources   int   // number of files under raw/sources/
	Seed      int64 // random seed
	BodyWords int   // mean words per page body (default 450, about 3 KB a page)
	// CorpusDir supplies the vocabulary (any folder of markdown files).
	CorpusDir string
}

// Page is a generated page's identity, for building query sets.
type Page struct {
	Title   string
	Path    string // vault-relative
	Type    string
	Aliases []string
	Heading string // one section heading unique to the page
}

var wordRE = regexp.MustCompile(`[A-Za-z][a-z]{2,14}`)

// Vocabulary returns the distinct lowercase words of the markdown files
// under dir, most frequent first.
func Vocabulary(dir string) ([]string, error) {
	counts := map[string]int{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, w := range wordRE.FindAllString(string(data), -1) {
			counts[strings.ToLower(w)]++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		if counts[words[i]] != counts[words[j]] {
			return counts[words[i]] > counts[words[j]]
		}
		return words[i] < words[j]
	})
	if len(words) < 100 {
		return nil, fmt.Errorf("vocabulary from %s too small (%d words)", dir, len(words))
	}
	return words, nil
}

var (
	types   = []string{"entity", "concept", "source", "synthesis", "comparison", "query", "note"}
	folders = map[string]string{"entity": "entities", "concept": "concepts", "source": "sources",
		"synthesis": "synthesis", "comparison": "comparisons", "query": "queries", "note": "notes"}
)

// generator holds one Generate's random source and what it has made.
type generator struct {
	o     Options
	vocab []string
	r     *rand.Rand
	zipf  *rand.Zipf // word frequencies
	pop   *rand.Zipf // link popularity: a power law over pages
	pages []Page
	sb    strings.Builder
}

func (g *generator) word() string { return g.vocab[g.zipf.Uint64()] }

// rare draws from the rarer words, which make titles distinctive.
func (g *generator) rare() string { return g.vocab[50+g.r.Intn(len(g.vocab)-50)] }

// Generate writes a vault's wiki/ and raw/sources/ under root (which must
// exist) and returns the generated pages.
func Generate(root string, o Options) ([]Page, error) {
	if o.BodyWords == 0 {
		o.BodyWords = 450
	}
	vocab, err := Vocabulary(o.CorpusDir)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewSource(o.Seed))
	g := &generator{o: o, vocab: vocab, r: r, zipf: rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))}
	g.makePages()
	sources := make([]string, o.Sources)
	for i := range sources {
		sources[i] = fmt.Sprintf("raw/sources/%03d/%s-%d.md", i%1000, g.rare(), i)
	}
	g.pop = rand.NewZipf(r, 1.2, 4, uint64(max(o.Pages-1, 1)))

	for _, d := range []string{"wiki", "raw/sources"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return nil, err
		}
	}
	made := map[string]bool{}
	write := func(rel string, content []byte) error {
		dir := filepath.Dir(filepath.Join(root, rel))
		if !made[dir] {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			made[dir] = true
		}
		return os.WriteFile(filepath.Join(root, rel), content, 0o644)
	}
	for i, p := range g.pages {
		if err := write(p.Path, g.pageText(i, p, sources)); err != nil {
			return nil, err
		}
	}
	for i, s := range sources {
		g.sb.Reset()
		fmt.Fprintf(&g.sb, "# Source %d\n\n", i)
		g.para(80 + r.Intn(200))
		if err := write(s, []byte(g.sb.String())); err != nil {
			return nil, err
		}
	}
	return g.pages, nil
}

// makePages draws every page's title, type, path, heading and aliases.
func (g *generator) makePages() {
	r := g.r
	g.pages = make([]Page, g.o.Pages)
	seen := map[string]bool{}
	for i := range g.pages {
		var title string
		for {
			n := 2 + r.Intn(3)
			ws := make([]string, n)
			for j := range ws {
				ws[j] = g.rare()
			}
			ws[0] = strings.ToUpper(ws[0][:1]) + ws[0][1:]
			title = strings.Join(ws, " ")
			if !seen[strings.ToLower(title)] {
				break
			}
		}
		seen[strings.ToLower(title)] = true
		t := types[r.Intn(len(types))]
		p := Page{Title: title, Type: t,
			Path:    "wiki/" + folders[t] + "/" + strings.ReplaceAll(strings.ToLower(title), " ", "-") + ".md",
			Heading: fmt.Sprintf("%s %s notes %d", g.rare(), g.rare(), i)}
		if r.Intn(3) == 0 {
			p.Aliases = []string{g.rare() + " " + g.rare()}
		}
		g.pages[i] = p
	}
}

// para writes a paragraph of n words, with commas and links, to g.sb.
func (g *generator) para(n int) {
	r, sb := g.r, &g.sb
	for k := 0; k < n; k++ {
		if k > 0 {
			sb.WriteByte(' ')
		}
		w := g.word()
		if k == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		sb.WriteString(w)
		if r.Intn(12) == 0 && k < n-1 {
			sb.WriteByte(',')
		}
		if r.Intn(25) == 0 {
			// a link
			sb.WriteByte(' ')
			switch x := r.Intn(40); {
			case x == 0:
				fmt.Fprintf(sb, "[[%s %s missing]]", g.rare(), g.rare())
			case x == 1:
				tp := g.pages[g.pop.Uint64()]
				fmt.Fprintf(sb, "[%s](%s)", tp.Title, strings.ReplaceAll(strings.TrimPrefix(tp.Path, "wiki/"), " ", "%20"))
			case x < 6:
				tp := g.pages[g.pop.Uint64()]
				fmt.Fprintf(sb, "[[%s|%s]]", tp.Title, strings.ToLower(tp.Title))
			default:
				fmt.Fprintf(sb, "[[%s]]", g.pages[g.pop.Uint64()].Title)
			}
		}
	}
	sb.WriteString(".\n\n")
}

// pageText is page i's file: frontmatter, title, sections of paragraphs
// and now and then a code block.
func (g *generator) pageText(i int, p Page, sources []string) []byte {
	r, sb, vocab, o := g.r, &g.sb, g.vocab, g.o
	sb.Reset()
	sb.WriteString("---\n")
	fmt.Fprintf(sb, "title: %s\ntype: %s\n", p.Title, p.Type)
	if len(p.Aliases) > 0 {
		fmt.Fprintf(sb, "aliases:\n  - %s\n", p.Aliases[0])
	}
	fmt.Fprintf(sb, "tags: [%s, %s]\n", vocab[20+r.Intn(200)], vocab[20+r.Intn(200)])
	if len(sources) > 0 && r.Intn(2) == 0 {
		fmt.Fprintf(sb, "sources:\n  - %s\n", sources[r.Intn(len(sources))])
	}
	fmt.Fprintf(sb, "created: 2026-01-%02d\n---\n", 1+i%28)
	fmt.Fprintf(sb, "# %s\n\n", p.Title)
	words := o.BodyWords/2 + r.Intn(o.BodyWords+1)
	sections := 2 + r.Intn(3)
	for s := 0; s < sections; s++ {
		if s == 1 {
			fmt.Fprintf(sb, "## %s\n\n", p.Heading)
		} else if s > 0 {
			fmt.Fprintf(sb, "## %s %s\n\n", strings.ToUpper(g.word()[:1])+g.word(), g.word())
		}
		for left := words / sections; left > 0; {
			n := min(left, 30+r.Intn(60))
			g.para(n)
			left -= n
		}
		if r.Intn(8) == 0 {
			fmt.Fprintf(sb, "```go\nfunc %s() { return [[not a link]] }\n```\n\n", g.word())
		}
	}
	return []byte(sb.String())
}

// WriteManifest writes one tab-separated line per page: title, path, type,
// aliases (joined by "|") and the unique heading, for query sets.
func WriteManifest(path string, pages []Page) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, p := range pages {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", p.Title, p.Path, p.Type, strings.Join(p.Aliases, "|"), p.Heading)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
