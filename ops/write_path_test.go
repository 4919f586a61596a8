package ops

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// TestWrite_ChosenPath: a new page goes where the caller says, so a wiki
// that links by file name needs no second write; its type is the folder's
// unless given. An existing page is written only at its own path.
func TestWrite_ChosenPath(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/en/finance/defi/pools.md", "---\ntitle: Pools\n---\nSee [[cluster-aware-updating]].\n")
	e, _ := openEnv(t, v)
	ctx := context.Background()
	out := write(t, e, &WritePageIn{Title: "Cluster-Aware Updating (CAU)", Content: "Patches nodes.\n", Path: "wiki/concepts/cluster-aware-updating.md"})
	if out.Path != "wiki/concepts/cluster-aware-updating.md" || out.Title != "Cluster-Aware Updating (CAU)" || out.Type != "concept" || !out.Created {
		t.Fatalf("created %+v", out)
	}
	if g := getPageOut(t, e, "Pools"); len(g.Links) != 1 || g.Links[0].Path != out.Path {
		t.Fatalf("the link by file name does not reach the page: %+v", g.Links)
	}
	// a folder of no type: the page is a note there, unless a type is given
	out = write(t, e, &WritePageIn{Title: "Impermanent Loss", Content: "x\n", Path: "wiki/en/finance/defi/impermanent-loss.md"})
	if out.Type != "note" || out.Path != "wiki/en/finance/defi/impermanent-loss.md" {
		t.Fatalf("created %+v", out)
	}
	out = write(t, e, &WritePageIn{Title: "AMM", Content: "x\n", Path: "wiki/en/finance/defi/amm.md", Type: "concept"})
	if out.Type != "concept" {
		t.Fatalf("created %+v", out)
	}
	// the page's own path: an update in place
	out = write(t, e, &WritePageIn{Title: "AMM", Content: "y\n", Path: "wiki/en/finance/defi/amm.md"})
	if out.Created || out.Path != "wiki/en/finance/defi/amm.md" {
		t.Fatalf("updated %+v", out)
	}
	for _, c := range []struct {
		title, path string
		code        errs.Code
		says        string
	}{
		{"AMM", "wiki/concepts/amm.md", errs.Conflict, "does not move a page"},
		{"Other", "wiki/en/finance/defi/amm.md", errs.Conflict, `holds the page "AMM"`},
		{"Other", "wiki/EN/Finance/defi/AMM.md", errs.Conflict, `holds the page "AMM"`},
		{"Other", "notes/x.md", errs.Invalid, "outside wiki/"},
		{"Other", "wiki/../x.md", errs.Invalid, "clean"},
		{"Other", "/wiki/x.md", errs.Invalid, "forward slashes"},
		{"Other", "wiki/x.txt", errs.Invalid, "end in .md"},
		{"Other", "wiki/log.md", errs.Invalid, "synapse maintains"},
		{"Other", "wiki/.obsidian/x.md", errs.Invalid, "hidden"},
		{"Other", "wiki/a#b.md", errs.Invalid, "do not allow"},
		{"Other", "wiki/con.md", errs.Invalid, "Windows reserves"},
	} {
		_, err := WritePage(ctx, e, &WritePageIn{Title: c.title, Content: "z\n", Path: c.path})
		wantCode(t, err, c.code, c.says)
	}
	if _, err := os.Stat(v.Abs("wiki/concepts/other.md")); err == nil {
		t.Fatal("a refused write created a page")
	}
}

// TestWrite_TitleLikeAPath: a title that is a .md path and names no page
// is refused with the way to choose a path; one that names a page by its
// path writes that page.
func TestWrite_TitleLikeAPath(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/en/x.md", "---\ntitle: X\n---\nx\n")
	e, _ := openEnv(t, v)
	_, err := WritePage(context.Background(), e, &WritePageIn{Title: "wiki/en/finance/defi/y.md", Content: "y\n"})
	wantCode(t, err, errs.Invalid, "looks like a file path", "--path wiki/en/finance/defi/y.md")
	_, err = WritePage(context.Background(), e, &WritePageIn{Title: "y.md", Content: "y\n"})
	wantCode(t, err, errs.Invalid, "--path wiki/y.md")
	if out := write(t, e, &WritePageIn{Title: "wiki/en/x.md", Content: "new\n"}); out.Path != "wiki/en/x.md" || out.Created {
		t.Fatalf("write by path: %+v", out)
	}
}

// TestReviewCreate_StubBesideItsLinkers: a create action writes the stub in
// the folder most of the pages linking to it are in.
func TestReviewCreate_StubBesideItsLinkers(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/en/finance/a.md", "[[Yield Farming]]\n")
	testvault.Write(t, v, "wiki/en/finance/b.md", "[[yield farming]]\n")
	testvault.Write(t, v, "wiki/en/c.md", "[[Yield Farming]]\n")
	e := newTestEnv(t, v)
	it := add(t, e, TypeMissingPage, "Yield Farming")
	out := mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "create"})
	if len(out.Pages) != 1 || out.Pages[0].Path != "wiki/en/finance/yield-farming.md" {
		t.Fatalf("stub at %+v", out.Pages)
	}
	var n int
	_ = e.Store.View(func(tx *store.Tx) error { n = len(tx.Backlinks(tx.DocByPath(out.Pages[0].Path))); return nil })
	if n != 3 {
		t.Fatalf("the stub has %d backlinks, want 3", n)
	}
}

// A stub never goes into the folder of source summaries, where it would
// take the type source: summaries link to the concepts they mention.
func TestReviewCreate_StubNotAmongSourceSummaries(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/sources/talk-1.md", "[[Yield Farming]]\n")
	testvault.Write(t, v, "wiki/sources/talk-2.md", "[[Yield Farming]]\n")
	testvault.Write(t, v, "wiki/concepts/amm.md", "[[Yield Farming]]\n")
	testvault.Write(t, v, "wiki/sources/talk-3.md", "[[Impermanent loss]]\n")
	e := newTestEnv(t, v)
	for title, want := range map[string]string{"Yield Farming": "wiki/concepts/yield-farming.md", "Impermanent loss": ""} {
		it := add(t, e, TypeMissingPage, title)
		out := mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "create"})
		got := mustCall[GetPageOut](t, e, opGetPage, obj{"title": title})
		if len(out.Pages) != 1 || want != "" && out.Pages[0].Path != want || strings.HasPrefix(out.Pages[0].Path, "wiki/sources/") || got.Type == "source" {
			t.Errorf("%s: stub at %+v, type %q", title, out.Pages, got.Type)
		}
	}
}
