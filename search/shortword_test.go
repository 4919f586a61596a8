package search_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/search"
)

// shortWordWiki is a command reference in English with a few pages in
// other languages: their stemmers read English words as other words
// (Hungarian stems run to ru, Italian pie to pi), and the English pages
// hold those other words too (ip rule's "ru", the pi command).
var shortWordWiki = map[string]string{
	"wiki/gh-run.md":      "---\ntitle: gh run\n---\n> View, run and watch recent workflow runs.\n\n- Run a workflow:\n\n`gh run`\n",
	"wiki/npm-run.md":     "---\ntitle: npm run\n---\n> Run a script from the package.\n\n- Run the build script:\n\n`npm run build`\n",
	"wiki/docker.md":      "---\ntitle: docker\n---\n> Manage containers.\n\n- Run a container: `docker run image`\n- Run it in the background: `docker run -d image`\n",
	"wiki/cargo.md":       "---\ntitle: cargo\n---\n> Build and run Rust packages.\n\n- Run the tests: `cargo test`\n",
	"wiki/make.md":        "---\ntitle: make\n---\n> Run the targets of a Makefile.\n",
	"wiki/cron.md":        "---\ntitle: cron\n---\n> Run commands on a schedule.\n",
	"wiki/rules.md":       "---\ntitle: Rules\n---\nA rule is kept for each route: the rule's table decides.\n",
	"wiki/ip-rule.md":     "---\ntitle: ip rule\n---\n> IP routing policy database management.\n\n- Display the routing policy:\n\n`ip ru|rule`\n\n- Add a rule: `ip ru add from 10.0.0.0/8`\n",
	"wiki/translate.md":   "---\ntitle: argos-translate\n---\n> Translate text offline.\n\n- Translate from Arabic to Russian:\n\n`argos-translate --from ar --to ru`\n",
	"wiki/pie.md":         "---\ntitle: pie\n---\n> Make a pie chart of the numbers given.\n\n`pie chart.csv`\n",
	"wiki/pi.md":          "---\ntitle: pi\n---\n> Compute the digits of pi.\n\n`pi 100`\n\n- Print pi to 1000 digits: `pi 1000`\n",
	"wiki/pinout.md":      "---\ntitle: pinout\n---\n> Show the pin layout of the board: pi pi pi.\n",
	"wiki/hu-ablak.md":    "---\ntitle: Ablakok\n---\nAz ablakok és a fülek között is van egy gomb, ami nem mindig látszik, de ha a menü meg van nyitva, akkor már igen.\n",
	"wiki/hu-futtat.md":   "---\ntitle: Futtatás\n---\nA parancs az ablakban fut, és nem áll le, ha a gomb meg van nyomva; de ez csak egy példa, amely mindig működik.\n",
	"wiki/it-torta.md":    "---\ntitle: Torta\n---\nLa torta è pronta quando il forno si spegne: non aprire lo sportello prima che sia tutto cotto, e poi servi con le pie fette.\n",
	"wiki/it-finestra.md": "---\ntitle: Finestra\n---\nLa finestra si apre con un clic: per chiuderla, premi il pulsante che si trova in alto, come nelle altre finestre del sistema.\n",
}

// TestSearch_ShortWordsStayThemselves: in a wiki mostly in English with
// a few pages in other languages, a short English word is searched as
// itself, not as what another language's stemmer makes of it — unquoted
// and quoted, alone and beside another word.
func TestSearch_ShortWordsStayThemselves(t *testing.T) {
	w := newTestWiki(t, shortWordWiki)
	for _, q := range []string{"run", `"run"`, "run script", "pie", `"pie"`, "pie chart", "rule", "ru", "pi"} {
		hits, err := w.search(q, 3)
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		if len(hits) == 0 {
			t.Errorf("%q: no hits", q)
			continue
		}
		data, err := os.ReadFile(w.v.Abs(hits[0].Path))
		if err != nil {
			t.Fatal(err)
		}
		for _, word := range strings.Fields(strings.Trim(q, `"`)) {
			if !slices.Contains(plainTokens(string(data)), word) {
				t.Errorf("%q: the first hit %s does not hold %q (hits %v)", q, hits[0].Path, word, hitPaths(hits))
			}
		}
	}
}

func hitPaths(hits []search.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Path
	}
	return out
}
