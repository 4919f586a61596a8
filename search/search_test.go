package search_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// testWiki is a small vault indexed with the search indexer.
type testWiki struct {
	t  *testing.T
	v  *vault.Vault
	ix *index.Indexer
}

func newTestWiki(t *testing.T, files map[string]string) *testWiki {
	t.Helper()
	v := testvault.New(t)
	for p, c := range files {
		testvault.Write(t, v, p, c)
	}
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	w := &testWiki{t: t, v: v, ix: &index.Indexer{Vault: v, Store: s, Pages: search.Indexer{}}}
	w.scan()
	return w
}

func (w *testWiki) scan(paths ...string) {
	w.t.Helper()
	if _, err := w.ix.Scan(context.Background(), index.ScanOptions{Paths: paths}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *testWiki) search(q string, k int) ([]search.Hit, error) {
	return search.Search(w.ix.Store, q, search.Options{K: k, ReadFile: func(p string) ([]byte, error) {
		return os.ReadFile(w.v.Abs(p))
	}})
}

// titles returns the hit titles of q, failing the test on an error.
func (w *testWiki) titles(q string) []string {
	w.t.Helper()
	hits, err := w.search(q, 20)
	if err != nil {
		w.t.Fatalf("search %q: %v", q, err)
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Title
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

var basicWiki = map[string]string{
	"wiki/entities/ada-lovelace.md": "---\ntitle: Ada Lovelace\ntype: entity\naliases: [Countess of Lovelace]\ntags: [people/mathematician, history]\n---\n" +
		"# Ada Lovelace\n\nAda wrote the first program for the Analytical Engine.\n\n## Notes on the engine\n\nHer notes describe loops.\n",
	"wiki/entities/charles-babbage.md": "---\ntitle: Charles Babbage\ntype: entity\ntags: [people/engineer, history]\n---\n" +
		"Babbage designed the Analytical Engine and the Difference Engine. The engine was never finished.\n",
	"wiki/concepts/analytical-engine.md": "---\ntitle: Analytical Engine\ntype: concept\ntags: [machines]\n---\n" +
		"A mechanical general-purpose computer designed by [[Charles Babbage]]. Programs were punched on cards.\n",
	"wiki/concepts/remote-vault.md": "---\ntitle: Remote vault\n---\nA remote vault lives on a server; your local vault syncs with it.\n",
	"wiki/concepts/vault-remote.md": "---\ntitle: Server storage\n---\nThe vault is remote: it is stored on a server.\n",
	"wiki/concepts/models.md":       "---\ntitle: Language models\n---\nWe compared GPT-4o with v1.2 of the old model; see gpt-4o notes.\n",
	"wiki/index.md":                 "# Index\n\nzanzibar Analytical Engine Ada Lovelace\n",
	"wiki/log.md":                   "# Log\n\nzanzibar\n",
	"raw/sources/paper.md":          "zanzibar quokka Analytical Engine\n",
}

func TestSearch_Basics(t *testing.T) {
	w := newTestWiki(t, basicWiki)
	hits, err := w.search("analytical engine", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 || hits[0].Title != "Analytical Engine" {
		t.Fatalf("hits = %+v, want 3 with Analytical Engine first", hits)
	}
	h := hits[0]
	if h.ID == "" || h.Type != "concept" || h.Path != "wiki/concepts/analytical-engine.md" || h.Score <= 0 {
		t.Errorf("hit fields: %+v", h)
	}
	if !strings.Contains(h.Snippet, "mechanical general-purpose computer") || strings.Contains(h.Snippet, "---") {
		t.Errorf("snippet %q: want body text without frontmatter", h.Snippet)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("hits not ordered by score: %+v", hits)
		}
	}
	// reserved pages and raw sources are never hits
	if got := w.titles("zanzibar"); len(got) != 0 {
		t.Errorf("zanzibar (only in index.md, log.md and raw/) found %v", got)
	}
	if got := w.titles("quokka"); len(got) != 0 {
		t.Errorf("quokka (only in raw/) found %v", got)
	}
	// k caps the hits
	if hits, _ := w.search("engine", 1); len(hits) != 1 {
		t.Errorf("k=1 gave %d hits", len(hits))
	}
	if hits, _ := w.search("engine", 0); len(hits) != 1 {
		t.Errorf("k=0 gave %d hits, want at least one", len(hits))
	}
}

func TestSearch_Names(t *testing.T) {
	w := newTestWiki(t, basicWiki)
	for q, want := range map[string]string{
		"Countess of Lovelace":          "Ada Lovelace", // alias
		"notes on the engine":           "Ada Lovelace", // heading
		"who was charles babbage?":      "Charles Babbage",
		"charles-babbage":               "Charles Babbage", // file name
		"what is the analytical engine": "Analytical Engine",
	} {
		if got := w.titles(q); len(got) == 0 || got[0] != want {
			t.Errorf("%q → %v, want %q first", q, got, want)
		}
	}
}

func TestSearch_Syntax(t *testing.T) {
	w := newTestWiki(t, basicWiki)
	for _, c := range []struct {
		q    string
		want []string // nil: any order of exactly these
	}{
		{`"remote vault"`, []string{"Remote vault"}},
		{`"vault is remote"`, []string{"Server storage"}},
		{`vault -server`, []string{}},
		{`vault -"remote vault"`, []string{"Server storage"}},
		{`engine -babbage`, []string{"Ada Lovelace"}},
		{`engine type:concept`, []string{"Analytical Engine"}},
		{`engine -type:entity`, []string{"Analytical Engine"}},
		{`engine type:entity type:concept`, []string{"Ada Lovelace", "Analytical Engine", "Charles Babbage"}},
		{`engine tag:people`, []string{"Ada Lovelace", "Charles Babbage"}},
		{`engine tag:#people/engineer`, []string{"Charles Babbage"}},
		{`engine tag:history tag:people/mathematician`, []string{"Ada Lovelace"}},
		{`engine -tag:people`, []string{"Analytical Engine"}},
		{`type:entity`, []string{"Ada Lovelace", "Charles Babbage"}},
		{`tag:machines`, []string{"Analytical Engine"}},
		// nothing but exclusions: a search for those words
		{`-vault -engine`, []string{"Remote vault", "Server storage", "Analytical Engine", "Charles Babbage", "Ada Lovelace"}},
		{`-vault -engine type:entity`, []string{"Charles Babbage", "Ada Lovelace"}},
		{`gpt-4o`, []string{"Language models"}},
		{`GPT 4o`, []string{"Language models"}},
		{`v1.2`, []string{"Language models"}},
		{`"gpt-4o with"`, []string{"Language models"}},
		{`???`, []string{}},
		{`(( "" - ))`, []string{}},
		{`nonexistentword`, []string{}},
		{`"engine was never" finished`, []string{"Charles Babbage"}},
		{`"never engine"`, []string{}},
	} {
		got := w.titles(c.q)
		if !slices.Equal(sorted(got), sorted(c.want)) {
			t.Errorf("%s → %v, want %v", c.q, got, c.want)
		}
	}
	// a query of filters lists pages in title order
	if got := w.titles("type:entity"); !slices.Equal(got, []string{"Ada Lovelace", "Charles Babbage"}) {
		t.Errorf("type:entity → %v, want title order", got)
	}
	// open types: a well-formed type no page has matches nothing
	if hits, err := w.search("engine type:robot", 5); err != nil || len(hits) != 0 {
		t.Errorf("type:robot: %v %v, want no hits", hits, err)
	}
	if _, err := w.search("engine type:ro_bot", 5); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("type:ro_bot: err %v, want invalid", err)
	}
}

func TestSearch_Incremental(t *testing.T) {
	w := newTestWiki(t, basicWiki)
	p := "wiki/concepts/analytical-engine.md"
	testvault.Write(t, w.v, p, "---\ntitle: Analytical Engine\ntype: concept\n---\nNow about jacquard looms only.\n")
	w.scan(p)
	if got := w.titles("jacquard"); !slices.Equal(got, []string{"Analytical Engine"}) {
		t.Errorf("after edit, jacquard → %v", got)
	}
	if got := w.titles("mechanical"); len(got) != 0 {
		t.Errorf("after edit, the old word mechanical → %v", got)
	}
	if got := w.titles("tag:machines"); len(got) != 0 {
		t.Errorf("after edit, the dropped tag still filters: %v", got)
	}
	// a rename is a new path; the old one is gone
	if err := os.Rename(w.v.Abs(p), w.v.Abs("wiki/concepts/engine.md")); err != nil {
		t.Fatal(err)
	}
	w.scan()
	hits, err := w.search("jacquard", 5)
	if err != nil || len(hits) != 1 || hits[0].Path != "wiki/concepts/engine.md" {
		t.Errorf("after rename: %+v %v", hits, err)
	}
	// a deletion leaves nothing behind
	if err := os.Remove(w.v.Abs("wiki/concepts/engine.md")); err != nil {
		t.Fatal(err)
	}
	w.scan()
	if got := w.titles("jacquard"); len(got) != 0 {
		t.Errorf("after delete: %v", got)
	}
	w.ix.Store.View(func(tx *store.Tx) error {
		if st := tx.SearchStats(); st.Docs != 5 {
			t.Errorf("indexed docs = %d, want 5", st.Docs)
		}
		return nil
	})
}

func TestSearch_NotIndexed(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/a.md", "alpha\n")
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// a store scanned without the search indexer (an older synapse)
	if _, err := (&index.Indexer{Vault: v, Store: s}).Scan(context.Background(), index.ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = search.Search(s, "alpha", search.Options{K: 5})
	if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "rebuilds it") {
		t.Fatalf("err = %v, want unavailable saying what rebuilds it", err)
	}
	// the next scan with the search indexer builds it
	if _, err := (&index.Indexer{Vault: v, Store: s, Pages: search.Indexer{}}).Scan(context.Background(), index.ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	if hits, err := search.Search(s, "alpha", search.Options{K: 5}); err != nil || len(hits) != 1 {
		t.Fatalf("after a scan with the search indexer: %v %v", hits, err)
	}
	// an empty vault answers with no hits
	v2 := testvault.New(t)
	s2, err := store.Open(v2.Abs(vault.DBFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if hits, err := search.Search(s2, "alpha", search.Options{K: 5}); err != nil || len(hits) != 0 {
		t.Fatalf("empty vault: %v %v", hits, err)
	}
}

// TestSearch_OldAnalyzer: an index built by other analyzer rules answers
// unavailable to a reader (it is not searched as if current); the next scan
// by a process that writes the store, even of one edited page, rebuilds
// the whole index by the current rules, so every page is found again.
func TestSearch_OldAnalyzer(t *testing.T) {
	w := newTestWiki(t, basicWiki)
	if err := w.ix.Store.Update(func(tx *store.Tx) error { return tx.SetSearchVersion("0-old") }); err != nil {
		t.Fatal(err)
	}
	if _, err := w.search("engine", 5); errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "another version") {
		t.Fatalf("old index before a scan: err %v, want unavailable naming another version", err)
	}
	p := "wiki/concepts/analytical-engine.md"
	testvault.Write(t, w.v, p, "---\ntitle: Analytical Engine\n---\nEdited.\n")
	w.scan(p)
	if got := w.titles("edited"); len(got) != 1 || got[0] != "Analytical Engine" {
		t.Fatalf("the edited page after the rebuild: %v", got)
	}
	var docs, pages int
	_ = w.ix.Store.View(func(tx *store.Tx) error {
		docs, pages = int(tx.SearchStats().Docs), tx.PageCount()
		return nil
	})
	if docs == 0 || docs < pages-2 { // reserved pages are not search docs
		t.Fatalf("after the rebuild the index holds %d docs of %d pages", docs, pages)
	}
}

func TestSearch_Multilingual(t *testing.T) {
	w := newTestWiki(t, map[string]string{
		"wiki/de.md": "---\ntitle: Größenänderung\n---\nDie Größe der Fenster ändern.\n",
		"wiki/zh.md": "---\ntitle: 数据库设计\n---\n关系数据库的设计原则。\n",
		"wiki/ja.md": "---\ntitle: 東京タワー\n---\n東京タワーは東京の観光名所です。\n",
	})
	for q, want := range map[string]string{
		"grossenanderung": "Größenänderung", // folded
		"GRÖSSE":          "Größenänderung",
		"数据库":             "数据库设计",
		"设计原则":            "数据库设计",
		"库":               "数据库设计", // a lone character
		"タワー":             "東京タワー",
		"観光名所":            "東京タワー",
	} {
		if got := w.titles(q); len(got) == 0 || got[0] != want {
			t.Errorf("%q → %v, want %q", q, got, want)
		}
	}
}

// TestSearch_ExactNameBeatsStem: outside English a name that holds the
// query's word as written outranks one that only shares its stem (a
// glossary entry "Вкладка" over the page titled "Вкладки" for the query
// Вкладка), while the stem still finds both; English loanword plurals
// meet their singular in German, Spanish and Italian.
func TestSearch_ExactNameBeatsStem(t *testing.T) {
	w := newTestWiki(t, map[string]string{
		"wiki/Вкладки.md": "---\nlang: ru\n---\nВкладки позволяют открыть несколько заметок в одном окне: каждая вкладка показывает одну заметку.\n",
		"wiki/Словарь.md": "---\nlang: ru\n---\nТермины, которые встречаются в справке.\n\n## Вкладка\n\nВкладка показывает одну заметку.\n\n" +
			"## Хранилище\n\nПапка с заметками.\n",
		"wiki/Sicherung.md": "---\nlang: de\n---\nSo machst du Backups deiner Notizen mit jedem Werkzeug.\n",
		"wiki/Ayuda.md":     "---\nlang: es\n---\nLos plugins de la comunidad amplían la aplicación.\n",
	})
	for q, want := range map[string][]string{
		"Вкладка":                  {"Словарь", "Вкладки"},
		"Вкладки":                  {"Вкладки", "Словарь"},
		"Backup":                   {"Sicherung"},
		"¿cómo instalo un plugin?": {"Ayuda"},
	} {
		got := w.titles(q)
		if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
			t.Errorf("%q → %v, want %v first", q, got, want)
		}
	}
}

// TestSearch_ExactHeadingBeatsStemTitle: outside English a heading that
// is the query word for word outranks a title that only shares its stem
// (Spanish stems importante and importador alike to import), and a title
// or alias that is the query still outranks such a heading.
func TestSearch_ExactHeadingBeatsStemTitle(t *testing.T) {
	w := newTestWiki(t, map[string]string{
		"wiki/Importador.md": "---\nlang: es\n---\nEl importador convierte las notas de otras aplicaciones.\n",
		"wiki/Introducción a Sync.md": "---\nlang: es\n---\nSync sincroniza tus notas entre dispositivos y guarda su historial de versiones. " +
			"Puedes elegir qué carpetas, tipos de archivo y ajustes se sincronizan en cada dispositivo de tu cuenta.\n\n" +
			"## Importante\n\nSync no es una copia de seguridad.\n\n## Precios\n\nVer la página de planes.\n",
		"wiki/Incrustar archivos.md": "---\nlang: es\naliases:\n  - How to/Incrustar archivos\n---\nLos archivos incrustados muestran su contenido en una nota.\n",
		"wiki/Formatos de archivo aceptados.md": "---\nlang: es\n---\nObsidian reconoce estos formatos de archivo.\n\n" +
			"### Incrustar archivos\n\nPuedes incrustar archivos de todos estos formatos: incrustar archivos de imagen, de audio y de vídeo, " +
			"e incrustar archivos PDF. Consulta Incrustar archivos.\n",
	})
	for q, want := range map[string]string{
		"Importante":                "Introducción a Sync",
		"How to/Incrustar archivos": "Incrustar archivos",
		"Incrustar archivos":        "Incrustar archivos",
	} {
		if got := w.titles(q); len(got) == 0 || got[0] != want {
			t.Errorf("%q → %v, want %s first", q, got, want)
		}
	}
}

// TestSearch_WordForWord: a heading that is the query word for word,
// stopwords included (Con filtros), outranks a title that holds only the
// query's content words (Filtros), in Spanish and in English; without the
// stopwords the title stays first, and so does a title that is itself
// the query word for word.
func TestSearch_WordForWord(t *testing.T) {
	w := newTestWiki(t, map[string]string{
		"wiki/Filtros.md": "---\nlang: es\n---\nLos filtros cambian el formato de una variable: los filtros se encadenan, y cada filtro recibe el valor del anterior. " +
			"Hay filtros de fechas, filtros de texto y filtros de listas.\n",
		"wiki/Lógica.md": "---\nlang: es\n---\nLa lógica de las plantillas decide qué se muestra.\n\n## Condiciones\n\nUna condición compara dos valores.\n\n" +
			"## Con filtros\n\nUna condición puede usar filtros.\n",
		"wiki/Filters.md": "Filters change the format of a variable: filters chain, and each filter gets the value of the one before. " +
			"There are date filters, text filters and list filters.\n",
		"wiki/Logic.md": "Template logic decides what is shown.\n\n## Conditions\n\nA condition compares two values.\n\n" +
			"## With filters\n\nA condition can use filters.\n",
		"wiki/Glosario.md":        "---\nlang: es\n---\nTérminos de la ayuda.\n\n## Barra de estado\n\nLa barra de estado está abajo.\n",
		"wiki/Barra de estado.md": "---\nlang: es\n---\nLa barra de estado muestra el recuento de palabras y el estado de la sincronización.\n",
		// the same heading but for one stopword
		"wiki/Configurar Publish.md": "---\nlang: es\n---\nPublica tus notas.\n\n## Iniciar sesión con tu cuenta de Obsidian\n\nAbre los ajustes, Cuenta, Iniciar sesión.\n",
		"wiki/Configurar Sync.md":    "---\nlang: es\n---\nSincroniza tus notas.\n\n## Iniciar sesión con su cuenta de Obsidian\n\nAbra los ajustes, Cuenta, Iniciar sesión.\n",
	})
	for q, want := range map[string]string{
		"Con filtros":     "Lógica",
		"filtros":         "Filtros",
		"With filters":    "Logic",
		"filters":         "Filters",
		"Barra de estado": "Barra de estado",
		"Iniciar sesión con su cuenta de Obsidian": "Configurar Sync",
		"Iniciar sesión con tu cuenta de Obsidian": "Configurar Publish",
	} {
		if got := w.titles(q); len(got) == 0 || got[0] != want {
			t.Errorf("%q → %v, want %s first", q, got, want)
		}
	}
}

// TestSearch_Sections: of two pages with the same heading and the same
// words, the one whose section under that heading is about those words
// ranks first for a query naming the section.
func TestSearch_Sections(t *testing.T) {
	w := newTestWiki(t, map[string]string{
		"wiki/a-elsewhere.md": "---\ntitle: Alpha\n---\n## Quokka habitat\n\nSee the other page.\n\n## Notes\n\nThe quokka habitat is dry scrub.\n",
		"wiki/b-about.md":     "---\ntitle: Beta\n---\n## Quokka habitat\n\nThe quokka habitat is dry scrub.\n\n## Notes\n\nSee the other page.\n",
	})
	if got := w.titles("quokka habitat"); len(got) != 2 || got[0] != "Beta" {
		t.Errorf("quokka habitat → %v, want Beta (whose section is about it) first", got)
	}
}

// TestSnippet_Markup: a snippet shows what a reader of the rendered page
// sees, never raw markup.
func TestSnippet_Markup(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"[[Introduction to Obsidian Sync|Obsidian Sync]] offers a headless client.", "Obsidian Sync offers a headless client."},
		{"To open it, select **Vault profile** ![[lucide-chevrons-up-down.svg#icon]] at the bottom of the [[Sidebar|left sidebar]].",
			"To open it, select Vault profile at the bottom of the left sidebar."},
		{"See [[Internal links#Link to a heading]] and [[#Embed files]] or [[Note^abc]].", "See Internal links > Link to a heading and Embed files or Note^abc."},
		{"See [[Note#^block-1]] first.", "See Note first."},
		{"Select **[Read the changelog](<https://obsidian.md/changelog/>)** to view notes, or [Purchase](https://obsidian.md/account/commercial).",
			"Select Read the changelog to view notes, or Purchase."},
		{"![diagram](img/a.png) An *image* and _emphasis_ and ~~old~~ ==marked== text with snake_case.", "An image and emphasis and old marked text with snake_case."},
		{"<a name=\"bkmk_test\"></a> Select <b>test</b> packages<br>now.", "Select test packages now."},
		{"Use the `[[^^block]]` syntax or `<br>` tags.", "Use the [[^^block]] syntax or <br> tags."},
		{"> [!tip] Tip\n> The palette supports fuzzy matching.", "Tip The palette supports fuzzy matching."},
		{"- [ ] a task\n- [x] done\n1. first\n2. second", "a task done first second"},
		{"| Syntax | Description |\n| ------ | ----------- |\n| `[[Link]]` | [[Internal links]] |", "Syntax Description [[Link]] Internal links"},
		{"A footnote[^1] here. %%a hidden comment%% Visible ^note-id", "A footnote here. Visible"},
		{"```js\nconst x = 1;\n```\nAfter the code.", "const x = 1; After the code."},
		{"```\nob login [--email <email>] **not bold**\n```", "ob login [--email <email>] **not bold**"},
		{"Links: <https://example.com> and \\*not emphasis\\*.", "Links: https://example.com and *not emphasis*."},
		{"| Layout | App&nbsp;version |\n| --- | --- |\n| Table &amp; cards&nbsp;&mdash;&#8212;&#x2014; caf&eacute; | 1.9 |", "Layout App version Table & cards ——— café 1.9"},
		{"AT&T, &bogus; and a&b; 5 &lt; 6 &#12x; &#;", "AT&T, &bogus; and a&b; 5 < 6 &#12x; &#;"},
		{"Use `&nbsp;` in code, not\u00a0here.", "Use &nbsp; in code, not here."},
		{"| [[Page#Part\\|the label]] | [[Other\\|x]] |", "the label x"},
		{"See [[Page|]] and [[Page#Part|  ]] and [[Other\\|]].", "See Page and Page > Part and Other."},
	} {
		if got := search.Snippet("---\ntitle: X\n---\n"+c.body, nil); got != c.want {
			t.Errorf("Snippet(%q)\n got %q\nwant %q", c.body, got, c.want)
		}
	}
	// a match far into a line never starts the snippet inside an HTML tag
	tagged := strings.Repeat("filler words here ", 30) + `<div data-note="one two three four five six seven eight nine ten" class="quokka-box">The quokka</div> says more.` + "\n"
	if got := search.Snippet(tagged, map[string]float64{"quokka": 1}); strings.ContainsAny(got, "<>\"=") || !strings.Contains(got, "The quokka says more.") {
		t.Errorf("snippet around an HTML tag: %q", got)
	}
	// a match inside a link's label starts the snippet at the link, not
	// inside it
	long := strings.Repeat("filler words here ", 30) + "and then [[Some long page title|the quokka page]] says more.\n"
	if got := search.Snippet(long, map[string]float64{"quokka": 1}); strings.Contains(got, "|") || strings.Contains(got, "]]") || !strings.Contains(got, "the quokka page says more.") {
		t.Errorf("snippet around a link label: %q", got)
	}
}

func TestSnippetAndHighlight(t *testing.T) {
	text := "---\ntitle: X\n---\n# Heading\n\n" + strings.Repeat("filler words here. ", 40) +
		"The **remote vault** syncs with [[Local vault|your vault]].\n" + strings.Repeat("more filler. ", 40)
	s := search.Snippet(text, map[string]float64{"remot": 2, "vault": 1})
	if !strings.Contains(s, "remote vault syncs with your vault.") || !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") {
		t.Errorf("snippet %q", s)
	}
	if len(s) > 260 {
		t.Errorf("snippet is %d bytes", len(s))
	}
	if s := search.Snippet("---\ntitle: X\n---\n## Start here\nbody", nil); s != "Start here body" {
		t.Errorf("no-match snippet %q", s)
	}
	spans := search.Highlight(`"remote vault" -sync type:note`, s)
	var marked []string
	for _, sp := range spans {
		marked = append(marked, s[sp[0]:sp[1]])
	}
	if !slices.Contains(marked, "remote") || !slices.Contains(marked, "vault") || slices.Contains(marked, "syncs") {
		t.Errorf("highlighted %q in %q", marked, s)
	}
	if spans := search.Highlight("type:bogus vault", "the vault"); len(spans) != 1 {
		t.Errorf("highlight with a bad filter: %v", spans)
	}
}
