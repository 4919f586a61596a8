package sock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/synapse-wiki/synapse/internal/server/servertest"
	"github.com/synapse-wiki/synapse/internal/server/sock"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/ops"
)

// The frontmatter sent alongside a result restores YAML styles the JSON
// cannot carry, for every page of the corpus.
func TestFrontmatter_RoundTrip(t *testing.T) {
	v := servertest.LiveVault(t, filepath.Join(t.TempDir(), "v"))
	testvault.Write(t, v, "wiki/styled.md", "---\n# a comment\ntitle: 'Styled'\ncreated: 2024-05-01\naliases: [One, \"Two\"]\nn: 012\nblock: |\n  kept\n  as is\n---\nbody\n")
	e, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	list, err := ops.Lookup("page.list").Call(context.Background(), e, []byte(`{"limit":1000}`))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range list.(*ops.ListPagesOut).Pages {
		out, err := ops.Lookup("page.get").Call(context.Background(), e, []byte(fmt.Sprintf(`{"title":%q}`, p.Path)))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := ops.MarshalJSON(out)
		fms := sock.FrontmatterYAML(out)
		back := &ops.GetPageOut{}
		if err := json.Unmarshal(data, back); err != nil {
			t.Fatal(err)
		}
		if err := sock.RestoreFrontmatter(back, fms); err != nil {
			t.Fatal(err)
		}
		want, _ := out.(*ops.GetPageOut).Frontmatter.YAML()
		got, _ := back.Frontmatter.YAML()
		if got != want {
			t.Errorf("%s: frontmatter\n%s\nbecame\n%s", p.Path, want, got)
		}
		again, _ := ops.MarshalJSON(back)
		if !bytes.Equal(again, data) {
			t.Errorf("%s: JSON changed in the round trip", p.Path)
		}
		n++
	}
	if n < 170 {
		t.Fatalf("only %d pages checked", n)
	}
}
