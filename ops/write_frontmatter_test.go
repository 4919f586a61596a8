package ops

import (
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestWritePage_FrontmatterOnly: a write without a body (no content, or a
// frontmatter block alone) changes only the keys it gives and keeps the
// body byte for byte, through the one write path: if_match, the log, the
// history and the index as for any write. Without keys it is refused, and
// so is a new page or a section without text.
func TestWritePage_FrontmatterOnly(t *testing.T) {
	v := testvault.New(t)
	body := "# Keep\r\n\r\nA body that must not change: [[Other]].\r\n"
	testvault.Write(t, v, "wiki/keep.md", "---\ntitle: Keep\ntags: [a]\nowner: me # a comment\n---\n"+body)
	e, _ := openEnv(t, v)
	before := getPageOut(t, e, "Keep")

	// the fields, as the CLI gives them (page write Keep --tag a --tag b
	// --alias K2: a list given replaces the page's)
	out, err := call[WritePageOut](t, e, opWritePage, obj{"title": "Keep", "tags": []string{"a", "b"}, "aliases": []string{"K2"}, "if_match": before.SHA256})
	if err != nil {
		t.Fatal(err)
	}
	got := readFile(t, v, "wiki/keep.md")
	if want := "---\ntitle: Keep\ntags:\n  - a\n  - b\nowner: me # a comment\naliases:\n  - K2\nupdated: 2026-05-01\n---\n" + body; got != want {
		t.Errorf("after tags and aliases:\n%q\nwant\n%q", got, want)
	}
	if out.Unchanged || out.Revision == 0 || out.SHA256 != sha(got) {
		t.Errorf("result %+v", out)
	}
	if g := getPageOut(t, e, "K2"); g.Path != "wiki/keep.md" {
		t.Errorf("the alias is not indexed: %s", g.Path)
	}
	if log := readFile(t, v, "wiki/log.md"); !strings.Contains(log, "] updated | Keep\n") {
		t.Errorf("log.md:\n%s", log)
	}

	// the frontmatter map, as MCP and REST give it; a stale if_match fails
	_, err = call[WritePageOut](t, e, opWritePage, obj{"title": "Keep", "frontmatter": obj{"summary": "What to keep"}, "if_match": before.SHA256})
	wantCode(t, err, errs.Conflict)
	out = mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Keep", "frontmatter": obj{"summary": "What to keep", "owner": nil}})
	got = readFile(t, v, "wiki/keep.md")
	if out.Unchanged || out.SHA256 != sha(got) {
		t.Errorf("result %+v", out)
	}
	if want := "---\ntitle: Keep\ntags:\n  - a\n  - b\naliases:\n  - K2\nupdated: 2026-05-01\nsummary: What to keep\n---\n" + body; got != want {
		t.Errorf("after the map:\n%q\nwant\n%q", got, want)
	}

	// a frontmatter block alone, as the CLI pipes it
	out = write(t, e, &WritePageIn{Title: "Keep", Content: "---\nsummary: Kept body\n---\n"})
	if got := readFile(t, v, "wiki/keep.md"); !strings.Contains(got, "\nsummary: Kept body\n---\n"+body) || !strings.HasSuffix(got, body) {
		t.Errorf("after a block alone:\n%q", got)
	}
	// the same keys again: nothing to write
	if again := write(t, e, &WritePageIn{Title: "Keep", Content: "---\nsummary: Kept body\n---\n"}); !again.Unchanged || again.SHA256 != out.SHA256 {
		t.Errorf("the same keys again: %+v", again)
	}
	if h := mustCall[PageHistoryOut](t, e, opPageHistory, obj{"title": "Keep"}); len(h.Revisions) < 4 {
		t.Errorf("%d revisions", len(h.Revisions))
	}

	for _, c := range []struct {
		name string
		in   obj
		code errs.Code
		msg  string
	}{
		{"no body and no keys", obj{"title": "Keep"}, errs.Invalid, "content is empty: give the page's body, or only frontmatter keys"},
		{"blank body and no keys", obj{"title": "Keep", "content": " \n"}, errs.Invalid, "content is empty: give the page's body"},
		{"a new page", obj{"title": "Brand new", "frontmatter": obj{"summary": "x"}}, errs.Invalid, "a new page needs a body"},
		{"a new page from a block", obj{"title": "Brand new", "content": "---\nsummary: x\n---\n"}, errs.Invalid, "a new page needs a body"},
		{"a section without text", obj{"title": "Keep", "section": "Keep", "frontmatter": obj{"summary": "x"}}, errs.Invalid, "with section it is the section's new text"},
	} {
		_, err := call[WritePageOut](t, e, opWritePage, c.in)
		wantCode(t, err, c.code, c.msg)
	}
	if got := readFile(t, v, "wiki/keep.md"); !strings.HasSuffix(got, body) {
		t.Errorf("the body changed: %q", got)
	}
}
