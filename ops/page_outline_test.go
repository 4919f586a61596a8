package ops

import (
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

// hugeBody is a body of about n bytes: a short section, a long one, and
// a short one after it.
func hugeBody(n int) string {
	para := strings.Repeat("word ", 19) + "end.\n\n"
	return "# Huge\n\n## Intro\n\nA short intro: [[Other]].\n\n## Transcript\n\n" +
		strings.Repeat(para, n/len(para)) + "## Tail\n\nThe end.\n"
}

// TestGetPage_Outline: a page over MaxPageGetBytes comes without its
// content (never a part of it) but with its size, sha256, outline and
// links; a section of it comes whole; full asks for all of it. Ordinary
// pages are whole, and page list and search say every page's size.
func TestGetPage_Outline(t *testing.T) {
	v := testvault.New(t)
	body := hugeBody(100 << 10)
	file := "---\ntitle: Huge\n---\n" + body
	testvault.Write(t, v, "wiki/huge.md", file)
	testvault.Write(t, v, "wiki/other.md", "# Other\n\nSmall: [[Huge]].\n")
	e, _ := openEnv(t, v)

	g := getPageOut(t, e, "Huge")
	if g.Content != "" || !g.ContentOmitted || g.ContentBytes != len(body) || g.Size != len(file) || g.SHA256 != sha(file) {
		t.Fatalf("content %d bytes, omitted %v, content_bytes %d, size %d", len(g.Content), g.ContentOmitted, g.ContentBytes, g.Size)
	}
	var heads []string
	for _, o := range g.Outline {
		heads = append(heads, o.Heading)
	}
	if strings.Join(heads, "|") != "# Huge|## Intro|## Transcript|## Tail" || g.OutlineTotal != 4 {
		t.Errorf("outline %+v", g.Outline)
	}
	if tr := g.Outline[2]; tr.Line != 10 || tr.Bytes < 90<<10 || tr.Bytes > len(body) {
		t.Errorf("transcript %+v", tr)
	}
	if len(g.Links) != 1 || g.Links[0].Path != "wiki/other.md" || !strings.Contains(g.Note, "section") {
		t.Errorf("links %+v note %q", g.Links, g.Note)
	}

	sec := mustCall[GetPageOut](t, e, opGetPage, obj{"title": "Huge", "section": "Intro"})
	if sec.ContentOmitted || !strings.Contains(sec.Content, "A short intro") || sec.SHA256 != sha(file) {
		t.Errorf("section: %+v", sec)
	}
	big := mustCall[GetPageOut](t, e, opGetPage, obj{"title": "Huge", "section": "Transcript"})
	if !big.ContentOmitted || big.Content != "" || big.Outline[0].Heading != "## Transcript" || big.Outline[0].Line != 10 {
		t.Errorf("a section over the budget: omitted %v, outline %+v", big.ContentOmitted, big.Outline)
	}
	full := mustCall[GetPageOut](t, e, opGetPage, obj{"title": "Huge", "full": true})
	if full.Content != body || full.ContentOmitted || full.Outline != nil {
		t.Errorf("full: %d bytes, omitted %v", len(full.Content), full.ContentOmitted)
	}
	if small := getPageOut(t, e, "Other"); small.ContentOmitted || small.Content != "# Other\n\nSmall: [[Huge]].\n" || small.Size != len(small.Content) {
		t.Errorf("an ordinary page: %+v", small)
	}

	list := mustCall[ListPagesOut](t, e, opListPages, obj{})
	for _, p := range list.Pages {
		if p.Path == "wiki/huge.md" && p.Size != int64(len(file)) {
			t.Errorf("page list size %d", p.Size)
		}
	}
}

// TestWritePage_OverCap: a page over the write cap (written by hand) takes
// frontmatter-only writes, its body kept byte for byte, and section writes
// that do not lengthen it; a write that would lengthen it is refused,
// saying to split it. status and lint list it with its size and the cap.
func TestWritePage_OverCap(t *testing.T) {
	v := testvault.New(t)
	body := hugeBody(MaxContentBytes + 1000)
	testvault.Write(t, v, "wiki/huge.md", "---\ntitle: Huge\n---\n"+body)
	e, _ := openEnv(t, v)

	st, err := opStatus.Call(t.Context(), e, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := st.(*StatusOut); s.OverCapCount != 1 || !strings.Contains(s.OverCap[0].Message, "over the 1048576 bytes (1 MiB) a write may replace") {
		t.Errorf("status over_cap %d %+v", s.OverCapCount, s.OverCap)
	}
	l := mustCall[LintOut](t, e, opLint, obj{"category": "over_cap"})
	if l.Counts.OverCap != 1 || len(l.OverCap) != 1 || !strings.Contains(l.OverCap[0].Message, "split it") {
		t.Errorf("lint over_cap %d %+v", l.Counts.OverCap, l.OverCap)
	}

	sum := getPageOut(t, e, "Huge").SHA256
	out := mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Huge", "aliases": []string{"Big one"}, "if_match": sum})
	got := readFile(t, v, "wiki/huge.md")
	if out.Unchanged || out.SHA256 != sha(got) || !strings.HasSuffix(got, "\n---\n"+body) || !strings.Contains(got, "aliases:\n  - Big one\n") {
		t.Fatalf("frontmatter-only: %+v\n%.200q", out, got)
	}
	if h := mustCall[PageHistoryOut](t, e, opPageHistory, obj{"title": "Huge"}); len(h.Revisions) < 2 {
		t.Errorf("%d revisions", len(h.Revisions))
	}

	// a section as long or shorter: written; longer: refused, nothing changed
	write(t, e, &WritePageIn{Title: "Huge", Section: "Intro", Content: "Shorter."})
	if got = readFile(t, v, "wiki/huge.md"); !strings.Contains(got, "## Intro\n\nShorter.\n\n## Transcript") {
		t.Errorf("the section write: %.300q", got)
	}
	_, err = call[WritePageOut](t, e, opWritePage, obj{"title": "Huge", "section": "Tail", "content": strings.Repeat("longer ", 10)})
	wantCode(t, err, errs.TooLarge, "would lengthen the body by", "split the page")
	_, err = call[WritePageOut](t, e, opWritePage, obj{"title": "Huge", "section": "New", "content": "appended"})
	wantCode(t, err, errs.TooLarge, "split the page")
	if readFile(t, v, "wiki/huge.md") != got {
		t.Error("a refused write changed the file")
	}
}
