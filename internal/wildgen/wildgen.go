// Package wildgen generates vaults with the conventions of LLM wikis "in
// the wild": no permissively licensed real agent-maintained wiki
// of a useful size exists to test on, so this builds one from what six
// public ones show (32k, 2.1k, 1.2k, 1.2k, 881 and 62 pages; English,
// Chinese, Russian, mixed). The output is deterministic for a seed.
//
// What a generated vault holds (each convention on at least one page at
// any size; the fractions hold at larger sizes):
//
//   - open types: `type` of source, entity, concept, synthesis and the
//     vault's own words (topic, question, dataset, estimator, paper,
//     entry); some pages name their kind with `page_type`, `kind` or
//     `category` instead;
//   - keys: `title` nearly everywhere, `tags` (lists and strings),
//     `created`/`updated` as YAML dates, quoted strings or timestamps, or
//     `last_updated`/`date`; `related` as ids or wikilinks (quoted, and
//     unquoted [[x]] that YAML reads as a nested list); rare `aliases`,
//     `status`, `confidence`;
//   - citations under `sources` (also `source`, `source_file`,
//     `raw_paths`): raw/sources/ paths, bare file names, bare slugs of
//     source pages, paths that do not exist, URLs, doi: ids,
//     web:/kb:/guide: ids, free text with spaces and parentheses, unquoted
//     [[x]], and mappings made by a stray colon;
//   - links: [[kebab-slug]] mostly, [[Title]] by title, alias pipes,
//     folder paths, relative ../../raw/sources/x.md links (wikilinks and
//     markdown), links into raw/, markdown links in index pages, rare
//     heading links and embeds, dangling links;
//   - hazards: unquoted colons and nested quotes that break YAML, git
//     conflict markers in frontmatter, CRLF line endings, a BOM, pages
//     without frontmatter, en/ and ru/ twins with the same file names,
//     duplicate titles, a page over 1 MB, a huge hand-kept wiki/index.md
//     (never synapse's catalogue) and a hand-kept wiki/log.md without a
//     final newline, file names with spaces and non-ASCII letters,
//     `**Sources**:` body lines.
package wildgen

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Options tune a generated vault.
type Options struct {
	// Pages is the number of wiki pages (default 300). Sources default to
	// a third of it.
	Pages   int
	Sources int
	Seed    int64
	// NoHuge leaves out the >1 MB page and the huge index.md (for quick
	// tests that do not need them).
	NoHuge bool
}

// Hazard names a convention a page carries, for tests that pick pages.
type Hazard string

// Hazards a page can carry.
const (
	BrokenYAML    Hazard = "broken-yaml"    // frontmatter that does not parse
	ConflictYAML  Hazard = "conflict"       // git conflict markers in frontmatter (also BrokenYAML)
	NoFrontmatter Hazard = "no-frontmatter" // no frontmatter block
	CRLF          Hazard = "crlf"           // CRLF line endings
	BOM           Hazard = "bom"            // starts with a UTF-8 BOM
	Twin          Hazard = "twin"           // same file name in wiki/en/ and wiki/ru/
	DupTitle      Hazard = "dup-title"      // shares its title with another page
	Huge          Hazard = "huge"           // over 1 MB
	OddName       Hazard = "odd-name"       // a file name with spaces or non-ASCII letters
	NestedLink    Hazard = "nested-link"    // an unquoted [[x]] in frontmatter
	StrayColon    Hazard = "stray-colon"    // a sources item that YAML reads as a mapping
	BodySources   Hazard = "body-sources"   // cites in a **Sources**: body line, not frontmatter
)

// Page is one generated page.
type Page struct {
	Path    string // vault-relative
	Title   string // the title a reader sees (frontmatter title, else the file name)
	Type    string // the type synapse should derive
	Slug    string // the kebab slug other pages link it by
	Hazards []Hazard
}

// Has reports whether the page carries h.
func (p Page) Has(h Hazard) bool {
	for _, x := range p.Hazards {
		if x == h {
			return true
		}
	}
	return false
}

// Manifest describes a generated vault.
type Manifest struct {
	Pages   []Page
	Sources []string // vault paths of the files under raw/sources/
	// Missing are the raw/sources/ paths that pages cite under `sources`
	// and that do not exist.
	Missing []string
	// External are the external citations (URLs and scheme:value ids)
	// pages cite, each once.
	External []string
}

// Types returns the types of the manifest's pages, sorted, each once.
func (m *Manifest) Types() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range m.Pages {
		if !seen[p.Type] {
			seen[p.Type] = true
			out = append(out, p.Type)
		}
	}
	sort.Strings(out)
	return out
}

var words = strings.Fields(`
alpha amber anchor apex arbor arc argon atlas aurora axis badger basalt beacon birch blaze bolt boron
breeze bronze cactus canyon carbon cedar cipher citrus clover cobalt comet coral cosmos crane crest
crystal cypress delta dune echo ember falcon fern fjord flint forge fossil frost garnet geyser glacier
granite grove harbor hawk helix heron horizon indigo iris ivory jade jasper juniper kelp kestrel krypton
lagoon lantern larch lava lichen lotus lumen lynx magma maple marble meadow mesa meteor mica mirage
monsoon moss nebula nectar nimbus oasis obsidian ocean onyx opal orbit orchid osprey otter quartz quill
radar raven reef ridge river robin saffron sage sandstone sapphire sequoia sierra silica solstice
sparrow spruce summit talon tangent thistle thunder tidal timber topaz tundra vapor velvet vertex
violet vortex walnut willow zenith zephyr agent model token vector index graph query cache kernel
shard tensor prompt layer router schema ledger beacon sprint module engine matrix pixel signal
`)

var ruWords = strings.Fields(`
река гора лес поле город море небо ветер огонь камень снег дождь звезда солнце луна мост дорога дом
сад озеро остров берег облако волна тень свет голос время слово книга память знание модель граф
`)

var zhWords = strings.Fields(`模型 向量 索引 图谱 知识 检索 代理 数据 缓存 路由`)

var (
	// vault words for types, and the folder most of their pages live in
	openTypes = []struct{ typ, folder string }{
		{"entity", "entities"}, {"topic", "topics"}, {"question", "questions"},
		{"concept", "concepts"}, {"source", "sources"}, {"dataset", "datasets"},
		{"estimator", "estimators"}, {"synthesis", "synthesis"},
	}
	// shares of the pages by type (out of 100); the rest are notes, papers
	// (page_type) and en/ru twins
	typeShare = []int{18, 14, 22, 8, 10, 4, 3, 3}
)

type gen struct {
	r       *rand.Rand
	o       Options
	m       *Manifest
	pages   []*pageSpec
	bySlug  map[string]*pageSpec
	sources []string
	srcPage []*pageSpec // source pages (cited by bare slug)
	extSeen map[string]bool
	missSet map[string]bool
	pending []string // missing paths cited by the page being rendered
}

type pageSpec struct {
	Page
	folder  string
	typeKey string // "type", "page_type", "kind", "category" or "" (none)
	typeVal string // the value written under typeKey
	fmTitle bool   // writes a title key
	lang    string // "", "en", "ru"
	twin    *pageSpec
}

// Generate writes wiki/ and raw/sources/ under root (an initialised vault:
// wiki/index.md is replaced) and returns the manifest.
func Generate(root string, o Options) (*Manifest, error) {
	if o.Pages <= 0 {
		o.Pages = 300
	}
	if o.Sources <= 0 {
		o.Sources = max(o.Pages/3, 10)
	}
	g := &gen{r: rand.New(rand.NewSource(o.Seed)), o: o, m: &Manifest{},
		bySlug: map[string]*pageSpec{}, extSeen: map[string]bool{}, missSet: map[string]bool{}}
	g.plan()
	for i := 0; i < o.Sources; i++ {
		sub := ""
		if i%4 == 3 {
			sub = "web/"
		}
		g.sources = append(g.sources, fmt.Sprintf("raw/sources/%s%s-%s-%d.md", sub, g.word(), g.word(), i))
	}
	g.m.Sources = g.sources
	w := &writer{root: root, made: map[string]bool{}}
	// sources first: pages written after them have ingested them
	for i, s := range g.sources {
		body := fmt.Sprintf("# Source %d\n\n%s\n", i, g.sentence(60+g.r.Intn(120)))
		if err := w.write(s, []byte(body)); err != nil {
			return nil, err
		}
	}
	for i, p := range g.pages {
		data := g.render(i, p)
		if err := w.write(p.Path, data); err != nil {
			return nil, err
		}
	}
	if err := w.write("wiki/index.md", g.indexPage()); err != nil {
		return nil, err
	}
	if err := w.write("wiki/log.md", g.logPage()); err != nil {
		return nil, err
	}
	for _, p := range g.pages {
		g.m.Pages = append(g.m.Pages, p.Page)
	}
	sort.Strings(g.m.Missing)
	return g.m, nil
}

type writer struct {
	root string
	made map[string]bool
}

func (w *writer) write(rel string, data []byte) error {
	abs := filepath.Join(w.root, filepath.FromSlash(rel))
	if dir := filepath.Dir(abs); !w.made[dir] {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		w.made[dir] = true
	}
	return os.WriteFile(abs, data, 0o644)
}

func (g *gen) word() string { return words[g.r.Intn(len(words))] }

func (g *gen) sentence(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		w := g.word()
		if i == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		if i%11 == 10 && i < n-1 {
			b.WriteByte(',')
		}
	}
	b.WriteByte('.')
	return b.String()
}

func titleCase(ws []string) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(out, " ")
}

func kebab(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "-") }

// plan decides every page's path, title and type before any is written,
// so links can name them.
func (g *gen) plan() {
	n := g.o.Pages
	seen := map[string]bool{}
	newTitle := func() string {
		for k := 0; ; k++ {
			ws := []string{g.word(), g.word()}
			if g.r.Intn(3) == 0 {
				ws = append(ws, g.word())
			}
			t := titleCase(ws)
			if k > 20 {
				t = fmt.Sprintf("%s %d", t, len(seen))
			}
			if !seen[strings.ToLower(t)] {
				seen[strings.ToLower(t)] = true
				return t
			}
		}
	}
	add := func(p *pageSpec) {
		g.pages = append(g.pages, p)
		if g.bySlug[p.Slug] == nil {
			g.bySlug[p.Slug] = p
		}
	}
	counts := make([]int, len(openTypes))
	total := 0
	for i, s := range typeShare {
		counts[i] = max(1, n*s/100)
		total += counts[i]
	}
	for ti, ot := range openTypes {
		for k := 0; k < counts[ti]; k++ {
			t := newTitle()
			p := &pageSpec{Page: Page{Title: t, Type: ot.typ, Slug: kebab(t)}, folder: "wiki/" + ot.folder,
				typeKey: "type", typeVal: ot.typ, fmTitle: true}
			if ot.typ == "source" {
				g.srcPage = append(g.srcPage, p)
			}
			add(p)
		}
	}
	// a few question pages outside questions/: the folder with most wins
	for k := 0; k < max(1, n/100); k++ {
		t := newTitle()
		add(&pageSpec{Page: Page{Title: t, Type: "question", Slug: kebab(t)}, folder: "wiki/topics",
			typeKey: "type", typeVal: "question", fmTitle: true})
	}
	// papers name their kind with page_type; estimators sometimes with kind
	for k := 0; k < max(2, n*4/100); k++ {
		t := newTitle()
		key := []string{"page_type", "kind", "category"}[k%3]
		add(&pageSpec{Page: Page{Title: t, Type: "note", Slug: kebab(t)}, folder: "wiki/papers",
			typeKey: key, typeVal: "paper", fmTitle: true})
	}
	// en/ru twins: the same file names in wiki/en/ and wiki/ru/
	for k := 0; k < max(2, n*6/100)/2; k++ {
		t := newTitle()
		slug := kebab(t)
		en := &pageSpec{Page: Page{Title: t, Type: "entry", Slug: slug, Hazards: []Hazard{Twin}}, folder: "wiki/en",
			typeKey: "type", typeVal: "entry", fmTitle: true, lang: "en"}
		ru := &pageSpec{Page: Page{Title: ruWords[g.r.Intn(len(ruWords))] + " " + ruWords[g.r.Intn(len(ruWords))] + fmt.Sprintf(" %d", k),
			Type: "entry", Slug: slug, Hazards: []Hazard{Twin}}, folder: "wiki/ru",
			typeKey: "type", typeVal: "entry", fmTitle: true, lang: "ru"}
		en.twin, ru.twin = ru, en
		add(en)
		add(ru)
	}
	// notes at the top of wiki/ fill up to n
	for len(g.pages) < n {
		t := newTitle()
		add(&pageSpec{Page: Page{Title: t, Type: "note", Slug: kebab(t)}, folder: "wiki", fmTitle: true})
	}
	// file paths
	for _, p := range g.pages {
		p.Path = p.folder + "/" + p.Slug + ".md"
	}
	// hazards on chosen pages (never on twins, whose names are fixed)
	var plain []*pageSpec
	for _, p := range g.pages {
		if p.lang == "" && p.Type != "source" {
			plain = append(plain, p)
		}
	}
	g.r.Shuffle(len(plain), func(i, j int) { plain[i], plain[j] = plain[j], plain[i] })
	next := 0
	take := func(k int, h Hazard) []*pageSpec {
		var out []*pageSpec
		for i := 0; i < k && next < len(plain); i++ {
			p := plain[next]
			next++
			p.Hazards = append(p.Hazards, h)
			out = append(out, p)
		}
		return out
	}
	take(max(3, n/100), BrokenYAML)
	for _, p := range take(max(1, n/200), ConflictYAML) {
		p.Hazards = append(p.Hazards, BrokenYAML)
	}
	for k, p := range take(max(2, n/50), NoFrontmatter) {
		if k == 0 {
			p.Hazards = append(p.Hazards, BOM) // a BOM and no frontmatter
		}
		p.fmTitle = false
		p.typeKey = ""
		p.Title = p.Slug // the title is the file name
		p.Type = typeOfFolder(p.folder)
	}
	take(max(3, n/20), CRLF)
	take(2, BOM)
	for _, p := range take(max(2, n/100), OddName) {
		// a file name with spaces, or non-ASCII letters
		if len(p.Slug)%2 == 0 {
			p.Path = p.folder + "/" + p.Title + ".md"
		} else {
			p.Path = p.folder + "/" + p.Title + " Café Ünïcode.md"
		}
	}
	take(max(3, n/30), NestedLink)
	take(max(2, n/60), StrayColon)
	take(max(2, n/40), BodySources)
	// duplicate titles: a page takes another page's title
	for _, p := range take(max(2, n/100), DupTitle) {
		for _, q := range g.pages {
			if q != p && q.lang == "" && q.fmTitle && len(q.Hazards) == 0 && q.Type != p.Type {
				p.Title = q.Title
				q.Hazards = append(q.Hazards, DupTitle)
				break
			}
		}
	}
	if !g.o.NoHuge {
		take(1, Huge)
	}
	// a broken frontmatter block still gives the title and type of its
	// lines that are valid YAML alone: a page whose title line is the
	// broken one is indexed by its file name; conflict markers break the
	// block but not the title line
	for _, p := range g.pages {
		if !p.Has(BrokenYAML) {
			continue
		}
		if !p.Has(ConflictYAML) {
			p.Title = strings.TrimSuffix(filepath.Base(p.Path), ".md")
		}
		if p.typeKey != "type" {
			p.Type = typeOfFolder(p.folder)
		}
	}
}

// typeOfFolder is the type synapse gives a page without a frontmatter
// type: the built-in folders' types, else note.
func typeOfFolder(folder string) string {
	switch strings.TrimPrefix(folder, "wiki/") {
	case "entities":
		return "entity"
	case "concepts":
		return "concept"
	case "sources":
		return "source"
	case "synthesis":
		return "synthesis"
	}
	return "note"
}

func (g *gen) other(p *pageSpec) *pageSpec {
	for {
		q := g.pages[g.r.Intn(len(g.pages))]
		if q != p && q.lang == "" {
			return q
		}
	}
}

func (g *gen) external(s string) string {
	if !g.extSeen[s] {
		g.extSeen[s] = true
		g.m.External = append(g.m.External, s)
	}
	return s
}

// citation returns one `sources` list item (YAML text after "- ").
func (g *gen) citation(p *pageSpec, k int) string {
	src := g.sources[g.r.Intn(len(g.sources))]
	switch k % 13 {
	case 0, 1:
		return src // a raw/sources/ path
	case 2:
		return strings.TrimPrefix(src, "raw/sources/") // a bare file name
	case 3:
		if len(g.srcPage) > 0 {
			return g.srcPage[g.r.Intn(len(g.srcPage))].Slug // a bare slug of a source page
		}
		return src
	case 4:
		miss := fmt.Sprintf("raw/sources/gone/%s-%d.md", g.word(), g.r.Intn(1000))
		g.pending = append(g.pending, miss)
		return miss
	case 5:
		return g.external(fmt.Sprintf("https://example.org/%s/%s-%d", g.word(), g.word(), g.r.Intn(100)))
	case 6:
		return g.external(fmt.Sprintf("doi:10.%d/%s.%d", 1000+g.r.Intn(9000), g.word(), g.r.Intn(100)))
	case 7:
		return g.external(fmt.Sprintf("web:https://learn.microsoft.com/en-us/%s/%s", g.word(), g.word()))
	case 8:
		return g.external(fmt.Sprintf("kb:%s-%s", g.word(), g.word()))
	case 9:
		return g.external(fmt.Sprintf("guide:%s/%s", g.word(), g.word()))
	case 10:
		return fmt.Sprintf("%s, J. (20%02d). %s. Journal of %s", titleCase([]string{g.word()}), 10+g.r.Intn(15),
			titleCase([]string{g.word(), g.word()}), titleCase([]string{g.word()})) // free text
	case 11:
		return fmt.Sprintf("\"[[%s]]\"", g.other(p).Slug)
	}
	return fmt.Sprintf("\"%s\"", src) // quoted
}

func (g *gen) date(month, day int) string { return fmt.Sprintf("2025-%02d-%02d", month, day) }

// render writes one page's bytes.
func (g *gen) render(i int, p *pageSpec) []byte {
	var fm []string
	add := func(format string, a ...any) { fm = append(fm, fmt.Sprintf(format, a...)) }
	if p.fmTitle {
		switch {
		case p.Has(BrokenYAML) && !p.Has(ConflictYAML) && i%2 == 0:
			add("title: %s: %s notes", p.Title, g.word()) // an unquoted colon
		case p.Has(BrokenYAML) && !p.Has(ConflictYAML):
			add(`title: "%s "the" %s"`, p.Title, g.word()) // nested quotes
		case i%7 == 1:
			add("title: \"%s\"", p.Title)
		case i%7 == 2:
			add("title: '%s'", p.Title)
		default:
			add("title: %s", p.Title)
		}
	}
	if p.typeKey != "" {
		add("%s: %s", p.typeKey, p.typeVal)
	}
	if !p.Has(NoFrontmatter) {
		switch i % 4 {
		case 0:
			add("tags: [%s, %s]", g.word(), g.word())
		case 1:
			add("tags:\n  - %s\n  - %s", g.word(), g.word())
		case 2:
			add("tags: %s %s", g.word(), g.word())
		}
		if i%9 == 0 {
			add("aliases:\n  - %s", titleCase([]string{g.word(), g.word(), "alias"}))
		}
		m, d := 1+i%12, 1+i%28
		switch i % 7 {
		case 0:
			add("created: %s\nupdated: %s", g.date(m, d), g.date(m, min(d+1, 28)))
		case 1:
			add("created: \"%s\"\nupdated: \"%s\"", g.date(m, d), g.date(m, min(d+1, 28)))
		case 2:
			add("created: %sT09:15:00Z\nupdated: %sT17:45:30Z", g.date(m, d), g.date(m, min(d+1, 28)))
		case 3:
			add("created: '%s'\nlast_updated: %s", g.date(m, d), g.date(m, min(d+1, 28)))
		case 4:
			add("date: %s", g.date(m, d))
		case 5:
			add("updated: \"%s 10:11\"", g.date(m, d))
		}
		if p.Has(ConflictYAML) {
			add("<<<<<<< HEAD\nupdated: %s\n=======\nupdated: %s\n>>>>>>> origin/main", g.date(m, 2), g.date(m, 3))
		}
		// related as ids or as wikilinks (one related key: a duplicate
		// key is a YAML error)
		switch {
		case p.Has(NestedLink):
			add("related: [[%s]]", g.other(p).Slug) // YAML reads a nested list
		case i%5 == 0:
			add("related: [%s, %s]", g.other(p).Slug, g.other(p).Slug)
		case i%5 == 1:
			add("related:\n  - \"[[%s]]\"\n  - \"[[%s]]\"", g.other(p).Slug, g.other(p).Title)
		}
		if i%23 == 0 {
			add("status: draft\nconfidence: 0.%d", 5+g.r.Intn(5))
		}
		if !p.Has(BodySources) {
			key := "sources"
			switch i % 17 {
			case 3:
				key = "source"
			case 5:
				key = "source_file"
			case 8:
				key = "raw_paths"
			}
			nc := 1 + g.r.Intn(4)
			items := make([]string, 0, nc+2)
			for k := 0; k < nc; k++ {
				items = append(items, "  - "+g.citation(p, i+k*5))
			}
			if p.Has(NestedLink) {
				items = append(items, "  - [["+g.other(p).Slug+"]]")
			}
			if p.Has(StrayColon) {
				items = append(items, "  - Interview: "+g.word()+" team, "+g.date(3, 4))
			}
			add("%s:\n%s", key, strings.Join(items, "\n"))
			for _, miss := range g.pending {
				// only `sources` cites files; the other keys
				// are kept as the wiki wrote them
				if key == "sources" && !g.missSet[miss] {
					g.missSet[miss] = true
					g.m.Missing = append(g.m.Missing, miss)
				}
			}
			g.pending = g.pending[:0]
		}
	}
	var b strings.Builder
	if p.Has(BOM) {
		b.WriteString("\ufeff")
	}
	if !p.Has(NoFrontmatter) {
		b.WriteString("---\n")
		for _, l := range fm {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		b.WriteString("---\n")
	}
	g.body(&b, i, p)
	s := b.String()
	if p.Has(CRLF) {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	return []byte(s)
}

// link returns one link to another page in one of the wild spellings.
func (g *gen) link(p *pageSpec, k int) string {
	if p.lang != "" && p.twin != nil {
		// twins link to twins by their shared file name: each language's
		// link must stay in its own folder
		for _, q := range g.pages {
			if q.lang == p.lang && q != p && (k+len(q.Slug))%3 == 0 {
				return "[[" + q.Slug + "]]"
			}
		}
	}
	q := g.other(p)
	switch k % 20 {
	case 0, 1, 2, 3, 4, 5, 6, 7, 8:
		return "[[" + q.Slug + "]]"
	case 9, 10, 11, 12:
		return "[[" + q.Title + "]]" // by title
	case 13, 14:
		return "[[" + q.Slug + "|" + strings.ToLower(q.Title) + "]]" // alias pipe
	case 15:
		return "[[" + strings.TrimSuffix(strings.TrimPrefix(q.Path, "wiki/"), ".md") + "]]" // folder path
	case 16:
		src := g.sources[g.r.Intn(len(g.sources))]
		return "[[../../" + src + "|original]]" // a relative link into raw/
	case 17:
		src := g.sources[g.r.Intn(len(g.sources))]
		return "[source](../../" + src + ")"
	case 18:
		return fmt.Sprintf("[[%s-%s-unwritten]]", g.word(), g.word()) // dangling
	}
	if k%40 == 19 {
		return "![[" + q.Slug + "]]" // an embed, rare
	}
	return "[[" + q.Slug + "#Overview]]" // a heading link, rare
}

func (g *gen) body(b *strings.Builder, i int, p *pageSpec) {
	title := p.Title
	if p.lang == "ru" {
		fmt.Fprintf(b, "# %s\n\n", title)
		for k := 0; k < 3; k++ {
			fmt.Fprintf(b, "%s %s %s %s.\n\n", ruWords[g.r.Intn(len(ruWords))], ruWords[g.r.Intn(len(ruWords))], g.link(p, k), ruWords[g.r.Intn(len(ruWords))])
		}
		return
	}
	fmt.Fprintf(b, "# %s\n\n", title)
	fmt.Fprintf(b, "## Overview\n\n%s %s %s\n\n", g.sentence(12+g.r.Intn(20)), g.link(p, i), g.sentence(8))
	if i%10 == 0 {
		fmt.Fprintf(b, "%s %s。\n\n", zhWords[g.r.Intn(len(zhWords))], zhWords[g.r.Intn(len(zhWords))])
	}
	fmt.Fprintf(b, "## Details\n\n%s %s and %s.\n\n", g.sentence(20+g.r.Intn(30)), g.link(p, i+3), g.link(p, i+7))
	if i%6 == 0 {
		fmt.Fprintf(b, "```\n[[not-a-link]] inside code\n```\n\n")
	}
	if p.Has(BodySources) {
		src := g.sources[g.r.Intn(len(g.sources))]
		fmt.Fprintf(b, "**Sources**: [%s](../../%s), %s\n", strings.TrimSuffix(filepath.Base(src), ".md"), src,
			g.external(fmt.Sprintf("https://example.com/%s", g.word())))
	}
	if p.Has(Huge) {
		b.WriteString("\n## Full transcript\n\n")
		for b.Len() < 1<<20+64<<10 {
			b.WriteString(g.sentence(80))
			b.WriteString("\n\n")
		}
	}
}

// indexPage is a hand-kept index in the wild style: markdown links to .md
// files by folder, and (unless NoHuge) padded past 985 KB with
// one-line summaries.
// logPage is a hand-kept wiki/log.md in the style agents keep them
// (`## [date] op | title` entries with notes), without a final newline.
func (g *gen) logPage() []byte {
	var b strings.Builder
	b.WriteString("# Log\n\nWhat the agent did, newest last.\n")
	for i := 0; i < 40; i++ {
		p := g.pages[g.r.Intn(len(g.pages))]
		op := []string{"ingest", "update", "lint", "query"}[g.r.Intn(4)]
		fmt.Fprintf(&b, "\n## [2025-%02d-%02d] %s | %s\n\n- %s", 1+i%12, 1+i%28, op, p.Title, g.sentence(8))
		if i < 39 {
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}

func (g *gen) indexPage() []byte {
	var b strings.Builder
	b.WriteString("# Index\n\n")
	byFolder := map[string][]*pageSpec{}
	var folders []string
	for _, p := range g.pages {
		if byFolder[p.folder] == nil {
			folders = append(folders, p.folder)
		}
		byFolder[p.folder] = append(byFolder[p.folder], p)
	}
	sort.Strings(folders)
	for _, f := range folders {
		fmt.Fprintf(&b, "## %s\n\n", strings.TrimPrefix(f, "wiki/"))
		for _, p := range byFolder[f] {
			rel := strings.TrimPrefix(p.Path, "wiki/")
			fmt.Fprintf(&b, "- [%s](%s) — %s\n", p.Title, strings.ReplaceAll(rel, " ", "%20"), g.sentence(6))
		}
		b.WriteByte('\n')
	}
	if !g.o.NoHuge {
		for b.Len() < 985<<10 {
			p := g.pages[g.r.Intn(len(g.pages))]
			fmt.Fprintf(&b, "- [%s](%s) — %s\n", p.Title, strings.ReplaceAll(strings.TrimPrefix(p.Path, "wiki/"), " ", "%20"), g.sentence(14))
		}
	}
	return []byte(b.String())
}
