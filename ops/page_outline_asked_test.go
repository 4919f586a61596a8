package ops

import (
	"context"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestGetPage_OutlineAsked: outline gives any page's headings with their
// lines and sizes and leaves the content out, whatever the page's size;
// with section, that section's headings; with full, it is refused.
func TestGetPage_OutlineAsked(t *testing.T) {
	v := testvault.New(t)
	file := "---\ntitle: Small\n---\n# Small\n\nIntro [[Other]].\n\n## One\n\ntext\n\n### Deep\n\nmore\n\n## Two\n\nx\n"
	testvault.Write(t, v, "wiki/small.md", file)
	e, _ := openEnv(t, v)
	ctx := context.Background()

	g, err := getPage(ctx, e, &GetPageIn{Title: "Small", Outline: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []OutlineEntry{{"# Small", 4, 67}, {"## One", 8, 30}, {"### Deep", 12, 16}, {"## Two", 16, 10}}
	if g.Content != "" || !g.ContentOmitted || g.SHA256 != sha(file) || len(g.Links) != 1 || g.Size != len(file) {
		t.Errorf("content %q, omitted %v, links %v", g.Content, g.ContentOmitted, g.Links)
	}
	if len(g.Outline) != len(want) || g.OutlineTotal != len(want) {
		t.Fatalf("outline %+v", g.Outline)
	}
	for i, o := range g.Outline {
		if o != want[i] {
			t.Errorf("outline[%d] = %+v, want %+v", i, o, want[i])
		}
	}

	s, err := getPage(ctx, e, &GetPageIn{Title: "Small", Section: "One", Outline: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Content != "" || len(s.Outline) != 2 || s.Outline[0] != want[1] || s.Outline[1] != want[2] {
		t.Errorf("section outline %+v", s.Outline)
	}

	if _, err := getPage(ctx, e, &GetPageIn{Title: "Small", Outline: true, Full: true}); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("outline with full: %v", err)
	}
	if g := getPageOut(t, e, "Small"); g.ContentOmitted || g.Outline != nil {
		t.Errorf("a small page without outline came as its outline")
	}
}
