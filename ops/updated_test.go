package ops

import (
	"context"
	"regexp"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestListPages_OneDateFormat: updated is a date in every row, whether the
// page writes a date, a timestamp or nothing (list_pages once gave
// 2026-12-01 and 2026-12-01T07:14:37Z side by side).
func TestListPages_OneDateFormat(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/concepts/a.md", "---\ntitle: A date\nupdated: 2026-11-30\n---\nx\n")
	testvault.Write(t, v, "wiki/concepts/b.md", "---\ntitle: B stamp\nupdated: 2026-12-01T07:14:37Z\n---\nx\n")
	testvault.Write(t, v, "wiki/concepts/c.md", "---\ntitle: C none\n---\nx\n")
	testvault.Write(t, v, "wiki/concepts/d.md", "---\ntitle: D odd\nupdated: last tuesday\n---\nx\n")
	e, _ := openEnv(t, v)
	out, err := opListPages.Call(context.Background(), e, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A date": "2026-11-30", "B stamp": "2026-12-01"}
	date := regexp.MustCompile(`^\d{4}-\d\d-\d\d$`)
	for _, p := range out.(*ListPagesOut).Pages {
		if !date.MatchString(p.Updated) {
			t.Errorf("%s: updated %q is not a date", p.Title, p.Updated)
		}
		if w, ok := want[p.Title]; ok && p.Updated != w {
			t.Errorf("%s: updated %q, want %q", p.Title, p.Updated, w)
		}
	}
}
