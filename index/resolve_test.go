package index

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

func scan(t testing.TB, ix *Indexer) *Report {
	t.Helper()
	rep, err := ix.Scan(context.Background(), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// resolved returns the path a page's link with the given target resolved to
// ("" when dangling) and its ambiguity count.
func resolved(t testing.TB, ix *Indexer, from, target string) (string, int) {
	t.Helper()
	var to string
	amb := -1
	err := ix.Store.View(func(tx *store.Tx) error {
		p, err := tx.Page(tx.DocByPath(from))
		if err != nil || p == nil {
			t.Fatalf("page %s: %v", from, err)
		}
		for _, l := range p.Links {
			if l.Target == target {
				amb = l.Ambiguous
				if l.To != 0 {
					to = fmt.Sprintf("<doc %d, gone>", l.To)
					if q, _ := tx.Page(l.To); q != nil {
						to = q.Path
					}
				}
				return nil
			}
		}
		t.Fatalf("%s has no link to %q (links %+v)", from, target, p.Links)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return to, amb
}

func TestResolve_ObsidianRules(t *testing.T) {
	v := testvault.New(t)
	w := func(rel, body string) { testvault.Write(t, v, rel, body) }
	w("wiki/concepts/foo.md", "---\ntitle: Foo Title\naliases: [F1, Shared Alias]\n---\nbody\n")
	w("wiki/a/Bar.md", "# Bar A\n")
	w("wiki/b/c/Bar.md", "# Bar C\n")
	w("wiki/Alpha.md", "file named Alpha\n")
	w("wiki/other.md", "---\ntitle: Alpha\naliases: [Beta]\n---\n")
	w("wiki/beta-page.md", "---\ntitle: Beta\n---\n")
	w("wiki/Café.md", "nfc file name\n")
	w("wiki/src.md", `# Links
[[Foo Title]] [[foo title]] [[F1]] [[Bar]] [[b/c/Bar]] [[wiki/a/Bar]] [[a/Bar.md]]
[[Alpha]] [[Beta]] [[Cafe`+"\u0301"+`]] [[Nowhere]] [[Foo Title#Section|label]] ![[Bar#^block]]
[md](concepts/foo.md) [up](./a/Bar.md) [pct](b/c/Bar.md) [esc](wiki/Caf%C3%A9.md)
`+"`[[In Code]]`"+` <!-- [[In Comment]] --> %%[[In Obsidian Comment]]%%
`+"```\n[[In Fence]]\n```\n"+`![[picture.png]] [[doc.pdf]]
`)
	ix := openIndexer(t, v)
	scan(t, ix)
	cases := []struct {
		target, want string
		amb          int
	}{
		{"Foo Title", "wiki/concepts/foo.md", 0},       // title
		{"foo title", "wiki/concepts/foo.md", 0},       // case-insensitive
		{"F1", "wiki/concepts/foo.md", 0},              // alias
		{"Bar", "wiki/a/Bar.md", 2},                    // two files named Bar: shortest path, reported ambiguous
		{"b/c/Bar", "wiki/b/c/Bar.md", 0},              // path relative to wiki/
		{"wiki/a/Bar", "wiki/a/Bar.md", 0},             // path relative to the vault
		{"a/Bar.md", "wiki/a/Bar.md", 0},               // with .md
		{"Alpha", "wiki/Alpha.md", 0},                  // file name beats title
		{"Beta", "wiki/beta-page.md", 0},               // title beats alias
		{"Cafe\u0301", "wiki/Café.md", 0},              // NFD link, NFC file name
		{"Nowhere", "", 0},                             // dangling
		{"concepts/foo.md", "wiki/concepts/foo.md", 0}, // markdown link relative to the page
		{"./a/Bar.md", "wiki/a/Bar.md", 0},
		{"wiki/Café.md", "wiki/Café.md", 0}, // URL-escaped markdown link
	}
	for _, c := range cases {
		got, amb := resolved(t, ix, "wiki/src.md", c.target)
		if got != c.want || amb != c.amb {
			t.Errorf("[[%s]] → %q (ambiguous %d), want %q (%d)", c.target, got, amb, c.want, c.amb)
		}
	}
	err := ix.Store.View(func(tx *store.Tx) error {
		p, _ := tx.Page(tx.DocByPath("wiki/src.md"))
		for _, l := range p.Links {
			switch l.Target {
			case "In Code", "In Comment", "In Obsidian Comment", "In Fence", "picture.png", "doc.pdf":
				t.Errorf("%q should not be a page link", l.Target)
			}
			if l.Target == "Foo Title" && l.Heading != "" && l.Heading != "Section" {
				t.Errorf("heading = %q", l.Heading)
			}
		}
		var dangling []string
		for _, d := range tx.Dangling() {
			dangling = append(dangling, d.Key)
		}
		if len(dangling) != 1 || dangling[0] != "nowhere" {
			t.Errorf("dangling = %q, want [nowhere]", dangling)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestResolve_Incremental checks that links elsewhere follow pages that
// appear, disappear, are renamed or change their names, without those
// linking pages being re-read.
func TestResolve_Incremental(t *testing.T) {
	v := testvault.New(t)
	w := func(rel, body string) { testvault.Write(t, v, rel, body) }
	w("wiki/src.md", "[[Target]] [[Nick]]\n")
	w("wiki/holder.md", "---\naliases: [Target]\n---\nI hold the alias\n")
	ix := openIndexer(t, v)
	// the scans run "later" than the writes, so no record is racy
	ix.Now = func() time.Time { return time.Now().Add(time.Hour) }
	var mu sync.Mutex
	reads := 0
	ix.readFile = func(p string) ([]byte, error) {
		mu.Lock()
		reads++
		mu.Unlock()
		return readFileOS(p)
	}
	scan(t, ix)
	if got, _ := resolved(t, ix, "wiki/src.md", "Target"); got != "wiki/holder.md" {
		t.Fatalf("alias resolution: %q", got)
	}
	if got, _ := resolved(t, ix, "wiki/src.md", "Nick"); got != "" {
		t.Fatalf("Nick should dangle, got %q", got)
	}
	steps := []struct {
		name   string
		do     func()
		target string
		want   string
		reads  int // files read by the scan: never src.md
	}{
		{"a file named Target beats the alias", func() { w("wiki/deep/Target.md", "x\n") }, "Target", "wiki/deep/Target.md", 1},
		{"alias added to an existing page resolves a dangling link", func() { w("wiki/nick.md", "---\naliases: [Nick]\n---\n") }, "Nick", "wiki/nick.md", 1},
		{"the winning page is deleted: back to the alias", func() { rm(t, v, "wiki/deep/Target.md") }, "Target", "wiki/holder.md", 0},
		{"alias removed: dangling", func() { w("wiki/holder.md", "no alias now\n") }, "Target", "", 1},
		{"rename a page to the target name", func() { mv(t, v, "wiki/nick.md", "wiki/Target.md") }, "Target", "wiki/Target.md", 1},
	}
	for _, s := range steps {
		s.do()
		reads = 0
		scan(t, ix)
		if got, _ := resolved(t, ix, "wiki/src.md", s.target); got != s.want {
			t.Errorf("%s: [[%s]] → %q, want %q", s.name, s.target, got, s.want)
		}
		if reads != s.reads {
			t.Errorf("%s: scan read %d files, want %d", s.name, reads, s.reads)
		}
		if diffs, err := storecheck.CheckGraph(ix.Store); err != nil || len(diffs) > 0 {
			t.Errorf("%s: graph: %v %v", s.name, err, diffs)
		}
	}
}

func TestResolve_CorpusDanglingOnlyExample(t *testing.T) {
	v := testvault.WithCorpus(t)
	ix := openIndexer(t, v)
	if _, err := ix.Scan(context.Background(), ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	err := ix.Store.View(func(tx *store.Tx) error {
		if n := tx.PageCount(); n != 173 {
			t.Errorf("pages = %d, want 173", n)
		}
		d := tx.Dangling()
		if len(d) != 1 || d[0].Key != "example" {
			t.Fatalf("dangling = %+v, want only Example", d)
		}
		// 4 wikilinks and 2 markdown links, all in "Internal links"
		if d[0].Count != 6 || len(d[0].Sources) != 1 {
			t.Errorf("Example: %d links from %d pages", d[0].Count, len(d[0].Sources))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diffs, err := storecheck.CheckGraph(ix.Store); err != nil || len(diffs) > 0 {
		t.Fatalf("graph: %v %v", err, diffs)
	}
	_ = vault.WikiDir
}

// TestResolve_FolderTieBreak: twin file names in en/ and ru/ resolve
// within the linking page's own folder (as Obsidian 1.13 does); an
// exact path still wins, and ancestor folders count for nothing.
func TestResolve_FolderTieBreak(t *testing.T) {
	v := testvault.New(t)
	w := func(rel, body string) { testvault.Write(t, v, rel, body) }
	w("wiki/en/a.md", "[[b]] [[ru/b]] [x](b.md)\n")
	w("wiki/en/b.md", "# B\n")
	w("wiki/ru/a.md", "[[b]] [[B]] [[en/b]] [[../en/b]]\n")
	w("wiki/ru/b.md", "# Б\n")
	w("wiki/ru/sub/c.md", "[[b]]\n")
	w("wiki/top.md", "[[b]]\n")
	w("wiki/zz/long-folder/b.md", "# a third b, deeper\n")
	w("wiki/zz/long-folder/d.md", "[[b]]\n")
	ix := openIndexer(t, v)
	scan(t, ix)
	cases := []struct {
		from, target, want string
		amb                int
	}{
		{"wiki/ru/a.md", "b", "wiki/ru/b.md", 3},
		{"wiki/ru/a.md", "B", "wiki/ru/b.md", 3},
		{"wiki/en/a.md", "b", "wiki/en/b.md", 3},
		{"wiki/en/a.md", "ru/b", "wiki/ru/b.md", 0},    // a path wins over the folder
		{"wiki/ru/a.md", "en/b", "wiki/en/b.md", 0},    // a path wins over the folder
		{"wiki/ru/a.md", "../en/b", "wiki/en/b.md", 0}, // a wikilink relative to the page
		{"wiki/en/a.md", "b.md", "wiki/en/b.md", 0},    // markdown links are relative paths
		{"wiki/zz/long-folder/d.md", "b", "wiki/zz/long-folder/b.md", 3},
		// no match in its own folder: the shortest path, then the first
		{"wiki/top.md", "b", "wiki/en/b.md", 3},
		// ancestor folders count for nothing: ru/sub/c.md is not in ru/
		{"wiki/ru/sub/c.md", "b", "wiki/en/b.md", 3},
	}
	for _, c := range cases {
		got, amb := resolved(t, ix, c.from, c.target)
		if got != c.want || amb != c.amb {
			t.Errorf("%s: [[%s]] → %q (ambiguous %d), want %q (%d)", c.from, c.target, got, amb, c.want, c.amb)
		}
	}
	// a full rebuild (links resolved in one drain, shared between pages)
	// agrees with the incremental resolution above
	fresh := openIndexerAt(t, v, t.TempDir()+"/fresh.db")
	if _, err := fresh.Scan(context.Background(), ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if got, _ := resolved(t, fresh, c.from, c.target); got != c.want {
			t.Errorf("rebuild: %s: [[%s]] → %q, want %q", c.from, c.target, got, c.want)
		}
	}
}

// TestResolve_FolderTieBreakIncremental: a twin appearing in, leaving or
// moving into the linking page's folder re-resolves the link without the
// linking page being read again; so does a page whose own link reaches
// itself when a better match appears.
func TestResolve_FolderTieBreakIncremental(t *testing.T) {
	v := testvault.New(t)
	w := func(rel, body string) { testvault.Write(t, v, rel, body) }
	w("wiki/en/b.md", "# B\n")
	w("wiki/ru/a.md", "[[b]]\n")
	w("wiki/x/self.md", "---\ntitle: Gamma\n---\n[[Gamma]]\n")
	ix := openIndexer(t, v)
	ix.Now = func() time.Time { return time.Now().Add(time.Hour) }
	var mu sync.Mutex
	var read []string
	ix.readFile = func(p string) ([]byte, error) {
		mu.Lock()
		read = append(read, p)
		mu.Unlock()
		return readFileOS(p)
	}
	scan(t, ix)
	steps := []struct {
		name               string
		do                 func()
		from, target, want string
	}{
		{"a twin appears in the linker's folder", func() { w("wiki/ru/b.md", "# Б\n") }, "wiki/ru/a.md", "b", "wiki/ru/b.md"},
		{"the twin moves away", func() { mv(t, v, "wiki/ru/b.md", "wiki/ru/deep/b.md") }, "wiki/ru/a.md", "b", "wiki/en/b.md"},
		{"another one moves in", func() { mv(t, v, "wiki/en/b.md", "wiki/ru/B.md") }, "wiki/ru/a.md", "b", "wiki/ru/B.md"},
		{"it is deleted", func() { rm(t, v, "wiki/ru/B.md") }, "wiki/ru/a.md", "b", "wiki/ru/deep/b.md"},
		{"a self-link loses to a file named like the title", func() { w("wiki/gamma.md", "# file named gamma\n") }, "wiki/x/self.md", "Gamma", "wiki/gamma.md"},
		{"and wins again when it goes", func() { rm(t, v, "wiki/gamma.md") }, "wiki/x/self.md", "Gamma", "wiki/x/self.md"},
	}
	for _, s := range steps {
		s.do()
		mu.Lock()
		read = nil
		mu.Unlock()
		scan(t, ix)
		if got, _ := resolved(t, ix, s.from, s.target); got != s.want {
			t.Errorf("%s: %s [[%s]] → %q, want %q", s.name, s.from, s.target, got, s.want)
		}
		for _, p := range read {
			if strings.HasSuffix(p, filepath.FromSlash(s.from)) {
				t.Errorf("%s: the scan re-read %s", s.name, s.from)
			}
		}
		if diffs, err := storecheck.CheckGraph(ix.Store); err != nil || len(diffs) > 0 {
			t.Errorf("%s: graph: %v %v", s.name, err, diffs)
		}
	}
}

// TestResolve_FileLinks: links to files outside wiki/ (raw sources,
// assets, top-level files) are no page links: never dangling; one into
// raw/sources/ cites that source, whether or not it exists.
func TestResolve_FileLinks(t *testing.T) {
	v := testvault.New(t)
	w := func(rel, body string) { testvault.Write(t, v, rel, body) }
	w("raw/sources/x.md", "source x\n")
	w("wiki/sources/p.md", "---\nsources: [raw/sources/fm.md]\n---\n"+
		"[[../../raw/sources/x.md|original]] [[raw/sources/y]] [md](../../raw/sources/z.md)\n"+
		"![[../../raw/assets/pic.md]] [top](../../schema.md) [[Nowhere]] [[./sibling]]\n")
	w("wiki/index.md", "[x](raw/sources/x.md)\n")
	// one folder too shallow for its ../../: ".." stops at the vault root
	w("wiki/top.md", "[[../../raw/sources/x.md|original]] [up](../../../raw/sources/w.md) [[../../../etc/passwd]]\n")
	ix := openIndexer(t, v)
	scan(t, ix)
	err := ix.Store.View(func(tx *store.Tx) error {
		p, _ := tx.Page(tx.DocByPath("wiki/sources/p.md"))
		var links []string
		for _, l := range p.Links {
			links = append(links, l.Target)
		}
		if strings.Join(links, ",") != "Nowhere,./sibling" {
			t.Errorf("page links %q, want only Nowhere and ./sibling", links)
		}
		want := "raw/sources/fm.md,raw/sources/x.md,raw/sources/y.md,raw/sources/z.md"
		if got := strings.Join(p.SourceKeys, ","); got != want {
			t.Errorf("source keys %s, want %s", got, want)
		}
		var dangling []string
		for _, d := range tx.Dangling() {
			dangling = append(dangling, d.Key)
		}
		if strings.Join(dangling, ",") != "nowhere,sibling" { // ../../../etc/passwd names the vault's etc/passwd.md: a file link
			t.Errorf("dangling %q", dangling)
		}
		top, _ := tx.Page(tx.DocByPath("wiki/top.md"))
		if got := strings.Join(top.SourceKeys, ","); got != "raw/sources/x.md,raw/sources/w.md" {
			t.Errorf("top.md cites %s", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestScan_ParseVersionReparses: a store whose pages were parsed by
// another ParseVersion is re-parsed in full by its next scan, though no
// file changed; then scans are incremental again.
func TestScan_ParseVersionReparses(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/target.md", "# T\n")
	testvault.Write(t, v, "wiki/src.md", "---\nrelated: \"[[target]]\"\n---\nbody\n")
	ix := openIndexer(t, v)
	ix.Now = func() time.Time { return time.Now().Add(time.Hour) }
	scan(t, ix)
	// as an older synapse left it: no frontmatter link, another version
	err := ix.Store.Update(func(tx *store.Tx) error {
		p, err := tx.Page(tx.DocByPath("wiki/src.md"))
		if err != nil {
			return err
		}
		p.Links = nil
		if err := tx.PutPageLinks(p); err != nil {
			return err
		}
		return tx.SetMeta(metaParseVersion, []byte("1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	rep := scan(t, ix)
	if got, _ := resolved(t, ix, "wiki/src.md", "target"); got != "wiki/target.md" {
		t.Errorf("after the re-parse [[target]] → %q", got)
	}
	if rep.Reparsed == 0 {
		t.Errorf("the scan did not re-parse: %+v", rep)
	}
	if again := scan(t, ix); again.Reparsed+again.NewCount+again.ChangedCount != 0 {
		t.Errorf("a second scan re-parsed again: %+v", again)
	}
}
