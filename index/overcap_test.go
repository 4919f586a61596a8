package index

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// TestScan_OverCapPagesIndexedAndListed: pages holding names far past
// bbolt's key limit (a 40 KiB link target, alias, tag, source, title) and
// more links and aliases than a page keeps are indexed as far as the
// parse limits allow, in the first (bulk) scan and in an incremental one,
// and the store lists each with what it left out; the pages beside them
// are untouched. Before the limits, every scan failed with "key too
// large" and named no file.
func TestScan_OverCapPagesIndexedAndListed(t *testing.T) {
	long := strings.Repeat("a", 40<<10)
	pages := map[string]string{
		"wiki/link.md":    "[[" + long + "]] [[ok]]\n",
		"wiki/alias.md":   "---\naliases: [" + long + ", fine]\n---\nbody\n",
		"wiki/tag.md":     "---\ntags: [" + long + "]\n---\n#" + long + "\n",
		"wiki/source.md":  "---\nsources: [" + long + ".md]\n---\nbody\n",
		"wiki/title.md":   "---\ntitle: " + long + "\n---\nbody\n",
		"wiki/many.md":    strings.Repeat("[[t]] ", 25000) + "\n",
		"wiki/aliases.md": "---\naliases:\n" + strings.Repeat("  - same\n", 5) + aliasList(1500) + "---\n",
	}
	for _, bulk := range []bool{true, false} {
		name := "incremental"
		if bulk {
			name = "first scan"
		}
		t.Run(name, func(t *testing.T) {
			v := testvault.New(t)
			testvault.Write(t, v, "wiki/ok.md", "# Ok\n[[title]]\n")
			ix := openIndexer(t, v)
			ctx := context.Background()
			if !bulk {
				if _, err := ix.Scan(ctx, ScanOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			for p, body := range pages {
				testvault.Write(t, v, p, body)
			}
			if _, err := ix.Scan(ctx, ScanOptions{}); err != nil {
				t.Fatalf("scan: %v", err)
			}
			err := ix.Store.View(func(tx *store.Tx) error {
				n, listed := tx.CappedPages(0, 100)
				if n != len(pages) {
					t.Errorf("%d pages listed over a limit, want %d: %+v", n, len(pages), listed)
				}
				for _, c := range listed {
					if !strings.HasPrefix(c.Message, c.Path+": ") || len(c.Message) > 1000 {
						t.Errorf("message %.200q", c.Message)
					}
				}
				if p, _ := tx.Page(tx.DocByPath("wiki/title.md")); p == nil || p.Title != "title" {
					t.Errorf("a title over the limit: %+v", p)
				}
				if p, _ := tx.Page(tx.DocByPath("wiki/many.md")); p == nil || len(p.Links) != 20000 {
					t.Errorf("links kept: %d", len(p.Links))
				}
				if p, _ := tx.Page(tx.DocByPath("wiki/alias.md")); p == nil || strings.Join(p.Aliases, ",") != "fine" {
					t.Errorf("aliases kept: %v", p.Aliases)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// a page brought within the limits leaves the list
			testvault.Write(t, v, "wiki/link.md", "[[ok]]\n")
			if _, err := ix.Scan(ctx, ScanOptions{Paths: []string{"wiki/link.md"}}); err != nil {
				t.Fatal(err)
			}
			_ = ix.Store.View(func(tx *store.Tx) error {
				if tx.Capped("wiki/link.md") != "" {
					t.Errorf("still listed after the fix")
				}
				return nil
			})
		})
	}
}

func aliasList(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString("  - alias " + strconv.Itoa(i) + "\n")
	}
	return b.String()
}
