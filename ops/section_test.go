package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

const sectionPage = "---\ntitle: Guide\nupdated: 2026-01-01\n---\n# Guide\n\nIntro [[A]].\n\n## Setup\n\nOld [[B]].\n\n```\n## Usage\n```\n\n## Usage\n\nRun [[C]].\n"

// TestWrite_Section: a section write replaces only the text under its
// heading (a heading inside fenced code is none), appends a section the
// page lacks, keeps the rest byte for byte, honours if_match, and refuses
// a heading that several sections share.
func TestWrite_Section(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/guide.md", sectionPage)
	e, _ := openEnv(t, v)
	ctx := context.Background()
	g := getPageOut(t, e, "Guide")
	out := write(t, e, &WritePageIn{Title: "Guide", Section: "Usage", Content: "Run [[C]] twice.\n", IfMatch: g.SHA256})
	want := strings.Replace(sectionPage, "Run [[C]].", "Run [[C]] twice.", 1)
	want = strings.Replace(want, "updated: 2026-01-01", "updated: 2026-05-01", 1)
	if got := readFile(t, v, "wiki/guide.md"); got != want {
		t.Fatalf("after a section write:\n%s", got)
	}
	// a stale if_match is refused
	_, err := WritePage(ctx, e, &WritePageIn{Title: "Guide", Section: "Setup", Content: "x\n", IfMatch: g.SHA256})
	wantCode(t, err, errs.Conflict, "changed since it was read")
	// appended when absent, at the level given
	write(t, e, &WritePageIn{Title: "Guide", Section: "### See also", Content: "- [[D]]\n"})
	if got := readFile(t, v, "wiki/guide.md"); !strings.HasSuffix(got, "Run [[C]] twice.\n\n### See also\n\n- [[D]]\n") {
		t.Fatalf("after an append:\n%s", got)
	}
	// the same text again changes nothing
	if out = write(t, e, &WritePageIn{Title: "Guide", Section: "Setup", Content: "Old [[B]].\n\n```\n## Usage\n```\n"}); !out.Unchanged {
		t.Fatal("writing a section's own text changed the page")
	}
	// a section read is written back unchanged (its heading is dropped)
	s, err := getPage(ctx, e, &GetPageIn{Title: "Guide", Section: "setup"})
	must(t, err)
	if out = write(t, e, &WritePageIn{Title: "Guide", Section: "Setup", Content: s.Content}); !out.Unchanged {
		t.Fatalf("the section as read changed the page: %q", s.Content)
	}
	// ambiguous
	write(t, e, &WritePageIn{Title: "Guide", Section: "## Setup", Content: "New.\n"})
	write(t, e, &WritePageIn{Title: "Guide", Section: "Guide#Usage", Content: "Nested.\n"})
	if got := readFile(t, v, "wiki/guide.md"); !strings.HasSuffix(got, "## Usage\n\nNested.\n") {
		// its subsection went with it
		t.Fatalf("after a write by parent#heading:\n%s", got)
	}
	_, err = WritePage(ctx, e, &WritePageIn{Title: "Guide", Section: "Other#Thing", Content: "x\n"})
	wantCode(t, err, errs.Invalid, "no section")
	v2 := testvault.New(t)
	testvault.Write(t, v2, "wiki/twice.md", "## A\n\n1\n\n## A\n\n2\n")
	e2, _ := openEnv(t, v2)
	_, err = WritePage(ctx, e2, &WritePageIn{Title: "twice", Section: "A", Content: "x\n"})
	wantCode(t, err, errs.Invalid, `"## A" (line 1), "## A" (line 5)`)
	// content with a frontmatter block is refused with --section
	_, err = WritePage(ctx, e, &WritePageIn{Title: "Guide", Section: "Setup", Content: "---\ntitle: X\n---\nx\n"})
	wantCode(t, err, errs.Invalid, "frontmatter block")
}

// TestWrite_SectionCRLF: a CRLF page stays CRLF throughout.
func TestWrite_SectionCRLF(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/guide.md", strings.ReplaceAll(sectionPage, "\n", "\r\n"))
	e, _ := openEnv(t, v)
	write(t, e, &WritePageIn{Title: "Guide", Section: "Setup", Content: "New\nlines.\n"})
	got := readFile(t, v, "wiki/guide.md")
	if strings.Count(got, "\n") != strings.Count(got, "\r\n") || !strings.Contains(got, "## Setup\r\n\r\nNew\r\nlines.\r\n\r\n## Usage\r\n") {
		t.Fatalf("CRLF page:\n%q", got)
	}
}

// TestGetPage_Section: get_page returns one section and the links on its
// lines; a missing heading is not_found naming the page's headings.
func TestGetPage_Section(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/guide.md", sectionPage)
	e, _ := openEnv(t, v)
	ctx := context.Background()
	g, err := getPage(ctx, e, &GetPageIn{Title: "Guide", Section: "## Setup"})
	must(t, err)
	if g.Content != "## Setup\n\nOld [[B]].\n\n```\n## Usage\n```\n\n" || g.Section != "## Setup" || g.SectionLine != 9 {
		t.Fatalf("section %q %q line %d", g.Content, g.Section, g.SectionLine)
	}
	if len(g.Links) != 1 || g.Links[0].Target != "B" {
		t.Fatalf("links %+v", g.Links)
	}
	g, err = getPage(ctx, e, &GetPageIn{Title: "Guide", Section: "Usage"})
	must(t, err)
	if g.Content != "## Usage\n\nRun [[C]].\n" || len(g.Links) != 1 || g.Links[0].Target != "C" {
		t.Fatalf("last section %q links %+v", g.Content, g.Links)
	}
	_, err = getPage(ctx, e, &GetPageIn{Title: "Guide", Section: "Install"})
	wantCode(t, err, errs.NotFound, `no section "Install"`, `"# Guide" (line 1)`)
}
