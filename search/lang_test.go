package search

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseLanguage(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Language
		ok   bool
	}{
		{"de", German, true}, {"German", German, true}, {"deutsch", German, true}, {"de-CH", German, true},
		{"pt_BR", Portuguese, true}, {"es", Spanish, true}, {"Español", Spanish, true}, {"ru", Russian, true},
		{"ja", English, true}, {"zh-Hans", English, true}, {"", English, false}, {"klingon", English, false},
	} {
		got, ok := ParseLanguage(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseLanguage(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	if _, err := ConfigLanguage("klingon"); err == nil || !strings.Contains(err.Error(), "klingon") || !strings.Contains(err.Error(), "spanish") {
		t.Errorf("ConfigLanguage(klingon) = %v", err)
	}
}

func TestDetectLanguage(t *testing.T) {
	for _, c := range []struct {
		text string
		want Language
		ok   bool
	}{
		{"Una bóveda es una carpeta de tu sistema de archivos en la que se guardan las notas.", Spanish, true},
		{"Un vault è una cartella del file system in cui sono salvate le note, anche quelle nuove.", Italian, true},
		{"Хранилище — это папка в файловой системе, в которой хранятся заметки и все их вложения.", Russian, true},
		{"Ein Tresor ist ein Ordner auf deinem Dateisystem, in dem die Notizen und Anhänge liegen.", German, true},
		{"Un coffre est un dossier de votre système de fichiers dans lequel sont les notes.", French, true},
		{"A vault is a folder on your file system that holds the notes and their attachments.", English, true},
		// Russian prose around more Latin-script code, markup or names
		// than Cyrillic words: the function words decide
		{"Когда вы создаёте базу в Obsidian, она сохраняется как файл. Вот пример файла базы, и это всё.\n" +
			"```yaml\nfilters:\n  or:\n    - file.hasTag(\"tag\")\n    - file.hasLink(\"Textbook\")\n" +
			"formulas:\n  formatted_price: 'if(price, price.toFixed(2) + \" dollars\")'\n  ppu: \"(price / age).toFixed(2)\"\n" +
			"views:\n  - type: table\n    name: \"My table\"\n    limit: 10\n```\n", Russian, true},
		{"Спасибо всем, кто помогает нам с переводом и не только.\n- Ana da Silva\n- Jean de la Fontaine\n" +
			"- Maria dos Santos\n- Pedro e Paulo Costa\n- John Smith\n- Li Wei\n- Anna van der Berg\n- Marco Rossi\n", Russian, true},
		{"Obsidian Sync", English, false},
		{"保管庫はパソコン上のフォルダーです。", English, false},
	} {
		got, ok := DetectLanguage(c.text)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("DetectLanguage(%q) = %v, %v; want %v, %v", c.text, got, ok, c.want, c.ok)
		}
	}
}

// TestAnalyzer_Languages: words are stemmed in the analyzer's language;
// outside English a word whose stem differs is also kept as it is (a
// Whole token right after its stem).
func TestAnalyzer_Languages(t *testing.T) {
	for _, c := range []struct {
		lang     Language
		in, want string
	}{
		{Spanish, "Bóvedas nuevas de la aplicación", "boved =bovedas nuev =nuevas de! la! aplic =aplicacion"},
		{Russian, "Заметки и заметками", "заметк =заметки и! заметк =заметками"},
		{Russian, "plugins и Obsidian", "plugin и! obsidian"}, // ASCII words: English
		{Italian, "collegamenti interni", "colleg =collegamenti intern =interni"},
		// English plurals in German, Spanish, Italian: the singular's stem
		{German, "Häuser und Backups", "haus =hauser und! backup =backups"},
		{German, "Backup Laptops Handys Autos Glas", "backup laptop =laptops handy =handys autos glas"},
		{Spanish, "plugins y tags en notas", "plugin =plugins y! tag =tags en! not =notas"},
		{Italian, "i plugin e gli snippets", "i! plugin e! gli! snippet =snippets"},
		{English, "running notes", "run note"},
		{Spanish, "数据库 -Force", "~数据 ~据库 =-force forc =force"},
	} {
		a := NewAnalyzer()
		a.SetLanguage(c.lang)
		var out []string
		a.Each(c.in, func(tk Token) {
			x := tk.Term
			switch tk.Kind {
			case Whole:
				x = "=" + x
			case Gram:
				x = "~" + x
			}
			if tk.Stop {
				x += "!"
			}
			out = append(out, x)
		})
		if got := strings.Join(out, " "); got != c.want {
			t.Errorf("%v: analyze %q\n got %s\nwant %s", c.lang, c.in, got, c.want)
		}
	}
}

// TestParseQuery_Language: a query shows its language by its script or
// its function words; Resolve settles it against the index's languages.
func TestParseQuery_Language(t *testing.T) {
	for _, c := range []struct {
		in    string
		langs map[string]int // pages per language in the index
		terms map[string]int // other indexed terms
		want  Language
	}{
		{"как создать хранилище", nil, nil, Russian},
		{"¿cómo creo una bóveda?", nil, nil, Spanish},
		{"how do I make a vault", nil, nil, English},
		{"bóvedas", nil, nil, English},                                    // no evidence, no index
		{"bóvedas", map[string]int{"es": 10}, nil, Spanish},               // the vault's only language
		{"how do I make a vault", map[string]int{"es": 10}, nil, Spanish}, // English not in the vault
		{"collegamenti interni", map[string]int{"en": 5, "it": 3}, map[string]int{"colleg": 2, "intern": 2}, Italian},
		{"running notes", map[string]int{"en": 5, "it": 3}, map[string]int{"run": 2, "note": 2}, English},
		// an English word another language stems to a word the index
		// also holds (Hungarian run → ru, Italian pie → pi): the word
		// as written is indexed, so the other reading is no evidence,
		// whichever language has more pages
		{"run", map[string]int{"en": 6634, "hu": 2}, map[string]int{"run": 1129, "ru": 3}, English},
		{"pie", map[string]int{"en": 6634, "it": 2}, map[string]int{"pie": 1, "pi": 21}, English},
		{"run", map[string]int{"en": 5, "hu": 300}, map[string]int{"run": 20, "ru": 3}, English},
		{"open file", map[string]int{"en": 500, "hu": 2, "it": 2}, map[string]int{"open": 40, "op": 3, "file": 90, "fil": 2}, English},
		// the other language's stems are its only reading: it still wins
		{"collegamenti interni", map[string]int{"en": 500, "it": 20}, map[string]int{"colleg": 2, "intern": 2}, Italian},
	} {
		q, err := ParseQuery(c.in)
		if err != nil {
			t.Fatal(err)
		}
		if c.langs != nil {
			q.Resolve(func(term string) int {
				if code, ok := strings.CutPrefix(term, langTermPrefix); ok {
					return c.langs[code]
				}
				return c.terms[term]
			})
		}
		if q.Language() != c.want {
			t.Errorf("%q (index %v): language %v, want %v", c.in, c.langs, q.Language(), c.want)
		}
	}
}

// BenchmarkPageLanguage: detection reads the start of every page a
// reindex analyzes.
//
//	go test ./search -run XXX -bench PageLanguage -count 6
func BenchmarkPageLanguage(b *testing.B) {
	for _, p := range []string{"obsidian-help-en/Obsidian Sync/Introduction to Obsidian Sync.md", "obsidian-help-ru/Obsidian Sync/Введение в Obsidian Sync.md"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", p))
		if err != nil {
			b.Fatal(err)
		}
		text := string(data)
		b.Run(strings.SplitN(p, "/", 2)[0], func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				PageLanguage(nil, "Obsidian Sync", text, English)
			}
		})
	}
}
