package ops

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

func typeNames(tc []TypeCount) []string {
	var out []string
	for _, t := range tc {
		out = append(out, t.Type)
	}
	return out
}

func typesVault(t *testing.T) *Env {
	t.Helper()
	v := testvault.New(t)
	for _, p := range []string{"a", "b", "c"} {
		testvault.Write(t, v, "wiki/entities/"+p+".md", "---\ntitle: Entity "+p+"\n---\nx\n")
	}
	testvault.Write(t, v, "wiki/concepts/idea.md", "---\ntitle: Idea\n---\nx\n")
	testvault.Write(t, v, "wiki/topics/t.md", "---\ntitle: A Topic\ntype: Topic\n---\nx\n")
	e, err := OpenEnv(context.Background(), v, OpenOptions{NoInitialScan: true})
	must(t, err)
	t.Cleanup(func() { e.Close() })
	rescanT(t, e)
	return e
}

// TestTypes_NewTypeIsSaid: a write that brings in a type no other page has
// says so (new_type, with the vault's types closest first), so a typo in
// --type is seen; writing more pages of it, or editing one, does not.
func TestTypes_NewTypeIsSaid(t *testing.T) {
	e := typesVault(t)
	out := write(t, e, &WritePageIn{Title: "Typo", Content: "x\n", Type: "entitiy"})
	if !out.NewType || out.Path != "wiki/entitiy/typo.md" {
		t.Fatalf("new type not said: %+v", out)
	}
	if got := strings.Join(typeNames(out.Types), ","); got != "entity,topic,concept" {
		t.Errorf("types listed: %s (want the closest first: entity,topic,concept)", got)
	}
	if out.Types[0].Pages != 3 {
		t.Errorf("entity pages: %+v", out.Types[0])
	}
	for _, c := range []*WritePageIn{
		{Title: "Typo", Content: "edited\n"},                          // the same page again
		{Title: "Another", Content: "x\n", Type: "entitiy"},           // a second page of it
		{Title: "Entity d", Content: "x\n", Type: "entity"},           // a type the vault has
		{Title: "Idea", Content: "x\n", Type: "concept"},              // unchanged type
		{Title: "A Topic", Content: "x\n", Type: "topic"},             // the file's Topic, normalized
		{Title: "A Topic", Content: "y\n", Type: "Topic"},             // the file's own spelling
		{Title: "A Topic", Content: "---\ntype: Topic\n---\nz\n"},     // as get_page returns it
		{Title: "First synthesis", Content: "x\n", Type: "synthesis"}, // a built-in type no page has yet
	} {
		if out := write(t, e, c); out.NewType || len(out.Types) != 0 {
			t.Errorf("%+v: new type said: %+v", c, out)
		}
	}
	// retyping a page to a type no other page has is a new type too
	if out := write(t, e, &WritePageIn{Title: "Idea", Content: "x\n", Type: "person"}); !out.NewType || out.Type != "person" {
		t.Errorf("retyped: %+v", out)
	}
}

// TestTypes_UpperCaseInvalid: a type is a lower-case word; an
// upper-case one is malformed on every surface (write, list_pages, search
// type:), refused naming the lower-case spelling, and nothing is written.
// A page's own spelling in its file (type: Topic) is read as topic and
// written back unchanged (TestTypes_NewTypeIsSaid).
func TestTypes_UpperCaseInvalid(t *testing.T) {
	e := typesVault(t)
	ctx := context.Background()
	for _, in := range []*WritePageIn{
		{Title: "Shout", Content: "x\n", Type: "BAD"},
		{Title: "Shout", Content: "x\n", Frontmatter: map[string]any{"type": "Bad"}},
		{Title: "Shout", Content: "---\ntype: Bad\n---\nx\n"},
		{Title: "Idea", Content: "x\n", Type: "Bad"},
		{Title: "A Topic", Content: "x\n", Type: "TOPIC"},
	} {
		_, err := WritePage(ctx, e, in)
		if errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), `did you mean "bad"?`) && !strings.Contains(err.Error(), `did you mean "topic"?`) {
			t.Errorf("%+v: %v", in, err)
		}
	}
	if _, err := os.Stat(e.Vault.Abs("wiki/bad")); err == nil {
		t.Error("a refused write made wiki/bad/")
	}
	if _, err := listPages(ctx, e, &ListPagesIn{Type: "Entity"}); errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), `did you mean "entity"?`) {
		t.Errorf("list_pages type Entity: %v", err)
	}
	if _, err := searchWiki(ctx, e, &SearchIn{Query: "x type:Entity", K: 5}); errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), `did you mean "type:entity"?`) {
		t.Errorf("search type:Entity: %v", err)
	}
}

// TestTypes_UnknownFilterListsTypes: a well-formed type no page has
// matches nothing (not an error), and the result lists the vault's types,
// closest first; a type some page has lists none.
func TestTypes_UnknownFilterListsTypes(t *testing.T) {
	e := typesVault(t)
	ctx := context.Background()
	l, err := listPages(ctx, e, &ListPagesIn{Type: "entitiy", Limit: 10})
	must(t, err)
	if l.Total != 0 || strings.Join(typeNames(l.Types), ",") != "entity,topic,concept" {
		t.Errorf("list_pages type entitiy: %+v", l)
	}
	if l, err := listPages(ctx, e, &ListPagesIn{Type: "entity", Tag: "nope", Limit: 10}); err != nil || l.Total != 0 || l.Types != nil {
		t.Errorf("list_pages type entity tag nope: %+v %v", l, err)
	}
	s, err := searchTypes(ctx, e, &SearchIn{Query: "x type:entitiy", K: 5})
	must(t, err)
	if len(s.Hits) != 0 || strings.Join(typeNames(s.Types), ",") != "entity,topic,concept" {
		t.Errorf("search type:entitiy: %+v", s)
	}
	if s, err := searchTypes(ctx, e, &SearchIn{Query: "x type:entity -type:nothing", K: 5}); err != nil || s.Types != nil {
		t.Errorf("search type:entity -type:nothing: %+v %v", s, err)
	}
}

// TestTypes_StatusListsTypesWithTheirFolders: status lists the vault's
// types, most used first, each with the folder a new page of that type
// goes to (the folder most pages of the type are in), so an agent follows
// the vault's folders without listing every page.
func TestTypes_StatusListsTypesWithTheirFolders(t *testing.T) {
	e := typesVault(t)
	testvault.Write(t, e.Vault, "wiki/people/p.md", "---\ntitle: P\ntype: entity\n---\nx\n")
	rescanT(t, e)
	out, err := status(context.Background(), e, &StatusIn{})
	must(t, err)
	var got []string
	for _, tc := range out.Types {
		got = append(got, fmt.Sprintf("%s %d %s", tc.Type, tc.Pages, tc.Folder))
	}
	want := "entity 4 wiki/entities|concept 1 wiki/concepts|topic 1 wiki/topics"
	if strings.Join(got, "|") != want {
		t.Errorf("status types:\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
}
