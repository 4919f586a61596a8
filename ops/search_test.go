package ops

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestSearch_Row checks the search_wiki row: names on every surface, the
// REST query parameter q, k defaults and clamps, strict decoding.
func TestSearch_Row(t *testing.T) {
	op := ByTool("search_wiki")
	if op == nil || op.CLI != "search" || op.Access != Read || len(op.REST) != 1 || op.REST[0].Method != "GET" || op.REST[0].Path != "/search" {
		t.Fatalf("search row: %+v", op)
	}
	for _, f := range Fields(op.In) {
		switch f.Name {
		case "query":
			if f.Query != "q" || f.Arg != 0 || !f.Required {
				t.Errorf("query field: %+v", f)
			}
		case "k":
			if f.Query != "k" || f.Default != "5" || *f.Min != 1 || *f.Max != 50 {
				t.Errorf("k field: %+v", f)
			}
		case "mode":
			if f.Query != "mode" || f.Default != "" || len(f.Enum) != 3 {
				t.Errorf("mode field: %+v", f)
			}
		default:
			t.Errorf("unexpected field %s", f.Name)
		}
	}

	v := testvault.New(t)
	for i := range 60 {
		testvault.Write(t, v, fmt.Sprintf("wiki/concepts/page-%02d.md", i), fmt.Sprintf("Page %d is about widgets.\n", i))
	}
	e, err := OpenEnv(context.Background(), v, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, c := range []struct {
		in   string
		hits int
		code errs.Code
	}{
		{`{"query":"widgets"}`, 5, ""},
		{`{"query":"widgets","k":100}`, 50, ""},
		{`{"query":"widgets","k":-3}`, 1, ""},
		{`{"query":"widgets","k":12}`, 12, ""},
		{`{"query":"  "}`, 0, errs.Invalid},
		{`{}`, 0, errs.Invalid},
		{`{"query":"widgets","limit":3}`, 0, errs.Invalid},
		{`{"query":"widgets","k":"3"}`, 0, errs.Invalid},
		{`{"query":"widgets type:gadget"}`, 0, ""},
		{`{"query":"widgets type:gad_get"}`, 0, errs.Invalid},
		{`{"query":"nothing-here"}`, 0, ""},
	} {
		out, err := op.Call(context.Background(), e, []byte(c.in))
		if errs.CodeOf(err) != c.code {
			t.Errorf("%s: err %v, want code %q", c.in, err, c.code)
			continue
		}
		if err != nil {
			continue
		}
		r := out.(*SearchOut)
		if len(r.Hits) != c.hits {
			t.Errorf("%s: %d hits, want %d", c.in, len(r.Hits), c.hits)
		}
		if r.Hits == nil {
			t.Errorf("%s: hits is null, want a list", c.in)
		}
	}
}

// A hit whose title does not reach it alone as a [[link]] says the link
// that does: here a file name answers [[Aurora Shard]] first.
func TestSearch_HitLink(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/entities/aurora-shard.md", "---\ntitle: Aurora Shard\n---\nThe entity.\n")
	testvault.Write(t, v, "wiki/concepts/garnet-lagoon.md", "---\ntitle: Aurora Shard\n---\nThe concept.\n")
	testvault.Write(t, v, "wiki/concepts/silica.md", "---\ntitle: Silica Shard\n---\nAnother shard.\n")
	e := newTestEnv(t, v)
	out := mustCall[SearchOut](t, e, opSearch, obj{"query": "shard", "k": 5})
	links := map[string]string{}
	for _, h := range out.Hits {
		links[h.Path] = h.Link
	}
	want := map[string]string{
		"wiki/entities/aurora-shard.md":  "entities/aurora-shard",
		"wiki/concepts/garnet-lagoon.md": "concepts/garnet-lagoon",
		"wiki/concepts/silica.md":        "",
	}
	if !reflect.DeepEqual(links, want) {
		t.Fatalf("links %v, want %v", links, want)
	}
}
