package ops

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

func move(t *testing.T, e *Env, in *MovePageIn) *MovePageOut {
	t.Helper()
	out, err := movePage(context.Background(), e, in)
	if err != nil {
		t.Fatalf("move %q: %v", in.Title, err)
	}
	return out
}

// TestMove_KeepsEachLinkForm: every form of link to a page is rewritten in
// its own form (file name, title, alias, paths of each kind, markdown
// links relative and escaped, headings, blocks, labels, embeds,
// frontmatter), and the moved page's own relative links still reach what
// they reached.
func TestMove_KeepsEachLinkForm(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/notes/target-page.md", "---\ntitle: Target Page\naliases: [TP]\n---\n"+
		"Back to [[a]] and [A](../a.md), myself [[target-page#Top]], a picture ![p](../../raw/assets/p.png).\n")
	testvault.Write(t, v, "raw/assets/p.png", "png")
	testvault.Write(t, v, "wiki/a.md", "---\nrelated: \"[[Target Page]]\"\nsee: ['[[target-page|t]]']\n---\n"+
		"[[target-page]] [[Target Page]] [[target page]] [[TP]] [[notes/target-page]] [[wiki/notes/target-page]]\n"+
		"[[target-page.md]] [[Target Page#Heading|label]] [[target-page#^blk]] ![[target-page]]\n"+
		"[md](notes/target-page.md) [angle](<notes/target-page.md>) [head](notes/target-page.md#Heading)\n"+
		"`[[target-page]]` and [[Other]]\n")
	testvault.Write(t, v, "wiki/sub/b.md", "[up](../notes/target-page.md) [[../notes/target-page|rel]]\n")
	e, _ := openEnv(t, v)
	out := move(t, e, &MovePageIn{Title: "Target Page", To: "Goal Page", Path: "wiki/archive 2024/goal.md"})
	if out.Path != "wiki/archive 2024/goal.md" || out.Title != "Goal Page" || out.FromPath != "wiki/notes/target-page.md" || out.FromTitle != "Target Page" {
		t.Fatalf("result %+v", out)
	}
	if len(out.Changed) != 2 || out.Changed[0].Path != "wiki/a.md" || out.Changed[1].Path != "wiki/sub/b.md" {
		t.Fatalf("changed %+v", out.Changed)
	}
	wantA := "---\nrelated: \"[[Goal Page]]\"\nsee: ['[[goal|t]]']\n---\n" +
		"[[goal]] [[Goal Page]] [[goal page]] [[TP]] [[archive 2024/goal]] [[wiki/archive 2024/goal]]\n" +
		"[[goal.md]] [[Goal Page#Heading|label]] [[goal#^blk]] ![[goal]]\n" +
		"[md](archive%202024/goal.md) [angle](<archive 2024/goal.md>) [head](archive%202024/goal.md#Heading)\n" +
		"`[[target-page]]` and [[Other]]\n"
	if got := readFile(t, v, "wiki/a.md"); got != wantA {
		t.Errorf("wiki/a.md:\n%s\nwant:\n%s", got, wantA)
	}
	if got, want := readFile(t, v, "wiki/sub/b.md"), "[up](../archive%202024/goal.md) [[../archive 2024/goal|rel]]\n"; got != want {
		t.Errorf("wiki/sub/b.md: %q, want %q", got, want)
	}
	wantMoved := "---\ntitle: Goal Page\naliases: [TP]\n---\n" +
		"Back to [[a]] and [A](../a.md), myself [[goal#Top]], a picture ![p](../../raw/assets/p.png).\n"
	if got := readFile(t, v, "wiki/archive 2024/goal.md"); got != wantMoved {
		t.Errorf("the moved page:\n%s\nwant:\n%s", got, wantMoved)
	}
	if _, err := os.Stat(v.Abs("wiki/notes/target-page.md")); !os.IsNotExist(err) {
		t.Errorf("the old file is still there (%v)", err)
	}
	// the index: every link resolves to the moved page, nothing dangles
	g := getPageOut(t, e, "Goal Page")
	if g.BacklinksTotal != 2 {
		t.Errorf("backlinks %d", g.BacklinksTotal)
	}
	a := getPageOut(t, e, "a")
	for _, l := range a.Links {
		if l.Target != "Other" && l.Path != "wiki/archive 2024/goal.md" {
			t.Errorf("a's link %q reaches %q", l.Target, l.Path)
		}
	}
	if _, err := os.Stat(v.Abs(moveJournalFile)); !os.IsNotExist(err) {
		t.Errorf("the journal is left (%v)", err)
	}
	if log := readFile(t, v, vault.LogPage); !strings.HasSuffix(log, "## [2026-05-01] moved | Goal Page\n- from: Target Page (wiki/notes/target-page.md)\n- to: wiki/archive 2024/goal.md\n- links: 16 rewritten in 2 other pages\n") {
		t.Errorf("log.md:\n%s", log)
	}
}

// TestMove_Refused: a move onto an existing file, onto a name another page
// answers to, of a reserved file, or to nowhere is refused, changing
// nothing.
func TestMove_Refused(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/x.md", "---\ntitle: X\n---\n[[Y]]\n")
	testvault.Write(t, v, "wiki/y.md", "---\ntitle: Y\naliases: [Why]\n---\n[[X]]\n")
	e, _ := openEnv(t, v)
	ctx := context.Background()
	for _, c := range []struct {
		in   MovePageIn
		code errs.Code
		says string
	}{
		{MovePageIn{Title: "X", Path: "wiki/y.md"}, errs.Conflict, "exists already"},
		{MovePageIn{Title: "X", Path: "wiki/Y.md"}, errs.Conflict, "exists already"},
		{MovePageIn{Title: "X", To: "Why"}, errs.Conflict, "another page answers"},
		{MovePageIn{Title: "X", To: "y"}, errs.Conflict, "another page answers"},
		{MovePageIn{Title: "X"}, errs.Invalid, "say where"},
		{MovePageIn{Title: "X", To: "X"}, errs.Invalid, "nothing to move"},
		{MovePageIn{Title: "X", Path: "notes/x.md"}, errs.Invalid, "outside wiki/"},
		{MovePageIn{Title: "X", To: "index"}, errs.Invalid, ""},
		{MovePageIn{Title: "log", To: "Journal"}, errs.Invalid, "maintains"},
		{MovePageIn{Title: "Nothing", To: "Z"}, errs.NotFound, ""},
	} {
		_, err := movePage(ctx, e, &c.in)
		wantCode(t, err, c.code, c.says)
	}
	if readFile(t, v, "wiki/x.md") != "---\ntitle: X\n---\n[[Y]]\n" || readFile(t, v, "wiki/y.md") != "---\ntitle: Y\naliases: [Why]\n---\n[[X]]\n" {
		t.Fatal("a refused move changed a file")
	}
}

// TestMove_KeepsOtherPagesLinks: a new name that another page's links
// reach it by (here a file name taking over links by title) makes those
// links reach that page still.
func TestMove_KeepsOtherPagesLinks(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/people/q.md", "---\ntitle: Bar\n---\nQ.\n")
	testvault.Write(t, v, "wiki/p.md", "---\ntitle: P\n---\nP.\n")
	testvault.Write(t, v, "wiki/a.md", "[[Bar]] [[P]]\n")
	e, _ := openEnv(t, v)
	out := move(t, e, &MovePageIn{Title: "P", Path: "wiki/notes/Bar.md"})
	if out.Title != "P" {
		t.Fatalf("the title came from frontmatter and stays: %+v", out)
	}
	a := getPageOut(t, e, "a")
	if len(a.Links) != 2 || a.Links[0].Path != "wiki/people/q.md" || a.Links[1].Path != "wiki/notes/Bar.md" {
		t.Fatalf("a's links after the move: %+v\n%s", a.Links, readFile(t, v, "wiki/a.md"))
	}
}

// TestMove_TitleFollowsFileName: a page titled by its file name takes the
// new file name as title; a rename keeps the file name style.
func TestMove_TitleFollowsFileName(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/Linking/Internal links.md", "Body.\n")
	testvault.Write(t, v, "wiki/concepts/src-cluster-aware-updating.md", "---\ntitle: Cluster-Aware Updating\n---\nCAU.\n")
	testvault.Write(t, v, "wiki/a.md", "[[Internal links]] [[src-cluster-aware-updating]]\n")
	e, _ := openEnv(t, v)
	out := move(t, e, &MovePageIn{Title: "Internal links", To: "Wikilinks: how to"})
	if out.Path != "wiki/Linking/Wikilinks how to.md" || out.Title != "Wikilinks: how to" {
		t.Fatalf("renamed to %+v", out)
	}
	if got := readFile(t, v, out.Path); got != "---\ntitle: 'Wikilinks: how to'\n---\nBody.\n" {
		t.Errorf("the renamed page: %q", got)
	}
	out = move(t, e, &MovePageIn{Title: "Cluster-Aware Updating", To: "Failover Clustering"})
	if out.Path != "wiki/concepts/src-failover-clustering.md" {
		t.Fatalf("renamed to %+v", out)
	}
	if got := readFile(t, v, "wiki/a.md"); got != "[[Wikilinks how to]] [[src-failover-clustering]]\n" {
		t.Errorf("a: %q", got)
	}
	out = move(t, e, &MovePageIn{Title: "Wikilinks: how to", Path: "wiki/Linking/Links.md"})
	if out.Title != "Wikilinks: how to" {
		t.Fatalf("a frontmatter title stays: %+v", out)
	}
	var n int
	_ = e.Store.View(func(tx *store.Tx) error { n = len(tx.Backlinks(tx.DocByPath(out.Path))); return nil })
	if n != 1 {
		t.Fatalf("backlinks %d", n)
	}
}

// TestMove_RereadsFilesChangedSinceIndexed: a linking page edited by hand
// after it was indexed is indexed again and rewritten as it is now.
func TestMove_RereadsFilesChangedSinceIndexed(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/target.md", "Target.\n")
	testvault.Write(t, v, "wiki/a.md", "[[target]]\n")
	e, _ := openEnv(t, v)
	testvault.Write(t, v, "wiki/a.md", "[[target]] and, added by hand, [[target|again]]\n")
	move(t, e, &MovePageIn{Title: "target", To: "Goal"})
	if got := readFile(t, v, "wiki/a.md"); got != "[[goal]] and, added by hand, [[goal|again]]\n" { // written in lower case, it stays so
		t.Fatalf("a.md: %q", got)
	}
}

// TestMove_Heading: a rename makes the body's first H1 the new title when
// it was the old one (case and spacing aside), and says so; another first
// H1 is kept and the result says that; a heading in code is no heading,
// and a move that keeps the title keeps the heading.
func TestMove_Heading(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/old-name.md", "---\ntitle: Old Name\n---\n# Old Name\n\nText about Old Name.\n\n# Old Name\n")
	testvault.Write(t, v, "wiki/Alpha.md", "\r\n#  alpha \r\nbody\r\n")
	testvault.Write(t, v, "wiki/other.md", "---\ntitle: Other\n---\n## Other\n\n# A heading of its own\n")
	testvault.Write(t, v, "wiki/code.md", "```\n# Code\n```\n")
	e, _ := openEnv(t, v)

	out := move(t, e, &MovePageIn{Title: "Old Name", To: "New Name"})
	if got, want := readFile(t, v, "wiki/new-name.md"), "---\ntitle: New Name\n---\n# New Name\n\nText about Old Name.\n\n# Old Name\n"; got != want {
		t.Errorf("renamed page %q, want %q", got, want)
	}
	if len(out.Notes) != 1 || out.Notes[0] != `the first heading "# Old Name" follows the new title: "# New Name"` {
		t.Errorf("notes %q", out.Notes)
	}
	out = move(t, e, &MovePageIn{Title: "Alpha", To: "Beta"})
	if got, want := readFile(t, v, "wiki/Beta.md"), "\r\n#  Beta \r\nbody\r\n"; got != want {
		t.Errorf("renamed page %q, want %q", got, want)
	}
	if len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "follows the new title") {
		t.Errorf("notes %q", out.Notes)
	}
	out = move(t, e, &MovePageIn{Title: "Other", To: "Another"})
	if got, want := readFile(t, v, "wiki/another.md"), "---\ntitle: Another\n---\n## Other\n\n# A heading of its own\n"; got != want {
		t.Errorf("renamed page %q, want %q", got, want)
	}
	if len(out.Notes) != 1 || out.Notes[0] != `the first heading "# A heading of its own" is not the old title, so it was kept` {
		t.Errorf("notes %q", out.Notes)
	}
	out = move(t, e, &MovePageIn{Title: "code", To: "Code"})
	if got := readFile(t, v, "wiki/code.md"); !strings.HasSuffix(got, "```\n# Code\n```\n") || len(out.Notes) != 0 {
		t.Errorf("a heading in code: %q, notes %q", got, out.Notes)
	}
	out = move(t, e, &MovePageIn{Title: "New Name", Path: "wiki/sub/new-name.md"})
	if got := readFile(t, v, "wiki/sub/new-name.md"); !strings.Contains(got, "\n# New Name\n") || len(out.Notes) != 0 {
		t.Errorf("a move keeping the title: %q, notes %q", got, out.Notes)
	}
	if g := getPageOut(t, e, "Beta"); g.Path != "wiki/Beta.md" {
		t.Errorf("Beta at %s", g.Path)
	}
}

// TestMove_KeepsID: a page keeps its id whatever the move (a new file, a
// new title, both), get_page by the old id finds it, its history follows,
// and a store rebuilt from the files gives it the same id.
func TestMove_KeepsID(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/robin-sparrow.md", "---\ntitle: Robin Sparrow\n---\nA bird.\n")
	testvault.Write(t, v, "wiki/concepts/other.md", "See [[Robin Sparrow]].\n")
	e, _ := openEnv(t, v)
	id := getPageOut(t, e, "Robin Sparrow").ID
	write(t, e, &WritePageIn{Title: "Robin Sparrow", Content: "A small bird.\n"})
	out := move(t, e, &MovePageIn{Title: "Robin Sparrow", Path: "wiki/concepts/robin-sparrow.md"})
	if out.ID != id {
		t.Fatalf("--path: id %s, was %s", out.ID, id)
	}
	out = move(t, e, &MovePageIn{Title: id, To: "Robin Redbreast", Path: "wiki/entities/robin.md"})
	if out.ID != id || out.Path != "wiki/entities/robin.md" {
		t.Fatalf("--to --path: %+v, id was %s", out, id)
	}
	if g := getPageOut(t, e, id); g.Path != "wiki/entities/robin.md" {
		t.Fatalf("page get by the old id: %s", g.Path)
	}
	h, err := pageHistory(context.Background(), e, &PageHistoryIn{Title: id, Limit: 20})
	if err != nil || len(h.Revisions) < 3 {
		t.Fatalf("history after the moves: %+v, %v", h, err)
	}
	// the store rebuilt from the files (synapse.db deleted): the same id
	if _, err := e.Index.Scan(context.Background(), index.ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	if g := getPageOut(t, e, "Robin Redbreast"); g.ID != id {
		t.Fatalf("after a rebuild: id %s, was %s", g.ID, id)
	}
	// a new page at the file the page left gets an id of its own
	w := write(t, e, &WritePageIn{Title: "Robin Sparrow", Path: "wiki/concepts/robin-sparrow.md", Content: "Another.\n"})
	if w.ID == id {
		t.Fatalf("a new page took the moved page's id %s", id)
	}
}

// TestMove_RenamedFileKeepsTheVaultsStyle: the renamed file takes the
// style of the old name: a slug stays a slug (also when the page's title
// was its file name, "spruce-juniper"), a title-named file takes the new
// title, a prefixed slug keeps its prefix.
func TestMove_RenamedFileKeepsTheVaultsStyle(t *testing.T) {
	for _, c := range []struct{ old, oldTitle, title, want string }{
		{"wiki/q/spruce-juniper.md", "spruce-juniper", "Spruce Juniper", "wiki/q/spruce-juniper.md"},
		{"wiki/q/robin-sparrow.md", "Robin Sparrow", "Robin Redbreast", "wiki/q/robin-redbreast.md"},
		{"wiki/q/Robin Sparrow.md", "Robin Sparrow", "Robin Redbreast", "wiki/q/Robin Redbreast.md"},
		{"wiki/q/src-robin-sparrow.md", "Robin Sparrow", "Robin Redbreast", "wiki/q/src-robin-redbreast.md"},
		{"wiki/q/notes.md", "Robin Sparrow", "Robin Redbreast", "wiki/q/robin-redbreast.md"},
	} {
		if got := renamedFile(c.old, c.oldTitle, c.title); got != c.want {
			t.Errorf("renamedFile(%q, %q, %q) = %q, want %q", c.old, c.oldTitle, c.title, got, c.want)
		}
	}
}

// TestMove_KeepAlias: keep_alias adds the old title to the moved page's
// aliases (after those it has, in their style of list), links in the
// vault are still rewritten to the new title, and the old name still
// reaches the page; a move that keeps the title adds nothing.
func TestMove_KeepAlias(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/notes/old-name.md", "---\ntitle: Old Name\nalias: ONm\n---\nBody.\n")
	testvault.Write(t, v, "wiki/a.md", "See [[Old Name]].\n")
	e, _ := openEnv(t, v)
	out := move(t, e, &MovePageIn{Title: "Old Name", To: "New Name", KeepAlias: true})
	if out.Path != "wiki/notes/new-name.md" || len(out.Changed) != 1 {
		t.Fatalf("result %+v", out)
	}
	if got, want := readFile(t, v, "wiki/notes/new-name.md"), "---\ntitle: New Name\naliases:\n  - ONm\n  - Old Name\n---\nBody.\n"; got != want {
		t.Errorf("moved page:\n%s\nwant:\n%s", got, want)
	}
	if got := readFile(t, v, "wiki/a.md"); got != "See [[New Name]].\n" {
		t.Errorf("wiki/a.md: %q", got)
	}
	g := mustCall[GetPageOut](t, e, opGetPage, obj{"title": "Old Name"})
	if g.Path != "wiki/notes/new-name.md" {
		t.Errorf("the old name reaches %s", g.Path)
	}
	// moved again, keeping the title: no alias added, a note says so
	out = move(t, e, &MovePageIn{Title: "New Name", Path: "wiki/other/new-name.md", KeepAlias: true})
	if !strings.Contains(strings.Join(out.Notes, "\n"), "no alias was added") {
		t.Errorf("notes %q", out.Notes)
	}
	if got := readFile(t, v, "wiki/other/new-name.md"); strings.Count(got, "Old Name") != 1 || strings.Contains(got, "- New Name") {
		t.Errorf("moved again:\n%s", got)
	}
}

// TestMove_DryRun: a dry run answers what the move would (path, title,
// the pages rewritten and how many links) and changes no file; the move
// made afterwards says the same; a dry run onto a taken name is refused
// as the move is.
func TestMove_DryRun(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/notes/old-name.md", "---\ntitle: Old Name\n---\nBody.\n")
	testvault.Write(t, v, "wiki/a.md", "See [[Old Name]] and [[old-name]].\n")
	testvault.Write(t, v, "wiki/taken.md", "Taken.\n")
	e, _ := openEnv(t, v)
	before := vaultFiles(t, v.Root)
	d := move(t, e, &MovePageIn{Title: "Old Name", To: "New Name", KeepAlias: true, DryRun: true})
	if got := vaultFiles(t, v.Root); !reflect.DeepEqual(got, before) {
		t.Fatal("a dry run changed the vault's files")
	}
	m := move(t, e, &MovePageIn{Title: "Old Name", To: "New Name", KeepAlias: true})
	if !d.DryRun || m.DryRun || d.Path != m.Path || d.ID != m.ID || d.Links != m.Links || d.Links != 2 ||
		!reflect.DeepEqual(d.Changed, m.Changed) || !reflect.DeepEqual(d.Notes, m.Notes) {
		t.Fatalf("dry run %+v\nmove %+v", d, m)
	}
	if _, err := movePage(context.Background(), e, &MovePageIn{Title: "New Name", To: "Taken", DryRun: true}); errs.CodeOf(err) != errs.Conflict {
		t.Errorf("a dry run onto a taken name: %v", err)
	}
}
