package ops

import (
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestMove_UnchangedLinks: a rename that keeps the file name rewrites no
// link, and the result counts the links that still reach the page by
// that name, with a note saying why; a rename that changes the file name
// counts only the links it left alone (an alias).
func TestMove_UnchangedLinks(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/kestrel-schema.md", "---\naliases: [KS]\n---\nThe schema.\n")
	testvault.Write(t, v, "wiki/a.md", "[[kestrel-schema]] and [[kestrel-schema|the schema]]\n")
	testvault.Write(t, v, "wiki/b.md", "[[kestrel-schema#Top]] and [[KS]]\n")
	e, _ := openEnv(t, v)
	out := move(t, e, &MovePageIn{Title: "kestrel-schema", To: "Kestrel Schema"})
	if out.Path != "wiki/kestrel-schema.md" || out.Links != 0 || len(out.Changed) != 0 {
		t.Fatalf("a title-only rename rewrote links: %+v", out)
	}
	if out.UnchangedLinks != 4 || !strings.Contains(out.Note, `4 links from other pages reach it unchanged by its file name "kestrel-schema"`) {
		t.Fatalf("unchanged %d, note %q", out.UnchangedLinks, out.Note)
	}
	out = move(t, e, &MovePageIn{Title: "Kestrel Schema", To: "Kestrel Map"})
	if out.Path != "wiki/kestrel-map.md" || out.Links != 3 || out.UnchangedLinks != 1 || !strings.Contains(out.Note, "1 link from other pages reaches it unchanged by a name or path the page keeps") {
		t.Fatalf("after a rename of the file: %+v", out)
	}
	testvault.Write(t, v, "wiki/lone.md", "Nobody links here.\n")
	rescanT(t, e)
	if out = move(t, e, &MovePageIn{Title: "lone", To: "Lone page"}); out.UnchangedLinks != 0 || out.Note != "" {
		t.Fatalf("a page without links: %+v", out)
	}
}
