package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestWrite_Append: an append adds its text to the end of a section's
// own text (before its subsections) or of the body, with no if_match,
// through the whole write path: a history revision, a log entry with the
// writer's note, a missing-page item for a new dangling link. A stale
// if_match given is still a conflict; empty content and a frontmatter
// block are refused.
func TestWrite_Append(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/guide.md", sectionPage)
	e, _ := openEnv(t, v)
	ctx := context.Background()
	g := getPageOut(t, e, "Guide")
	out := write(t, e, &WritePageIn{Title: "Guide", Section: "Setup", Append: true, Content: "Then [[E]].", Log: "noted E"})
	want := strings.Replace(sectionPage, "## Usage\n```\n\n## Usage", "## Usage\n```\n\nThen [[E]].\n\n## Usage", 1)
	want = strings.Replace(want, "updated: 2026-01-01", "updated: 2026-05-01", 1)
	if got := readFile(t, v, "wiki/guide.md"); got != want {
		t.Fatalf("after a section append:\n%s", got)
	}
	if out.Revision == 0 || !strings.Contains(strings.Join(out.Filed, ","), "E") {
		t.Fatalf("an append is a write like any other: %+v", out)
	}
	if log := readFile(t, v, "wiki/log.md"); !strings.Contains(log, "] updated | Guide\n- note: noted E\n") {
		t.Fatalf("log:\n%s", log)
	}
	// the end of the body; a list item continues a list
	write(t, e, &WritePageIn{Title: "Guide", Section: "See also", Append: true, Content: "- [[A]]\n"})
	write(t, e, &WritePageIn{Title: "Guide", Section: "See also", Append: true, Content: "- [[C]]\n"})
	write(t, e, &WritePageIn{Title: "Guide", Append: true, Content: "\nLast.\n\n"})
	if got := readFile(t, v, "wiki/guide.md"); !strings.HasSuffix(got, "Run [[C]].\n\n## See also\n\n- [[A]]\n- [[C]]\n\nLast.\n") {
		t.Fatalf("after appends to a new section and the body:\n%s", got)
	}
	// if_match is honoured when given
	_, err := WritePage(ctx, e, &WritePageIn{Title: "Guide", Append: true, Content: "x\n", IfMatch: g.SHA256})
	wantCode(t, err, errs.Conflict, "changed since it was read")
	for _, in := range []*WritePageIn{
		{Title: "Guide", Append: true, Tags: []string{"x"}},
		{Title: "Guide", Append: true, Section: "Setup", Content: " \n"},
		{Title: "Guide", Append: true, Content: "---\ntags: [x]\n---\n"},
		{Title: "Guide", Append: true, Content: "---\ntags: [x]\n---\nText.\n"},
	} {
		_, err := WritePage(ctx, e, in)
		wantCode(t, err, errs.Invalid, "append")
	}
	// keys may come with the text
	write(t, e, &WritePageIn{Title: "Guide", Append: true, Content: "Tagged.\n", Tags: []string{"memo"}})
	if got := readFile(t, v, "wiki/guide.md"); !strings.Contains(got, "tags:\n  - memo\n") || !strings.HasSuffix(got, "Last.\n\nTagged.\n") {
		t.Fatalf("after an append with a tag:\n%s", got)
	}
}
