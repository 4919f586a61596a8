package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

var testNow = time.Date(2026, 5, 1, 14, 30, 0, 0, time.Local)

// recordingIndexer stands in for the search index: it records the pages
// the scanner hands to it inside its write transactions.
type recordingIndexer struct {
	mu      sync.Mutex
	indexed map[uint32]string // doc → title
	removed []uint32
}

func (r *recordingIndexer) IndexPages(tx *store.Tx, pages []index.IndexedPage) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range pages {
		r.indexed[p.Doc] = p.Rec.Title
	}
	return nil
}

func (r *recordingIndexer) RemovePages(tx *store.Tx, docs []uint32) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removed = append(r.removed, docs...)
	return nil
}

// openEnv opens (and first scans) the store of v, with the clock pinned.
func openEnv(t testing.TB, v *vault.Vault) (*Env, *recordingIndexer) {
	t.Helper()
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	e := NewEnv(v, s)
	e.Now = func() time.Time { return testNow }
	rec := &recordingIndexer{indexed: map[uint32]string{}}
	e.Index.Pages = rec
	if _, err := e.Index.Scan(context.Background(), index.ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	return e, rec
}

func write(t testing.TB, e *Env, in *WritePageIn) *WritePageOut {
	t.Helper()
	out, err := WritePage(context.Background(), e, in)
	if err != nil {
		t.Fatalf("write %q: %v", in.Title, err)
	}
	return out
}

func readFile(t testing.TB, v *vault.Vault, rel string) string {
	t.Helper()
	data, err := os.ReadFile(v.Abs(rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func getPageOut(t testing.TB, e *Env, title string) *GetPageOut {
	t.Helper()
	out, err := getPage(context.Background(), e, &GetPageIn{Title: title})
	if err != nil {
		t.Fatalf("get_page %q: %v", title, err)
	}
	return out
}

func TestWritePage_Create(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "raw/sources/finch.md", "zebra finch notes\n")
	e, idx := openEnv(t, v)
	out := write(t, e, &WritePageIn{
		Title:   "Birdsong",
		Content: "# Birdsong\n\nLearned by [[Zebra Finch]] juveniles.\n",
		Tags:    []string{" Birds", "#neuro", "birds"},
		Sources: []string{"finch.md"},
		Aliases: []string{"Bird song"},
	})
	const want = "---\ntitle: Birdsong\ntype: concept\naliases:\n  - Bird song\ntags:\n  - birds\n  - neuro\n" +
		"sources:\n  - raw/sources/finch.md\ncreated: 2026-05-01\nupdated: 2026-05-01\n---\n" +
		"# Birdsong\n\nLearned by [[Zebra Finch]] juveniles.\n"
	if got := readFile(t, v, "wiki/concepts/birdsong.md"); got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	if out.Path != "wiki/concepts/birdsong.md" || out.Title != "Birdsong" || out.Type != "concept" || !out.Created || out.Unchanged {
		t.Fatalf("result: %+v", out)
	}
	if out.SHA256 != sha(want) {
		t.Fatalf("sha256 %s does not verify the file (%s)", out.SHA256, sha(want))
	}
	if !reflect.DeepEqual(out.Dangling, []string{"Zebra Finch"}) {
		t.Fatalf("dangling = %v", out.Dangling)
	}
	// findable at once: get_page by title and alias, list_pages, and the
	// search index was handed the page in the write command
	g := getPageOut(t, e, "bird song")
	if g.ID != out.ID || g.SHA256 != out.SHA256 || g.Path != out.Path {
		t.Fatalf("get_page = %+v, write returned %+v", g, out)
	}
	var doc uint32
	_ = e.Store.View(func(tx *store.Tx) error { doc = tx.DocByID(out.ID); return nil })
	if idx.indexed[doc] != "Birdsong" {
		t.Fatalf("the search index was not given the page (indexed: %v)", idx.indexed)
	}
	l, err := listPages(context.Background(), e, &ListPagesIn{Tag: "neuro", Limit: 10})
	if err != nil || l.Total != 1 || l.Pages[0].ID != out.ID {
		t.Fatalf("list_pages tag:neuro = %+v, %v", l, err)
	}
	// log.md and index.md
	if log := readFile(t, v, vault.LogPage); !strings.HasSuffix(log, "\n\n## [2026-05-01] created | Birdsong\n- sources: raw/sources/finch.md\n") {
		t.Fatalf("log.md:\n%s", log)
	}
	if idxmd := readFile(t, v, vault.IndexPage); !strings.Contains(idxmd, "## concept (1)\n\n- [[wiki/concepts/birdsong|Birdsong]]\n") {
		t.Fatalf("index.md:\n%s", idxmd)
	}
}

func TestWritePage_UpdateInPlace(t *testing.T) {
	v := testvault.WithCorpus(t)
	e, _ := openEnv(t, v)
	const rel = "wiki/Linking notes and files/Aliases.md"
	before := getPageOut(t, e, "Aliases")
	if before.Path != rel {
		t.Fatalf("corpus page at %s", before.Path)
	}
	logBefore := readFile(t, v, vault.LogPage)
	out := write(t, e, &WritePageIn{Title: "aliases", Content: "Rewritten body with a [[Internal links]] link.\n", Tags: []string{"help"}, IfMatch: before.SHA256})
	if out.Path != rel || out.ID != before.ID || out.Created || out.Title != "Aliases" {
		t.Fatalf("not updated in place: %+v (was %s %s)", out, before.ID, before.Path)
	}
	// the hand-written frontmatter keeps its keys, order and style; tags
	// and updated are added at the end, and no created date (synapse did
	// not create the file)
	const want = "---\naliases:\n  - alias\n  - aliases\n  - How to/Add aliases to note\npermalink: aliases\n" +
		"cssclasses:\n  - soft-embed\ntags:\n  - help\nupdated: 2026-05-01\n---\n" +
		"Rewritten body with a [[Internal links]] link.\n"
	if got := readFile(t, v, rel); got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	if len(out.Dangling) != 0 {
		t.Fatalf("dangling = %v", out.Dangling)
	}
	// a page found by alias ("Start here" is an alias of Home) is updated,
	// and keeps its own title
	home := write(t, e, &WritePageIn{Title: "Start here", Content: "Welcome.\n"})
	if home.Path != "wiki/Home.md" || home.Title != "Home" || home.Created {
		t.Fatalf("alias write: %+v", home)
	}
	if log := readFile(t, v, vault.LogPage); log != logBefore+"\n## [2026-05-01] updated | Aliases\n\n## [2026-05-01] updated | Home\n" {
		t.Fatalf("log.md:\n%s", log)
	}
	// backlinks: Internal links now has Aliases among its backlinks
	bl, err := backlinks(context.Background(), e, &BacklinksIn{Title: "Internal links"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, b := range bl.Backlinks {
		found = found || b.ID == out.ID
	}
	if !found {
		t.Fatalf("backlinks of Internal links lack the rewritten page: %+v", bl.Backlinks)
	}
}

func TestWritePage_FrontmatterMerge(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "raw/sources/a.md", "a\n")
	testvault.Write(t, v, "wiki/entities/ada.md", "---\n# a comment\nzeta: 1 # inline\ntitle: Ada Lovelace\nwhen: 2020-02-02\ntags: [math, history]\ncreated: 2019-01-01\nalpha:\n  - x\n---\nOld body.\n")
	e, _ := openEnv(t, v)
	// the agent's round trip: get_page, edit, write back the frontmatter it got
	g := getPageOut(t, e, "Ada Lovelace")
	var fm map[string]any
	b, _ := json.Marshal(g.Frontmatter)
	if err := json.Unmarshal(b, &fm); err != nil {
		t.Fatal(err)
	}
	fm["new_key"] = "v"
	fm["alpha"] = nil // removed
	out := write(t, e, &WritePageIn{Title: "Ada Lovelace", Content: "New body.\n", Frontmatter: fm, IfMatch: g.SHA256})
	const want = "---\n# a comment\nzeta: 1 # inline\ntitle: Ada Lovelace\nwhen: 2020-02-02\ntags: [math, history]\ncreated: 2019-01-01\n" +
		"new_key: v\nupdated: 2026-05-01\n---\nNew body.\n"
	if got := readFile(t, v, out.Path); got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	// content with its own frontmatter block (a whole file piped in), plus
	// flags: lists are merged, keys kept in the block's order
	out2 := write(t, e, &WritePageIn{
		Title:   "Grace Hopper",
		Content: "---\ntags: [navy]\nrank: rear admiral\ntype: entity\n---\nBody.\n",
		Tags:    []string{"cobol"},
		Sources: []string{"raw/sources/a.md"},
	})
	const want2 = "---\ntitle: Grace Hopper\ntype: entity\ntags:\n  - navy\n  - cobol\nrank: rear admiral\n" +
		"sources:\n  - raw/sources/a.md\ncreated: 2026-05-01\nupdated: 2026-05-01\n---\nBody.\n"
	if got := readFile(t, v, "wiki/entities/grace-hopper.md"); got != want2 || out2.Type != "entity" {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want2)
	}
	// rename through frontmatter: the file stays, the title changes
	out3 := write(t, e, &WritePageIn{Title: "Grace Hopper", Content: "Body.\n", Frontmatter: map[string]any{"title": "Grace Brewster Hopper"}})
	if out3.Path != out2.Path || out3.Title != "Grace Brewster Hopper" || out3.ID != out2.ID {
		t.Fatalf("rename: %+v", out3)
	}
	// type given two ways must agree
	_, err := WritePage(context.Background(), e, &WritePageIn{Title: "X", Content: "---\ntype: entity\n---\nb\n", Type: "concept"})
	if errs.CodeOf(err) != errs.Invalid || !strings.Contains(errs.Message(err), "type is given twice") {
		t.Fatalf("type twice: %v", err)
	}
}

func TestWritePage_IfMatch(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	first := write(t, e, &WritePageIn{Title: "Page", Content: "one\n"})
	snap := snapshot(t, v)
	for _, m := range []string{sha("something else"), strings.ToUpper(sha("x"))} {
		_, err := WritePage(context.Background(), e, &WritePageIn{Title: "Page", Content: "two\n", IfMatch: m})
		if errs.CodeOf(err) != errs.Conflict || errs.ExitCode(errs.CodeOf(err)) != 4 {
			t.Fatalf("stale if_match: %v", err)
		}
		if !strings.Contains(errs.Message(err), "changed since it was read") {
			t.Fatalf("message: %s", errs.Message(err))
		}
		if after := snapshot(t, v); !reflect.DeepEqual(after, snap) {
			t.Fatalf("a refused write changed the vault:\n%v\n%v", snap, after)
		}
	}
	second := write(t, e, &WritePageIn{Title: "Page", Content: "two\n", IfMatch: strings.ToUpper(first.SHA256)})
	if second.Path != first.Path || second.SHA256 == first.SHA256 {
		t.Fatalf("matching if_match: %+v", second)
	}
	_, err := WritePage(context.Background(), e, &WritePageIn{Title: "No such page", Content: "x\n", IfMatch: first.SHA256})
	if errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("if_match on a new page: %v", err)
	}
}

// TestWritePage_EmptyIfMatchIsInvalid: an if_match given empty or blank
// (a failed `jq -r .sha256` gives "") is refused as invalid on every
// surface, never taken for "no check" — the page is not overwritten;
// leaving it out writes without the check.
func TestWritePage_EmptyIfMatchIsInvalid(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	write(t, e, &WritePageIn{Title: "Page", Content: "one\n"})
	snap := snapshot(t, v)
	for _, m := range []string{`""`, `" "`, `"\t"`} {
		_, err := opWritePage.Call(context.Background(), e, []byte(`{"title":"Page","content":"two\n","if_match":`+m+`}`))
		if errs.CodeOf(err) != errs.Invalid || !strings.Contains(errs.Message(err), "if_match is empty") {
			t.Errorf("if_match %s: %v", m, err)
		}
	}
	if after := snapshot(t, v); !reflect.DeepEqual(after, snap) {
		t.Fatalf("a refused write changed the vault:\n%v\n%v", snap, after)
	}
	if _, err := opWritePage.Call(context.Background(), e, []byte(`{"title":"Page","content":"two\n"}`)); err != nil {
		t.Fatalf("no if_match: %v", err)
	}
}

// snapshot maps every file under wiki/ to its content.
func snapshot(t testing.TB, v *vault.Vault) map[string]string {
	t.Helper()
	return testvault.AllWikiFiles(t, v)
}

func TestWritePage_Invalid(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "raw/sources/ok.md", "ok\n")
	testvault.Write(t, v, "wiki/broken.md", "---\ntitle: [unclosed\n---\nbody\n")
	e, _ := openEnv(t, v)
	write(t, e, &WritePageIn{Title: "Dup", Content: "a\n", Type: "entity"})
	testvault.Write(t, v, "wiki/concepts/dup.md", "---\ntitle: Dup\n---\nsecond\n")
	if _, err := e.Index.Scan(context.Background(), index.ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	snap := snapshot(t, v)
	big := strings.Repeat("a", MaxContentBytes+1)
	cases := []struct {
		name string
		in   WritePageIn
		code errs.Code
		msg  string
	}{
		{"empty title", WritePageIn{Title: "  ", Content: "x"}, errs.Invalid, "title is required"},
		{"long title", WritePageIn{Title: strings.Repeat("é", 201), Content: "x"}, errs.Invalid, "title is 201 characters long; the limit is 200"},
		{"control in title", WritePageIn{Title: "a\nb", Content: "x"}, errs.Invalid, "title contains a control character"},
		{"tab in title", WritePageIn{Title: "a\tb", Content: "x"}, errs.Invalid, "title contains a control character"},
		{"empty content", WritePageIn{Title: "T", Content: " \n\t"}, errs.Invalid, "content is empty"},
		{"only frontmatter", WritePageIn{Title: "T", Content: "---\ntags: [a]\n---\n"}, errs.Invalid, "content is empty"},
		{"too large", WritePageIn{Title: "T", Content: big}, errs.TooLarge, "the page as written would be 1048649 bytes (frontmatter included); the limit is 1 MiB"},
		{"too large with frontmatter", WritePageIn{Title: "T", Content: "x", Frontmatter: map[string]any{"blob": strings.Repeat("b", MaxContentBytes)}}, errs.TooLarge, "(frontmatter included); the limit is 1 MiB"},
		{"input too large", WritePageIn{Title: "T", Content: strings.Repeat("a", 16<<20+1)}, errs.TooLarge, "content is 16777217 bytes; the limit of a page as written is 1 MiB"},
		{"bad utf-8", WritePageIn{Title: "T", Content: "ok \xff\xfe"}, errs.Invalid, "content is not valid UTF-8 (bad byte at offset 3)"},
		{"nul", WritePageIn{Title: "T", Content: "a\x00b"}, errs.Invalid, "content contains a NUL byte"},
		{"bad block", WritePageIn{Title: "T", Content: "---\nx: [\n---\nb\n"}, errs.Invalid, "frontmatter block that is not valid YAML"},
		{"malformed type", WritePageIn{Title: "T", Content: "x", Type: "per son"}, errs.Invalid, `type "per son" is not a well-formed type: use a lower-case word`},
		{"reserved type", WritePageIn{Title: "T", Content: "x", Type: "index"}, errs.Invalid, `type "index" is reserved`},
		{"map type", WritePageIn{Title: "T", Content: "x", Frontmatter: map[string]any{"type": 3.0}}, errs.Invalid, "frontmatter.type must be a string"},
		{"map tags", WritePageIn{Title: "T", Content: "x", Frontmatter: map[string]any{"tags": []any{"a", map[string]any{"b": 1.0}}}}, errs.Invalid, "frontmatter.tags must be a list of strings"},
		{"tag with space", WritePageIn{Title: "T", Content: "x", Tags: []string{"machine learning"}}, errs.Invalid, `tag "machine learning" contains a space or comma; tags are single words such as "machine-learning"`},
		{"missing source", WritePageIn{Title: "T", Content: "x", Sources: []string{"nope.md"}}, errs.Invalid, `source "raw/sources/nope.md" does not exist`},
		{"escaping source", WritePageIn{Title: "T", Content: "x", Sources: []string{"../../etc/passwd"}}, errs.Invalid, "is not a file under raw/sources/"},
		{"source folder", WritePageIn{Title: "T", Content: "x", Sources: []string{"raw/sources/"}}, errs.Invalid, "is not a file under raw/sources/"},
		{"bad if_match", WritePageIn{Title: "T", Content: "x", IfMatch: "abc"}, errs.Invalid, "if_match must be the sha256 of the page's file (64 hex characters"},
		{"bad created", WritePageIn{Title: "T", Content: "x", Frontmatter: map[string]any{"created": "yesterday"}}, errs.Invalid, `created "yesterday" is not a date`},
		{"empty key", WritePageIn{Title: "T", Content: "x", Frontmatter: map[string]any{" ": 1.0}}, errs.Invalid, "frontmatter has an empty key"},
		{"long alias", WritePageIn{Title: "T", Content: "x", Aliases: []string{strings.Repeat("a", 201)}}, errs.Invalid, "the limit is 200"},
		{"new page renamed", WritePageIn{Title: "T", Content: "x", Frontmatter: map[string]any{"title": "U"}}, errs.Invalid, `frontmatter.title "U" differs from the title "T"`},
		{"reserved index", WritePageIn{Title: "index", Content: "x"}, errs.Invalid, "wiki/index.md, which synapse maintains"},
		{"reserved log", WritePageIn{Title: "Log", Content: "x"}, errs.Invalid, "wiki/log.md, which synapse maintains"},
		{"reserved overview", WritePageIn{Title: "Overview", Content: "x"}, errs.Invalid, "wiki/overview.md, the wiki's overview, which is yours to edit as a file"},
		{"reserved overview", WritePageIn{Title: "overview", Content: "x"}, errs.Invalid, "wiki/overview.md"},
		{"ambiguous", WritePageIn{Title: "dup", Content: "x"}, errs.Conflict, `title "dup" matches 2 pages (wiki/concepts/dup.md, wiki/entities/dup.md)`},
		{"broken frontmatter", WritePageIn{Title: "broken", Content: "x", Tags: []string{"a"}}, errs.Conflict, "wiki/broken.md has frontmatter that is not valid YAML (line 2: did not find expected ',' or ']'), which synapse keeps as it is; tags cannot be changed until it is fixed"},
		{"broken block", WritePageIn{Title: "broken", Content: "---\ntitle: [other\n---\nx"}, errs.Invalid, "content starts with a frontmatter block that is not valid YAML (line 2: did not find expected ',' or ']'); fix it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			_, err := WritePage(context.Background(), e, &in)
			if errs.CodeOf(err) != c.code || !strings.Contains(errs.Message(err), c.msg) {
				t.Fatalf("got %v (%s), want %s containing %q", err, errs.CodeOf(err), c.code, c.msg)
			}
			if c.code == errs.Invalid || c.code == errs.TooLarge {
				if errs.ExitCode(errs.CodeOf(err)) != 2 {
					t.Fatalf("exit code %d", errs.ExitCode(errs.CodeOf(err)))
				}
			}
			if after := snapshot(t, v); !reflect.DeepEqual(after, snap) {
				t.Fatal("a refused write changed files under wiki/")
			}
		})
	}
	// the same rules through the operation table (strict decoding too)
	op := Lookup("page.write")
	if _, err := op.Call(context.Background(), e, []byte(`{"title":"T","content":"x","colour":"red"}`)); errs.CodeOf(err) != errs.Invalid || !strings.Contains(errs.Message(err), `unknown parameter "colour"`) {
		t.Fatalf("unknown parameter: %v", err)
	}
	if _, err := op.Call(context.Background(), e, []byte(`{"content":"x"}`)); errs.CodeOf(err) != errs.Invalid || !strings.Contains(errs.Message(err), "title is required") {
		t.Fatalf("missing title: %v", err)
	}
}

func TestWritePage_OperationRow(t *testing.T) {
	op := ByTool("write_page")
	if op == nil || op.Name != "page.write" || op.CLI != "page write" || op.Access != Write {
		t.Fatalf("row: %+v", op)
	}
	if len(op.REST) != 1 || op.REST[0].Method != "PUT" || op.REST[0].Path != "/pages/{title}" || op.REST[0].Body != "*" {
		t.Fatalf("rest: %+v", op.REST)
	}
	mcp := map[string]bool{}
	for _, f := range Fields(op.In) {
		if !f.NoMCP {
			mcp[f.Name] = true
		}
	}
	if want := map[string]bool{"title": true, "content": true, "frontmatter": true, "if_match": true, "log": true, "path": true, "section": true, "append": true, "dry_run": true}; !reflect.DeepEqual(mcp, want) {
		t.Fatalf("MCP parameters %v, want %v", mcp, want)
	}
	// an MCP-shaped call
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	out, err := op.Call(context.Background(), e, []byte(`{"title":"Café au lait","content":"Milk.","frontmatter":{"type":"note","tags":"drinks, french","origin":{"country":"FR"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	w := out.(*WritePageOut)
	if w.Path != "wiki/café-au-lait.md" || w.Type != "note" {
		t.Fatalf("result %+v", w)
	}
	const want = "---\ntitle: Café au lait\ntype: note\norigin:\n  country: FR\ntags:\n  - drinks\n  - french\ncreated: 2026-05-01\nupdated: 2026-05-01\n---\nMilk.\n"
	if got := readFile(t, v, w.Path); got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	// read-only servers refuse it
	e.ReadOnly = true
	if _, err := op.Call(context.Background(), e, []byte(`{"title":"X","content":"y"}`)); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("read-only: %v", err)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Café au lait":            "café-au-lait",
		"Cafe\u0301 au lait":      "café-au-lait", // NFD in, NFC out
		"  Hello,   World!  ":     "hello-world",
		"C++ / C#":                "c-c",
		"GPT-4o vs. v1.2":         "gpt-4o-vs-v1-2",
		"東京タワー":                   "東京タワー",
		"Москва":                  "москва",
		"हिन्दी":                  "हिन्दी", // combining marks kept
		"???":                     "untitled",
		"Ⅻ Roman":                 "ⅻ-roman",
		strings.Repeat("ab", 100): strings.Repeat("ab", 60),
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
	long := Slug(strings.Repeat("é", 150))
	if len(long) > 120 || !strings.HasPrefix(strings.Repeat("é", 60), long) {
		t.Errorf("long slug %q (%d bytes)", long, len(long))
	}
}

func TestWritePage_SlugCollision(t *testing.T) {
	v := testvault.New(t)
	// a different page already owns the slug path
	testvault.Write(t, v, "wiki/concepts/c.md", "---\ntitle: The C language\n---\nC.\n")
	e, _ := openEnv(t, v)
	out := write(t, e, &WritePageIn{Title: "C++", Content: "C plus plus.\n"})
	if out.Path != "wiki/concepts/c-2.md" || !out.Created {
		t.Fatalf("collision: %+v", out)
	}
	if got := readFile(t, v, "wiki/concepts/c.md"); got != "---\ntitle: The C language\n---\nC.\n" {
		t.Fatalf("the other page was overwritten: %q", got)
	}
	// a file saved by an editor after the last scan, at the slug path, with
	// this very title: it is indexed and updated, not duplicated
	testvault.Write(t, v, "wiki/concepts/fresh-note.md", "---\ntitle: Fresh note\nmood: calm\n---\nDraft.\n")
	out = write(t, e, &WritePageIn{Title: "Fresh note", Content: "Final.\n"})
	if out.Path != "wiki/concepts/fresh-note.md" || out.Created {
		t.Fatalf("unscanned file: %+v", out)
	}
	if got := readFile(t, v, out.Path); !strings.Contains(got, "mood: calm") || !strings.HasSuffix(got, "---\nFinal.\n") {
		t.Fatalf("unscanned file rewritten as:\n%s", got)
	}
	// an unscanned file at the slug path that is another page: numbered
	testvault.Write(t, v, "wiki/concepts/graph.md", "---\ntitle: Graph theory\n---\nx\n")
	out = write(t, e, &WritePageIn{Title: "Graph!", Content: "y\n"})
	if out.Path != "wiki/concepts/graph-2.md" {
		t.Fatalf("unscanned collision: %+v", out)
	}
}

func TestWritePage_Unchanged(t *testing.T) {
	// with and without a final newline: a create ends the file's last
	// line, and the retry is unchanged all the same
	for _, content := range []string{"same\n", "same", "two\nlines"} {
		t.Run(fmt.Sprintf("%q", content), func(t *testing.T) { writeUnchanged(t, content) })
	}
}

func writeUnchanged(t *testing.T, content string) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	in := &WritePageIn{Title: "Retry", Content: content, Tags: []string{"x"}}
	first := write(t, e, in)
	log1 := readFile(t, v, vault.LogPage)
	st1, _ := os.Stat(v.Abs(first.Path))
	second := write(t, e, in)
	if !second.Unchanged || second.SHA256 != first.SHA256 || second.ID != first.ID || second.Created {
		t.Fatalf("retry: %+v", second)
	}
	if readFile(t, v, vault.LogPage) != log1 {
		t.Fatal("a retried write was logged twice")
	}
	st2, _ := os.Stat(v.Abs(first.Path))
	if !st2.ModTime().Equal(st1.ModTime()) {
		t.Fatal("an unchanged page was rewritten")
	}
}

// TestWritePage_StoreInStep proves that the records the write path stores
// for log.md and index.md (without re-parsing them) are exactly what the
// scanner stores when it parses them.
func TestWritePage_StoreInStep(t *testing.T) {
	v := testvault.WithCorpus(t)
	e, _ := openEnv(t, v)
	var rescanned []string
	e.observe.reserved = func(p []string) { rescanned = append(rescanned, p...) }
	titles := []string{"Alan Turing (mathematician)", "Ünïcödé ☃ page", "100% pure", "Mixed Case", "mixed case"}
	for i, title := range titles {
		typ := []string{"entity", "concept", "note", "synthesis", "query"}[i]
		write(t, e, &WritePageIn{Title: title, Content: "Links to [[Home]].\n", Type: typ})
	}
	// every record above was stored without parsing the files
	if len(rescanned) > 0 {
		t.Fatalf("the write path fell back to the scanner for %v", rescanned)
	}
	// a title that cannot sit in a [[wikilink]] is listed as a markdown link
	write(t, e, &WritePageIn{Title: "C# [draft] | 50%", Content: "x\n"})
	if len(rescanned) > 0 {
		t.Fatalf("the write path fell back to the scanner for %v", rescanned)
	}
	type recs struct {
		Page *store.PageRec
		File store.FileRec
	}
	get := func() map[string]recs {
		out := map[string]recs{}
		_ = e.Store.View(func(tx *store.Tx) error {
			for _, p := range []string{vault.LogPage, vault.IndexPage} {
				f, _, _ := tx.File(p)
				rec, _ := tx.Page(tx.DocByPath(p))
				out[p] = recs{rec, f}
			}
			return nil
		})
		return out
	}
	ours := get()
	rep, err := e.Index.Scan(context.Background(), index.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ChangedCount != 0 || rep.NewCount != 0 {
		t.Fatalf("a rescan after writes found changes: %+v", rep)
	}
	// force the scanner to re-read and re-parse both files
	_ = e.Store.Update(func(tx *store.Tx) error {
		for _, p := range []string{vault.LogPage, vault.IndexPage} {
			f, _, _ := tx.File(p)
			f.MtimeNS, f.SHA256 = 1, [32]byte{}
			if err := tx.PutFile(p, f); err != nil {
				return err
			}
		}
		return nil
	})
	if _, err := e.Index.Scan(context.Background(), index.ScanOptions{Paths: []string{vault.LogPage, vault.IndexPage}}); err != nil {
		t.Fatal(err)
	}
	theirs := get()
	for _, p := range []string{vault.LogPage, vault.IndexPage} {
		a, b := ours[p], theirs[p]
		if !reflect.DeepEqual(a.Page, b.Page) {
			ja, _ := json.Marshal(a.Page)
			jb, _ := json.Marshal(b.Page)
			t.Errorf("%s page record differs:\nwrite path: %s\nscanner:    %s", p, ja, jb)
		}
		if a.File != b.File {
			t.Errorf("%s file record differs:\nwrite path: %+v\nscanner:    %+v", p, a.File, b.File)
		}
	}
	// reserved pages keep no links or tags in the store: whatever a title
	// holds (a code span, a tag), index.md's record is brought in step
	// without parsing it
	if n := len(ours[vault.IndexPage].Page.Links); n != 0 {
		t.Fatalf("index.md record holds %d links", n)
	}
	write(t, e, &WritePageIn{Title: "The `go` tool #tagged", Content: "x\n"})
	if len(rescanned) != 0 {
		t.Fatalf("the write path rescanned %v", rescanned)
	}
	rep, err = e.Index.Scan(context.Background(), index.ScanOptions{})
	if err != nil || rep.ChangedCount != 0 {
		t.Fatalf("rescan after the write: %+v %v", rep, err)
	}
}

func TestWritePage_IndexDeterministic(t *testing.T) {
	v := testvault.WithCorpus(t)
	e, _ := openEnv(t, v)
	write(t, e, &WritePageIn{Title: "Zeta", Content: "z\n", Type: "entity"})
	write(t, e, &WritePageIn{Title: "alpha", Content: "a\n", Type: "entity"})
	write(t, e, &WritePageIn{Title: "Weird [title] | #tag", Content: "w\n", Type: "query"})
	got := readFile(t, v, vault.IndexPage)
	// entity section: sorted case-insensitively
	if !strings.Contains(got, "## entity (2)\n\n- [[wiki/entities/alpha|alpha]]\n- [[wiki/entities/zeta|Zeta]]\n\n## note (") ||
		!strings.HasSuffix(got, "\n\n## query (1)\n\n- [Weird \\[title\\] | \\#tag](queries/weird-title-tag.md)\n") {
		t.Fatalf("index.md:\n%s", got[:min(len(got), 800)])
	}
	st1, _ := os.Stat(v.Abs(vault.IndexPage))
	// an update that changes no title, type or path leaves index.md alone
	write(t, e, &WritePageIn{Title: "Zeta", Content: "zz\n"})
	st2, _ := os.Stat(v.Abs(vault.IndexPage))
	if !st2.ModTime().Equal(st1.ModTime()) {
		t.Fatal("index.md was rewritten though the catalogue did not change")
	}
	// the same files in a fresh store (new doc numbers) give the same bytes
	if _, err := reindex(context.Background(), e, &ReindexIn{}); err != nil {
		t.Fatal(err)
	}
	var again []byte
	_ = e.Store.View(func(tx *store.Tx) error {
		again = Catalog(tx)
		return nil
	})
	if string(again) != got {
		t.Fatal("index.md is not a function of the vault: a reindexed store renders it differently")
	}
	// every hand-written corpus page is listed once
	n := strings.Count(got, "\n- ")
	var pages int
	_ = e.Store.View(func(tx *store.Tx) error { pages = tx.PageCount(); return nil })
	if n != pages {
		t.Fatalf("index.md lists %d pages of %d", n, pages)
	}
	// the index's links resolve to the pages (get_page resolves them)
	g := getPageOut(t, e, "index")
	for _, l := range g.Links {
		if !l.Resolved {
			t.Fatalf("index.md link %q does not resolve", l.Target)
		}
	}
}

func TestWritePage_ReindexAfterWrites(t *testing.T) {
	v := testvault.WithCorpus(t)
	e, _ := openEnv(t, v)
	a := write(t, e, &WritePageIn{Title: "Written one", Content: "See [[Home]] and [[Written two]].\n"})
	b := write(t, e, &WritePageIn{Title: "Written two", Content: "Back to [[Written one]].\n", Type: "entity"})
	if _, err := reindex(context.Background(), e, &ReindexIn{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*WritePageOut{a, b} {
		g := getPageOut(t, e, w.Title)
		if g.ID != w.ID || g.SHA256 != w.SHA256 || g.Path != w.Path {
			t.Fatalf("after reindex %q: %+v, written %+v", w.Title, g, w)
		}
		if len(g.Backlinks) != 1 {
			t.Fatalf("backlinks of %q: %+v", w.Title, g.Backlinks)
		}
	}
}

// faultFS fails the named step of the write path, and lets a test look at
// the disk before every step (what a crash at that moment would leave).
type faultFS struct {
	osFS
	fail   string
	before func(step string)
	mu     sync.Mutex // log.md's fsync runs beside the re-index (appendSyncing)
	steps  []string
}

var errInjected = errors.New("injected failure")

func (f *faultFS) step(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps = append(f.steps, name)
	if f.before != nil {
		f.before(name)
	}
	if name == f.fail {
		return errInjected
	}
	return nil
}

func (f *faultFS) CreateTemp(dir, pattern string) (tempFile, error) {
	if err := f.step("create"); err != nil {
		return nil, err
	}
	tf, err := f.osFS.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	return &faultFile{tempFile: tf, fs: f}, nil
}

func (f *faultFS) Rename(o, n string) error {
	if err := f.step("rename"); err != nil {
		return err
	}
	return f.osFS.Rename(o, n)
}

func (f *faultFS) RenameNoReplace(o, n string) error {
	if err := f.step("rename"); err != nil {
		return err
	}
	return f.osFS.RenameNoReplace(o, n)
}

func (f *faultFS) SyncDir(d string) error {
	if err := f.step("syncdir"); err != nil {
		return err
	}
	return f.osFS.SyncDir(d)
}

func (f *faultFS) MkdirAll(d string) error {
	if err := f.step("mkdir"); err != nil {
		return err
	}
	return f.osFS.MkdirAll(d)
}

func (f *faultFS) OpenAppend(name string) (tempFile, error) {
	if err := f.step("open-append"); err != nil {
		return nil, err
	}
	tf, err := f.osFS.OpenAppend(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{tempFile: tf, fs: f, prefix: "append-"}, nil
}

type faultFile struct {
	tempFile
	fs     *faultFS
	prefix string
}

func (f *faultFile) Write(p []byte) (int, error) {
	if err := f.fs.step(f.prefix + "write"); err != nil {
		// a failed write may have written part of the data
		n, _ := f.tempFile.Write(p[:len(p)/2])
		return n, err
	}
	return f.tempFile.Write(p)
}

func (f *faultFile) Chmod(m os.FileMode) error {
	if err := f.fs.step(f.prefix + "chmod"); err != nil {
		return err
	}
	return f.tempFile.Chmod(m)
}

func (f *faultFile) Sync() error {
	if err := f.fs.step(f.prefix + "sync"); err != nil {
		return err
	}
	return f.tempFile.Sync()
}

func (f *faultFile) Close() error {
	if err := f.fs.step(f.prefix + "close"); err != nil {
		f.tempFile.Close()
		return err
	}
	return f.tempFile.Close()
}

// withFS makes e's write path go through f (nil: the vault's file layer
// again), through the Env's field as a transport would see it; a fault
// system without a layer is given e's to wrap.
func withFS(e *Env, f fileSystem) {
	switch x := f.(type) {
	case *faultFS:
		if x.l == nil {
			x.osFS = osFS{e.files()}
		}
	case fullAfterPage:
		x.osFS = osFS{e.files()}
		f = x
	}
	e.fsys = f
}

// tempFiles lists leftover temporary files anywhere under wiki/.
func tempFiles(t *testing.T, v *vault.Vault) []string {
	var out []string
	_ = filepath.WalkDir(v.Abs(vault.WikiDir), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".tmp") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestWritePage_AtomicFailures(t *testing.T) {
	steps := []string{"create", "write", "chmod", "sync", "close", "rename", "syncdir"}
	for _, mode := range []string{"update", "create"} {
		for _, step := range steps {
			t.Run(mode+"/"+step, func(t *testing.T) {
				v := testvault.New(t)
				e, _ := openEnv(t, v)
				const title = "Atomic"
				var rel, old string
				if mode == "update" {
					out := write(t, e, &WritePageIn{Title: title, Content: strings.Repeat("old line\n", 2000)})
					rel, old = out.Path, readFile(t, v, out.Path)
				} else {
					rel = "wiki/concepts/atomic.md"
				}
				newBody := strings.Repeat("new line\n", 3000)
				wantNew := "---\ntitle: Atomic\ntype: concept\ncreated: 2026-05-01\nupdated: 2026-05-01\n---\n" + newBody
				// at every step, a crash would leave the old file or the new one
				checkTarget := func(when string) {
					data, err := os.ReadFile(v.Abs(rel))
					switch {
					case errors.Is(err, os.ErrNotExist) && mode == "create":
					case err != nil:
						t.Fatalf("%s: %v", when, err)
					case string(data) != old && string(data) != wantNew:
						t.Fatalf("%s: the page holds neither the old nor the new content (%d bytes)", when, len(data))
					}
				}
				logBefore := readFile(t, v, vault.LogPage)
				ff := &faultFS{fail: step, before: func(s string) { checkTarget("before " + s) }}
				withFS(e, ff)
				_, err := WritePage(context.Background(), e, &WritePageIn{Title: title, Content: newBody})
				withFS(e, nil)
				if !contains(ff.steps, step) {
					t.Fatalf("step %s never ran (steps: %v)", step, ff.steps)
				}
				if err == nil || errs.CodeOf(err) != errs.Internal {
					t.Fatalf("want an internal error, got %v", err)
				}
				checkTarget("after the failure")
				if left := tempFiles(t, v); len(left) > 0 {
					t.Fatalf("temporary files left: %v", left)
				}
				data, _ := os.ReadFile(v.Abs(rel))
				renamed := step == "syncdir" // the rename happened; its durability is what failed
				if renamed != (string(data) == wantNew) {
					t.Fatalf("after a failed %s the page holds the new content: %v", step, renamed)
				}
				if !renamed && readFile(t, v, vault.LogPage) != logBefore {
					t.Fatal("a failed write was logged")
				}
				if !renamed && !strings.Contains(errs.Message(err), "nothing was written") && !strings.Contains(errs.Message(err), "the file is unchanged") {
					t.Fatalf("message: %s", errs.Message(err))
				}
				// and the next write succeeds and leaves a consistent index
				out := write(t, e, &WritePageIn{Title: title, Content: newBody})
				if got := readFile(t, v, out.Path); got != wantNew || out.SHA256 != sha(wantNew) {
					t.Fatalf("retry wrote %q", got[:min(60, len(got))])
				}
			})
		}
	}
	// the log append fails after the page is on disk: the write completes
	// its page (indexed, catalogued) and says what failed as a warning
	for _, step := range []string{"open-append", "append-write", "append-sync"} {
		t.Run("log/"+step, func(t *testing.T) {
			v := testvault.New(t)
			e, _ := openEnv(t, v)
			withFS(e, &faultFS{fail: step})
			out, err := WritePage(context.Background(), e, &WritePageIn{Title: "Logged", Content: "x\n"})
			if err != nil || out.Path != "wiki/concepts/logged.md" || len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "wiki/log.md") {
				t.Fatalf("got %+v %v", out, err)
			}
			withFS(e, nil)
			out = write(t, e, &WritePageIn{Title: "Logged", Content: "x\n"})
			if !out.Unchanged || !strings.Contains(readFile(t, v, vault.IndexPage), "[[wiki/concepts/logged|Logged]]") {
				t.Fatalf("retry: %+v", out)
			}
		})
	}
}

func TestWritePage_Concurrent(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	var wg sync.WaitGroup
	errc := make(chan error, 16)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := WritePage(context.Background(), e, &WritePageIn{Title: "Same page", Content: strings.Repeat("x", i+1) + "\n"})
			errc <- err
			_, err = WritePage(context.Background(), e, &WritePageIn{Title: "Page " + string(rune('A'+i)), Content: "[[Same page]]\n"})
			errc <- err
		}(i)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	g := getPageOut(t, e, "Same page")
	if len(g.Backlinks) != 8 {
		t.Fatalf("backlinks %d", len(g.Backlinks))
	}
	if n := strings.Count(readFile(t, v, vault.LogPage), "] created | ") + strings.Count(readFile(t, v, vault.LogPage), "] updated | "); n != 16 {
		t.Fatalf("log has %d entries", n)
	}
	files, _ := filepath.Glob(v.Abs("wiki/concepts/*.md"))
	sort.Strings(files)
	if len(files) != 9 {
		t.Fatalf("files: %v", files)
	}
}

// TestWritePage_ReviewHookContract checks this side of the review-queue
// contract: the hook runs after the re-index with the page record, the
// dangling targets the new content adds and the write's time.
func TestWritePage_ReviewHookContract(t *testing.T) {
	type call struct {
		title, path string
		dangling    []string
		now         time.Time
		writable    bool
	}
	var calls []call
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	e.pageWritten = func(tx *store.Tx, page *store.PageRec, dangling []string, _ string, now time.Time) (reviewsTouched, error) {
		// the page is indexed: it resolves by title in this transaction
		r := index.Resolve(tx, index.LinkKey(page.Title), "", false)
		if r.Doc != page.Doc {
			t.Errorf("hook ran before %q was indexed", page.Title)
		}
		calls = append(calls, call{page.Title, page.Path, slices.Clone(dangling), now, tx.Writable()})
		return reviewsTouched{}, nil
	}
	write(t, e, &WritePageIn{Title: "Birdsong", Content: "See [[Songbird Neurology]], [[songbird neurology#HVC]] and [[Birdsong]].\n"})
	write(t, e, &WritePageIn{Title: "Songbird Neurology", Content: "HVC.\n"})
	want := []call{
		{"Birdsong", "wiki/concepts/birdsong.md", []string{"Songbird Neurology"}, testNow, true},
		{"Songbird Neurology", "wiki/concepts/songbird-neurology.md", []string{}, testNow, true},
	}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("hook calls:\n%+v\nwant:\n%+v", calls, want)
	}
	// a failing hook fails the command, naming the written page
	e.pageWritten = func(*store.Tx, *store.PageRec, []string, string, time.Time) (reviewsTouched, error) {
		return reviewsTouched{}, errors.New("queue broken")
	}
	_, err := WritePage(context.Background(), e, &WritePageIn{Title: "Third", Content: "x\n"})
	if err == nil || !strings.Contains(errs.Message(err), `page "Third" was written to wiki/concepts/third.md`) {
		t.Fatalf("hook failure: %v", err)
	}
}

// TestWritePage_MissingPageReview is the end-to-end check of
// with the real review queue.
func TestWritePage_MissingPageReview(t *testing.T) {
	lr := ByTool("list_reviews")
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	if e.pageWritten == nil || lr == nil {
		t.Fatal("the review queue is not wired to the write path")
	}
	reviews := func(status string) []map[string]any {
		t.Helper()
		out, err := lr.Call(context.Background(), e, []byte(`{"status":"`+status+`","limit":100}`))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := MarshalJSON(out)
		var res struct {
			Items []map[string]any `json:"items"`
		}
		if err := json.Unmarshal(data, &res); err != nil {
			t.Fatal(err)
		}
		return res.Items
	}
	missing := func(items []map[string]any) []map[string]any {
		var out []map[string]any
		for _, it := range items {
			if it["type"] == "missing-page" && strings.Contains(strings.ToLower(it["title"].(string)), "songbird neurology") {
				out = append(out, it)
			}
		}
		return out
	}
	write(t, e, &WritePageIn{Title: "Birdsong", Content: "See [[Songbird Neurology]].\n"})
	write(t, e, &WritePageIn{Title: "Birdsong", Content: "Still see [[Songbird Neurology]].\n"}) // idempotent
	if p := missing(reviews("pending")); len(p) != 1 {
		t.Fatalf("pending missing-page items for Songbird Neurology: %v", p)
	}
	pending := missing(reviews("pending"))
	out := write(t, e, &WritePageIn{Title: "Songbird Neurology", Content: "HVC.\n"})
	if p := missing(reviews("pending")); len(p) != 0 {
		t.Fatalf("still pending after the page was written: %v", p)
	}
	done := missing(reviews("auto_resolved"))
	if len(done) != 1 {
		t.Fatalf("auto_resolved items: %v", done)
	}
	// the write says which items it closed, and log.md records the decision
	if id := pending[0]["id"].(string); !reflect.DeepEqual(out.AutoResolved, []string{id}) {
		t.Fatalf("auto_resolved in the result: %v, want [%s]", out.AutoResolved, id)
	}
	log := readFile(t, v, vault.LogPage)
	if !strings.Contains(log, "review auto_resolved | Songbird Neurology\n- item: "+out.AutoResolved[0]+" (missing-page)\n- resolution: page written: wiki/concepts/songbird-neurology.md (it answers [[Songbird Neurology]] by its title)") {
		t.Fatalf("log.md lacks the auto-resolution:\n%s", log)
	}
	// a write that answers nothing leaves auto_resolved out
	out = write(t, e, &WritePageIn{Title: "Songbird Neurology", Content: "HVC again.\n"})
	if data, _ := MarshalJSON(out); strings.Contains(string(data), "auto_resolved") {
		t.Fatalf("auto_resolved given when empty: %s", data)
	}
}

func TestWritePage_FrontmatterRoundTripKeepsStyle(t *testing.T) {
	// a write that repeats the page's current values leaves their YAML
	// untouched (flow lists, quotes, dates)
	v := testvault.New(t)
	testvault.Write(t, v, "raw/sources/s.md", "s\n")
	testvault.Write(t, v, "wiki/concepts/k.md", "---\ntitle: 'K'\ntags: [a, b]\nsources: [raw/sources/s.md]\naliases: [kay]\ncreated: 2020-01-01\nupdated: 2026-05-01\n---\nbody\n")
	e, _ := openEnv(t, v)
	out := write(t, e, &WritePageIn{Title: "K", Content: "body\n", Tags: []string{"b", "a"}, Sources: []string{"s.md"}, Aliases: []string{"kay"}})
	got := readFile(t, v, out.Path)
	// --tag adds: b and a are there already, so the flow list stays
	if !strings.Contains(got, "tags: [a, b]\n") || !strings.Contains(got, "sources: [raw/sources/s.md]\n") || !strings.Contains(got, "aliases: [kay]\n") || !strings.Contains(got, "title: 'K'\n") {
		t.Fatalf("file:\n%s", got)
	}
	p := markdown.Parse(out.Path, []byte(got))
	if p.Created != "2020-01-01" || p.Updated != "2026-05-01" {
		t.Fatalf("created %q updated %q", p.Created, p.Updated)
	}
}

func TestWritePage_MissingFilesAndFolders(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	// log.md and index.md deleted by hand, the queries/ folder too, and a
	// log that does not end in a newline
	for _, p := range []string{vault.IndexPage, vault.LogPage} {
		if err := os.Remove(v.Abs(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(v.Abs("wiki/queries")); err != nil {
		t.Fatal(err)
	}
	out := write(t, e, &WritePageIn{Title: "Why is the sky blue?", Content: "Rayleigh.\n", Type: "query"})
	if out.Path != "wiki/queries/why-is-the-sky-blue.md" {
		t.Fatalf("path %s", out.Path)
	}
	if got := readFile(t, v, vault.LogPage); got != logHeader+"\n## [2026-05-01] created | Why is the sky blue?\n" {
		t.Fatalf("log.md:\n%q", got)
	}
	if got := readFile(t, v, vault.IndexPage); got != indexHeader+"\n## query (1)\n\n- [[wiki/queries/why-is-the-sky-blue|Why is the sky blue?]]\n" {
		t.Fatalf("index.md:\n%s", got)
	}
	// a log edited by hand without a final newline
	if err := os.WriteFile(v.Abs(vault.LogPage), []byte("# Log\n\nmy note"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, e, &WritePageIn{Title: "Second", Content: "x\n"})
	if got := readFile(t, v, vault.LogPage); got != "# Log\n\nmy note\n\n## [2026-05-01] created | Second\n" {
		t.Fatalf("log.md:\n%q", got)
	}
	// the store is in step with everything on disk
	rep, err := e.Index.Scan(context.Background(), index.ScanOptions{})
	if err != nil || rep.NewCount+rep.ChangedCount+rep.DeletedCount != 0 {
		t.Fatalf("rescan: %+v %v", rep, err)
	}
}

func TestWritePage_IndexOtherTypes(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/people/ada.md", "---\ntype: person\n---\nAda.\n")
	testvault.Write(t, v, "wiki/animals/yak.md", "---\ntype: animal\ntitle: Yak\n---\nYak.\n")
	e, _ := openEnv(t, v)
	write(t, e, &WritePageIn{Title: "Note", Content: "n\n", Type: "note"})
	// every type alike: one heading style, counts, by type
	want := indexHeader + "\n## animal (1)\n\n- [[wiki/animals/yak|Yak]]\n" +
		"\n## note (1)\n\n- [[wiki/note|Note]]\n" +
		"\n## person (1)\n\n- [[wiki/people/ada|ada]]\n"
	if got := readFile(t, v, vault.IndexPage); got != want {
		t.Fatalf("index.md:\n%s\nwant:\n%s", got, want)
	}
}

func TestWritePage_NFCTitle(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	out := write(t, e, &WritePageIn{Title: "Cafe\u0301 au lait", Content: "x\n", Aliases: []string{"cafe\u0301"}})
	if out.Title != "Café au lait" || out.Path != "wiki/concepts/café-au-lait.md" {
		t.Fatalf("result %+v", out)
	}
	got := readFile(t, v, out.Path)
	if !strings.Contains(got, "title: Café au lait\n") || !strings.Contains(got, "  - café\n") {
		t.Fatalf("file:\n%s", got)
	}
	// the NFC and NFD spellings name the same page
	again := write(t, e, &WritePageIn{Title: "Café au lait", Content: "y\n"})
	if again.ID != out.ID || again.Created {
		t.Fatalf("second write %+v", again)
	}
}

// TestWritePage_ContentKeptByteForByte: content goes through the operation
// table unchanged — leading indentation (an indented code block) and
// trailing blanks are the caller's, on every surface.
func TestWritePage_ContentKeptByteForByte(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	body := "    indented code block\n\ntext with trailing blanks  \n"
	raw, _ := json.Marshal(map[string]any{"title": "Indented", "content": body})
	if _, err := Lookup("page.write").Call(context.Background(), e, raw); err != nil {
		t.Fatal(err)
	}
	g, err := getPage(context.Background(), e, &GetPageIn{Title: "Indented"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Content != body {
		t.Fatalf("content changed on the way in:\n%q\nwant\n%q", g.Content, body)
	}
}

// TestWritePage_TwinNames: a write by a title whose page has a twin file
// (a name that differs only by case or normalization, not indexed) is
// refused as a conflict naming both files, and neither file changes;
// writing back what get_page returned is still unchanged.
func TestWritePage_TwinNames(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/R\u00e9sum\u00e9.md", "# nfc\n")
	testvault.Write(t, v, "wiki/Re\u0301sume\u0301.md", "# nfd\n")
	if data, _ := os.ReadFile(v.Abs("wiki/R\u00e9sum\u00e9.md")); string(data) != "# nfc\n" {
		t.Skip("this file system normalizes names")
	}
	e, _ := openEnv(t, v)
	snap := snapshot(t, v)
	for _, title := range []string{"Re\u0301sume\u0301", "R\u00e9sum\u00e9", "résumé"} {
		_, err := WritePage(context.Background(), e, &WritePageIn{Title: title, Content: "changed\n"})
		if errs.CodeOf(err) != errs.Conflict || !strings.Contains(errs.Message(err), "has a twin") {
			t.Errorf("write %q: %v", title, err)
		}
	}
	if after := snapshot(t, v); !reflect.DeepEqual(after, snap) {
		t.Fatalf("a refused write changed the vault:\n%v\n%v", snap, after)
	}
	g, err := getPage(context.Background(), e, &GetPageIn{Title: "R\u00e9sum\u00e9"})
	if err != nil {
		t.Fatal(err)
	}
	back := write(t, e, &WritePageIn{Title: "R\u00e9sum\u00e9", Content: g.Content})
	if !back.Unchanged {
		t.Errorf("write back: %+v", back)
	}
}

func TestWritePage_SourceFieldAdds(t *testing.T) {
	// --source (a field) adds to the page's sources, on a whole write and
	// on a section write; the content's frontmatter gives the whole list
	v := testvault.New(t)
	for _, s := range []string{"a.md", "b.md", "c.md"} {
		testvault.Write(t, v, "raw/sources/"+s, s+"\n")
	}
	testvault.Write(t, v, "wiki/concepts/k.md", "---\ntitle: K\nsources:\n  - raw/sources/a.md\n  - doi:10.1/x\n---\n# K\n\nbody\n\n## Part\n\nold\n")
	e, _ := openEnv(t, v)
	sources := func() []string {
		return markdown.Parse("wiki/concepts/k.md", []byte(readFile(t, v, "wiki/concepts/k.md"))).Sources
	}
	write(t, e, &WritePageIn{Title: "K", Content: "# K\n\nnew body\n\n## Part\n\nold\n", Sources: []string{"b.md"}})
	if got := strings.Join(sources(), ","); got != "raw/sources/a.md,doi:10.1/x,raw/sources/b.md" {
		t.Fatalf("whole write: sources %s", got)
	}
	write(t, e, &WritePageIn{Title: "K", Section: "Part", Content: "new\n", Sources: []string{"raw/sources/c.md", "a.md"}})
	if got := strings.Join(sources(), ","); got != "raw/sources/a.md,doi:10.1/x,raw/sources/b.md,raw/sources/c.md" {
		t.Fatalf("section write: sources %s", got)
	}
	// the frontmatter block replaces the list (how an entry is removed)
	write(t, e, &WritePageIn{Title: "K", Content: "---\nsources: [raw/sources/c.md]\n---\n# K\n\nnew body\n\n## Part\n\nnew\n", Sources: []string{"b.md"}})
	if got := strings.Join(sources(), ","); got != "raw/sources/c.md,raw/sources/b.md" {
		t.Fatalf("frontmatter list: sources %s", got)
	}
}

// TestOSFS_MapsPathsToItsVault: the write path's file system maps an
// absolute path to its own vault's path, and refuses one outside it
// rather than finding another vault.
func TestOSFS_MapsPathsToItsVault(t *testing.T) {
	v := testvault.New(t)
	o := osFS{v.Files()}
	if rel, err := o.rel(v.Abs("wiki/concepts/x.md")); err != nil || rel != "wiki/concepts/x.md" {
		t.Fatalf("rel = %q %v", rel, err)
	}
	other := testvault.New(t)
	for _, abs := range []string{other.Abs("wiki/x.md"), filepath.Dir(v.Root), v.Root + "-sibling/wiki/x.md"} {
		if rel, err := o.rel(abs); err == nil {
			t.Errorf("%s mapped to %q", abs, rel)
		}
	}
	if err := o.MkdirAll(other.Abs("wiki/new")); err == nil {
		t.Error("a folder was made in another vault")
	}
	if _, err := os.Stat(other.Abs("wiki/new")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("other vault: %v", err)
	}
}

func TestWrite_AliasAndTagFieldsAdd(t *testing.T) {
	// --alias and --tag (and the REST body's fields) add to the page's
	// lists like --source; the frontmatter map or block gives a whole list
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/concepts/k.md", "---\ntitle: K\naliases: [kay]\ntags: [a]\n---\nbody\n")
	e, _ := openEnv(t, v)
	out := write(t, e, &WritePageIn{Title: "K", Content: "body\n", Aliases: []string{"Kappa", "kay"}, Tags: []string{"b", "A"}})
	p := markdown.Parse(out.Path, []byte(readFile(t, v, out.Path)))
	if !reflect.DeepEqual(p.Aliases, []string{"kay", "Kappa"}) || !reflect.DeepEqual(p.Tags, []string{"a", "b"}) {
		t.Fatalf("after adding: aliases %q tags %q", p.Aliases, p.Tags)
	}
	out = write(t, e, &WritePageIn{Title: "K", Content: "body\n", Frontmatter: map[string]any{"aliases": []any{"Kappa"}, "tags": []any{"b"}}})
	p = markdown.Parse(out.Path, []byte(readFile(t, v, out.Path)))
	if !reflect.DeepEqual(p.Aliases, []string{"Kappa"}) || !reflect.DeepEqual(p.Tags, []string{"b"}) {
		t.Fatalf("after replacing: aliases %q tags %q", p.Aliases, p.Tags)
	}
}
