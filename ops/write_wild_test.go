package ops

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/internal/wildgen"
	"github.com/synapse-wiki/synapse/store"
)

// TestWild_TypesOnEverySurface: every type the wild vault uses is a
// filter of list_pages and search, and matches exactly its pages; a
// well-formed type no page has matches nothing.
func TestWild_TypesOnEverySurface(t *testing.T) {
	e, m := wildVault(t, wildgen.Options{Seed: 5, NoHuge: true})
	ctx := context.Background()
	count := map[string]int{}
	for _, p := range m.Pages {
		count[p.Type]++
	}
	for _, typ := range append(m.Types(), "person") {
		l, err := listPages(ctx, e, &ListPagesIn{Type: typ, Limit: 1000})
		if err != nil || l.Total != count[typ] {
			t.Errorf("list_pages type %s: total %v (%v), want %d", typ, l, err, count[typ])
			continue
		}
		// a type is a lower-case word: upper case is refused, naming it
		if _, err := searchWiki(ctx, e, &SearchIn{Query: "alpha beacon type:" + strings.ToUpper(typ), K: 5}); errs.CodeOf(err) != errs.Invalid ||
			!strings.Contains(err.Error(), `did you mean "type:`+typ+`"?`) {
			t.Errorf("search type:%s: %v", strings.ToUpper(typ), err)
		}
		for _, q := range []string{"type:" + typ, "alpha beacon type:" + typ} {
			out, err := searchWiki(ctx, e, &SearchIn{Query: q, K: 50})
			if err != nil {
				t.Errorf("search %q: %v", q, err)
				continue
			}
			for _, h := range out.Hits {
				if h.Type != typ {
					t.Errorf("search %q: hit %s of type %s", q, h.Path, h.Type)
				}
			}
			if strings.HasPrefix(q, "type:") && len(out.Hits) != min(count[typ], 50) {
				t.Errorf("search %q: %d hits, want %d", q, len(out.Hits), min(count[typ], 50))
			}
		}
	}
	if _, err := listPages(ctx, e, &ListPagesIn{Type: "per_son"}); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("malformed type: %v", err)
	}
}

// TestWild_NewPageFolder: a new page of type T goes to the folder holding
// most pages of T, else T's built-in folder, else wiki/T/.
func TestWild_NewPageFolder(t *testing.T) {
	e, _ := wildVault(t, wildgen.Options{Seed: 5, NoHuge: true})
	for _, c := range []struct{ typ, dir string }{
		{"question", "wiki/questions"}, // beside the other questions (a few live in topics/)
		{"topic", "wiki/topics"},
		{"entry", "wiki/en"},               // a tie between en/ and ru/: the shorter, then the first
		{"note", "wiki"},                   // notes live at the top of wiki/
		{"comparison", "wiki/comparisons"}, // no page has it: its built-in folder
		{"person", "wiki/person"},          // no page has it and it has no folder
	} {
		out := write(t, e, &WritePageIn{Title: "A new " + c.typ, Content: "Body.\n", Type: c.typ})
		if d := path.Dir(out.Path); d != c.dir || out.Type != c.typ {
			t.Errorf("new %s page at %s (type %s), want in %s/", c.typ, out.Path, out.Type, c.dir)
		}
	}
}

// TestWild_BrokenPagesIndexed: a page whose frontmatter is not valid YAML
// (unquoted colon, nested quotes, conflict markers) is indexed by its file
// name, its links and body count, get_page says what is wrong and where,
// and a write keeps its frontmatter bytes while the body changes.
func TestWild_BrokenPagesIndexed(t *testing.T) {
	e, m := wildVault(t, wildgen.Options{Seed: 5, NoHuge: true})
	ctx := context.Background()
	n := 0
	for _, p := range m.Pages {
		if !p.Has(wildgen.BrokenYAML) {
			continue
		}
		n++
		g, err := getPage(ctx, e, &GetPageIn{Title: p.Path})
		if err != nil {
			t.Fatal(err)
		}
		if g.Title != p.Title || !strings.HasPrefix(g.FrontmatterError, "line ") || len(g.Links) == 0 || g.Frontmatter.Len() != 0 {
			t.Errorf("%s: title %q, frontmatter error %q, %d links", p.Path, g.Title, g.FrontmatterError, len(g.Links))
		}
		out, err := searchWiki(ctx, e, &SearchIn{Query: strings.ReplaceAll(p.Title, "-", " "), K: 50})
		found := false
		for _, h := range out.Hits {
			found = found || h.Path == p.Path
		}
		if err != nil || !found {
			t.Errorf("%s: not found by its title words (%v)", p.Path, err)
		}
		before := readFile(t, e.Vault, p.Path)
		w, err := WritePage(ctx, e, &WritePageIn{Title: p.Path, Content: g.Content + "One more line.\n"})
		if err != nil || w.Unchanged {
			t.Fatalf("%s: body edit: %+v %v", p.Path, w, err)
		}
		after := readFile(t, e.Vault, p.Path)
		if after != before+"One more line.\n" {
			t.Errorf("%s: the write changed more than the body:\n%s\n---\n%s", p.Path, before, after)
		}
		// a change to its keys is refused with what to fix
		_, err = WritePage(ctx, e, &WritePageIn{Title: p.Path, Content: g.Content, Tags: []string{"x"}})
		if errs.CodeOf(err) != errs.Conflict || !strings.Contains(errs.Message(err), g.FrontmatterError) {
			t.Errorf("%s: key change on broken frontmatter: %v", p.Path, err)
		}
	}
	if n < 3 {
		t.Fatalf("%d broken pages", n)
	}
}

// TestWritePage_FixBrokenFrontmatter: sending the page with a corrected
// frontmatter block replaces the broken one.
func TestWritePage_FixBrokenFrontmatter(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/topics/x.md", "---\ntitle: Foo: bar\nupdated: 2025-01-01\n---\nBody.\n")
	e, _ := openEnv(t, v)
	g := getPageOut(t, e, "wiki/topics/x.md")
	if g.FrontmatterError != "line 2: mapping values are not allowed in this context" {
		t.Fatalf("frontmatter_error %q", g.FrontmatterError)
	}
	// the broken block as page get prints it: unchanged
	out := write(t, e, &WritePageIn{Title: "x", Content: "---\ntitle: Foo: bar\nupdated: 2025-01-01\n---\nBody.\n"})
	if !out.Unchanged {
		t.Fatalf("broken block written back: %+v", out)
	}
	out = write(t, e, &WritePageIn{Title: "x", Content: "---\ntitle: \"Foo: bar\"\nupdated: 2025-01-01\n---\nBody.\n"})
	if got := readFile(t, v, out.Path); got != "---\ntitle: \"Foo: bar\"\nupdated: 2026-05-01\n---\nBody.\n" || out.Title != "Foo: bar" {
		t.Fatalf("fixed: %q %+v", got, out)
	}
}

// TestWritePage_HonestDates: created only when synapse creates the file;
// updated in the format the page uses, and only when something changed.
func TestWritePage_HonestDates(t *testing.T) {
	v := testvault.New(t)
	pages := map[string]string{
		"wiki/a.md": "---\ntitle: A\n---\nBody.\n",
		"wiki/b.md": "---\ntitle: B\nupdated: 2025-01-02T03:04:05Z\n---\nBody.\n",
		"wiki/c.md": "---\ntitle: C\nupdated: \"2025-01-02\"\n---\nBody.\n",
		"wiki/d.md": "---\ntitle: D\nlast_updated: '2025-01-02 10:11'\n---\nBody.\n",
		"wiki/e.md": "No frontmatter.\n",
		"wiki/f.md": "---\ntitle: F\nupdated: 2025-01-02T03:04:05.250+02:00\ncreated: 2024-12-01\n---\nBody.\n",
	}
	for p, s := range pages {
		testvault.Write(t, v, p, s)
	}
	e, _ := openEnv(t, v)
	want := map[string]string{
		"wiki/a.md": "---\ntitle: A\nupdated: 2026-05-01\n---\nEdited.\n",
		"wiki/b.md": "---\ntitle: B\nupdated: " + testNow.UTC().Format("2006-01-02T15:04:05Z") + "\n---\nEdited.\n",
		"wiki/c.md": "---\ntitle: C\nupdated: \"2026-05-01\"\n---\nEdited.\n",
		"wiki/d.md": "---\ntitle: D\nlast_updated: '2026-05-01 14:30'\n---\nEdited.\n",
		"wiki/e.md": "Edited.\n",
		"wiki/f.md": "---\ntitle: F\nupdated: " + testNow.In(fixedZone(2)).Format("2006-01-02T15:04:05.999999999-07:00") + "\ncreated: 2024-12-01\n---\nEdited.\n",
	}
	for p := range pages {
		// written back as it is: nothing changes, not even updated
		g := getPageOut(t, e, p)
		fm := map[string]any{}
		for _, k := range g.Frontmatter.Keys() {
			fm[k] = g.Frontmatter.Value(k)
		}
		if out := write(t, e, &WritePageIn{Title: p, Content: g.Content, Frontmatter: fm}); !out.Unchanged {
			t.Errorf("%s: written back: %+v", p, out)
		}
		write(t, e, &WritePageIn{Title: p, Content: "Edited.\n", Frontmatter: fm})
		if got := readFile(t, v, p); got != want[p] {
			t.Errorf("%s:\n%s\nwant:\n%s", p, got, want[p])
		}
	}
	// a new page: created and updated, plain dates
	out := write(t, e, &WritePageIn{Title: "New", Content: "x\n"})
	if got := readFile(t, v, out.Path); !strings.HasSuffix(got, "created: 2026-05-01\nupdated: 2026-05-01\n---\nx\n") {
		t.Errorf("new page:\n%s", got)
	}
}

// TestWritePage_InputRules: the caps and rules on write_page's input.
func TestWritePage_InputRules(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "raw/sources/ok.md", "ok\n")
	outside := filepath.Join(filepath.Dir(v.Root), "outside")
	must(t, os.MkdirAll(outside, 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644))
	must(t, os.Symlink(outside, v.Abs("raw/sources/dirlink")))
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), v.Abs("raw/sources/filelink.md")))
	e, _ := openEnv(t, v)
	write(t, e, &WritePageIn{Title: "Page", Content: "x\n"})
	snap := snapshot(t, v)
	many := make([]string, 200000)
	for i := range many {
		many[i] = "alias " + string(rune('a'+i%26))
	}
	cases := []struct {
		name string
		in   WritePageIn
		code errs.Code
		msg  string
	}{
		{"rename to index", WritePageIn{Title: "Page", Content: "x\n", Frontmatter: map[string]any{"title": "Index"}}, errs.Invalid, `frontmatter.title "Index" is reserved for wiki/index.md`},
		{"alias log", WritePageIn{Title: "Page", Content: "x\n", Aliases: []string{"log"}}, errs.Invalid, `alias "log" is reserved for wiki/log.md`},
		{"alias overview in map", WritePageIn{Title: "Page", Content: "x\n", Frontmatter: map[string]any{"aliases": []any{"Overview.md"}}}, errs.Invalid, `alias "Overview.md" is reserved`},
		{"alias in block", WritePageIn{Title: "Page", Content: "---\naliases: [index]\n---\nx\n"}, errs.Invalid, `alias "index" is reserved`},
		{"new page index", WritePageIn{Title: "INDEX", Content: "x\n"}, errs.Invalid, "wiki/index.md"},
		{"bidi override", WritePageIn{Title: "abc\u202etxt.exe", Content: "x\n"}, errs.Invalid, "bidirectional control character (U+202E)"},
		{"line separator", WritePageIn{Title: "a\u2028b", Content: "x\n"}, errs.Invalid, "line or paragraph separator (U+2028)"},
		{"bidi alias", WritePageIn{Title: "Page", Content: "x\n", Aliases: []string{"x\u2066y"}}, errs.Invalid, "bidirectional control character (U+2066)"},
		{"200k aliases", WritePageIn{Title: "Page", Content: "x\n", Aliases: many}, errs.Invalid, "200000 aliases given; the limit is 100"},
		{"101 tags", WritePageIn{Title: "Page", Content: "x\n", Tags: numbered("t", 101)}, errs.Invalid, "101 tags; the limit is 100"},
		{"symlinked folder out", WritePageIn{Title: "Page", Content: "x\n", Sources: []string{"dirlink/secret.txt"}}, errs.Invalid, `source "raw/sources/dirlink/secret.txt" resolves outside raw/sources/ (through a symlink)`},
		{"symlinked folder out, missing file", WritePageIn{Title: "Page", Content: "x\n", Sources: []string{"dirlink/nope.txt"}}, errs.Invalid, `source "raw/sources/dirlink/nope.txt" resolves outside raw/sources/ (through a symlink)`},
		{"symlinked file out", WritePageIn{Title: "Page", Content: "x\n", Sources: []string{"filelink.md"}}, errs.Invalid, "resolves outside raw/sources/"},
		{"hidden source", WritePageIn{Title: "Page", Content: "x\n", Sources: []string{".git/config"}}, errs.Invalid, "hidden file"},
		{"outside path", WritePageIn{Title: "Page", Content: "x\n", Sources: []string{"raw/assets/a.png"}}, errs.Invalid, "is not a file under raw/sources/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			_, err := WritePage(context.Background(), e, &in)
			if errs.CodeOf(err) != c.code || !strings.Contains(errs.Message(err), c.msg) {
				t.Fatalf("got %v (%s), want %s containing %q", err, errs.CodeOf(err), c.code, c.msg)
			}
			if after := snapshot(t, v); !reflect.DeepEqual(after, snap) {
				t.Fatal("a refused write changed files under wiki/")
			}
		})
	}
	// the external citations, links and free text a write adds are kept
	// byte for byte and never checked
	out := write(t, e, &WritePageIn{Title: "Page", Content: "x\n", Sources: []string{"ok.md", "web:https://learn.microsoft.com/x", "kb:a b", "[[Other]]", "Smith (2020), Nature"}})
	if got := readFile(t, v, out.Path); !strings.Contains(got, "sources:\n  - raw/sources/ok.md\n  - web:https://learn.microsoft.com/x\n  - kb:a b\n  - '[[Other]]'\n  - Smith (2020), Nature\n") {
		t.Errorf("sources:\n%s", got)
	}
	// Windows device names become safe file names
	for title, want := range map[string]string{"CON": "con-page.md", "nul": "nul-page.md", "Com1": "com1-page.md", "lpt9": "lpt9-page.md", "console": "console.md"} {
		if out := write(t, e, &WritePageIn{Title: title, Content: "x\n"}); path.Base(out.Path) != want {
			t.Errorf("%q → %s, want %s", title, out.Path, want)
		}
	}
}

func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	return out
}

func fixedZone(hours int) *time.Location { return time.FixedZone("", hours*3600) }

// TestWild_NewNoteIgnoresUntypedPages: every untyped page is a note, so
// in a vault like Obsidian's help (most untyped pages in wiki/Plugins/) a
// new note would follow them there; only notes whose frontmatter says note
// place one (a trial saw "Café au lait" --type note land in wiki/Plugins).
func TestWild_NewNoteIgnoresUntypedPages(t *testing.T) {
	v := testvault.New(t)
	for _, n := range []string{"a", "b", "c", "d"} {
		testvault.Write(t, v, "wiki/Plugins/"+n+".md", "# "+n+"\n\nUntyped.\n")
	}
	testvault.Write(t, v, "wiki/Plugins/typed.md", "---\ntype: topic\n---\nx\n")
	e, err := OpenEnv(context.Background(), v, OpenOptions{NoInitialScan: true})
	must(t, err)
	t.Cleanup(func() { e.Close() })
	rescanT(t, e)
	if out := write(t, e, &WritePageIn{Title: "Café au lait", Content: "x\n", Type: "note"}); out.Path != "wiki/café-au-lait.md" {
		t.Errorf("new note at %s, want wiki/café-au-lait.md", out.Path)
	}
	// a topic goes beside the topic, declared or not the others are notes
	if out := write(t, e, &WritePageIn{Title: "T2", Content: "x\n", Type: "topic"}); out.Path != "wiki/Plugins/t2.md" {
		t.Errorf("new topic at %s", out.Path)
	}
	// notes that say so do place new notes
	for _, n := range []string{"n1", "n2"} {
		testvault.Write(t, v, "wiki/journal/"+n+".md", "---\ntype: note\n---\nx\n")
	}
	rescanT(t, e)
	if out := write(t, e, &WritePageIn{Title: "Another note", Content: "x\n", Type: "note"}); out.Path != "wiki/journal/another-note.md" {
		t.Errorf("new note at %s, want beside the declared notes in wiki/journal/", out.Path)
	}
}

// TestWritePage_AmbiguousTitle: a title two pages share resolves by the
// tie-break (docs/vault.md#links), and get_page says which other pages it names; a
// write back by that title with the sha256 get_page returned goes to the
// page that was read (either one), while one without if_match is refused
// naming both.
func TestWritePage_AmbiguousTitle(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/topics/short.md", "---\ntitle: Twin Title\ntype: topic\n---\nTopic body.\n")
	testvault.Write(t, v, "wiki/entities/twin-page.md", "---\ntitle: Twin Title\n---\nEntity body.\n")
	e, err := OpenEnv(context.Background(), v, OpenOptions{NoInitialScan: true})
	must(t, err)
	t.Cleanup(func() { e.Close() })
	rescanT(t, e)
	g := getPageOut(t, e, "Twin Title")
	if g.Path != "wiki/topics/short.md" || len(g.AlsoMatched) != 1 || g.AlsoMatched[0].Path != "wiki/entities/twin-page.md" {
		t.Fatalf("get_page: %s, also matched %+v", g.Path, g.AlsoMatched)
	}
	if one := getPageOut(t, e, "wiki/topics/short.md"); one.AlsoMatched != nil {
		t.Errorf("by path: also matched %+v", one.AlsoMatched)
	}
	out := write(t, e, &WritePageIn{Title: "Twin Title", Content: g.Content + "More.\n", IfMatch: g.SHA256})
	if out.Path != "wiki/topics/short.md" {
		t.Errorf("write back went to %s", out.Path)
	}
	other := getPageOut(t, e, "wiki/entities/twin-page.md")
	out = write(t, e, &WritePageIn{Title: "Twin Title", Content: other.Content + "More.\n", IfMatch: other.SHA256})
	if out.Path != "wiki/entities/twin-page.md" {
		t.Errorf("write back of the other went to %s", out.Path)
	}
	b, _ := os.ReadFile(v.Abs("wiki/entities/twin-page.md"))
	if !strings.Contains(string(b), "Entity body.\nMore.\n") {
		t.Errorf("entity page: %q", b)
	}
	_, err = WritePage(context.Background(), e, &WritePageIn{Title: "Twin Title", Content: "x\n"})
	if errs.CodeOf(err) != errs.Conflict || !strings.Contains(err.Error(), "wiki/entities/twin-page.md") {
		t.Errorf("write by the title alone: %v", err)
	}
}

// TestWritePage_CRLFKeptForAddedLines: an agent that takes a CRLF page's
// content as get_page returned it and appends lines with plain newlines
// gets the file's CRLF on the new lines too (not a file of mixed
// endings); a body of plain newlines throughout is converted as before,
// and a file that already mixes endings keeps the caller's bytes.
func TestWritePage_CRLFKeptForAddedLines(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/crlf.md", "---\r\ntitle: Crlf\r\n---\r\n# Crlf\r\n\r\nOne.\r\n")
	testvault.Write(t, v, "wiki/mixed.md", "---\r\ntitle: Mixed\r\n---\r\n# Mixed\r\nOne.\n")
	e, err := OpenEnv(context.Background(), v, OpenOptions{NoInitialScan: true})
	must(t, err)
	t.Cleanup(func() { e.Close() })
	rescanT(t, e)
	g := getPageOut(t, e, "Crlf")
	write(t, e, &WritePageIn{Title: "Crlf", Content: g.Content + "\nTwo.\n", IfMatch: g.SHA256})
	b, _ := os.ReadFile(v.Abs("wiki/crlf.md"))
	if want := "# Crlf\r\n\r\nOne.\r\n\r\nTwo.\r\n"; !strings.HasSuffix(string(b), want) || strings.Count(string(b), "\n") != strings.Count(string(b), "\r\n") {
		t.Errorf("crlf.md = %q, want CRLF throughout, ending %q", b, want)
	}
	write(t, e, &WritePageIn{Title: "Crlf", Content: "# Crlf\n\nThree.\n"})
	if b, _ := os.ReadFile(v.Abs("wiki/crlf.md")); !strings.HasSuffix(string(b), "# Crlf\r\n\r\nThree.\r\n") {
		t.Errorf("crlf.md = %q", b)
	}
	g = getPageOut(t, e, "Mixed")
	write(t, e, &WritePageIn{Title: "Mixed", Content: g.Content + "Two.\n"})
	if b, _ := os.ReadFile(v.Abs("wiki/mixed.md")); !strings.HasSuffix(string(b), "# Mixed\r\nOne.\nTwo.\n") {
		t.Errorf("mixed.md = %q", b)
	}
}

// TestWild_DeclaredNotesAfterUpgrade: a store written before records said
// whether a page declares its type (ParseVersion 5) is re-parsed once, so
// its declared notes place new notes again.
func TestWild_DeclaredNotesAfterUpgrade(t *testing.T) {
	v := testvault.New(t)
	for _, n := range []string{"a", "b", "c"} {
		testvault.Write(t, v, "wiki/Plugins/"+n+".md", "# "+n+"\n")
	}
	for _, n := range []string{"n1", "n2"} {
		testvault.Write(t, v, "wiki/journal/"+n+".md", "---\ntype: note\n---\nx\n")
	}
	e, err := OpenEnv(context.Background(), v, OpenOptions{NoInitialScan: true})
	must(t, err)
	t.Cleanup(func() { e.Close() })
	rescanT(t, e)
	// as a store of ParseVersion 5 left it: no record declares its type,
	// and the catalogue counts no declared note
	must(t, e.Store.Update(func(tx *store.Tx) error {
		var recs []*store.PageRec
		if err := tx.EachPage(func(p *store.PageRec) bool { recs = append(recs, p); return true }); err != nil {
			return err
		}
		for _, p := range recs {
			old := *p
			p.TypeDeclared = false
			if err := tx.PutPage(p, &old); err != nil {
				return err
			}
		}
		return tx.SetMeta("parse_version", []byte("5"))
	}))
	_ = e.Store.View(func(tx *store.Tx) error {
		if d := tx.CatalogDeclaredNotes(); len(d) != 0 {
			t.Fatalf("the old store still counts declared notes: %v", d)
		}
		return nil
	})
	rescanT(t, e)
	if out := write(t, e, &WritePageIn{Title: "New note", Content: "x\n", Type: "note"}); out.Path != "wiki/journal/new-note.md" {
		t.Errorf("after the upgrade a new note went to %s, want wiki/journal/", out.Path)
	}
}
