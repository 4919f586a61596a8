package ops

import (
	"context"
	"fmt"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestWritePage_Commits: the fixed cost of a CLI write is mostly its
// fdatasyncs (two per committed write transaction). Opening a current
// store read-write commits nothing, and a page write commits one
// transaction whatever the edit: the scanner's (page, links, graph
// settled in one), which also records the write (index.md, the review
// queue, log.md and index.md records, the folders' freshness stamps:
// index.ScanOptions.Then). The scan's own bookkeeping (the refused list,
// which stays empty) commits nothing.
func TestWritePage_Commits(t *testing.T) {
	v := testvault.New(t)
	ctx := context.Background()
	e, err := OpenEnv(ctx, v, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		write(t, e, &WritePageIn{Title: fmt.Sprintf("Page %d", i), Content: fmt.Sprintf("Body %d links [[Page %d]].\n", i, (i+1)%6)})
	}
	e.Close()

	// what a CLI verb does: open the env read-write, then write
	e, err = OpenEnv(ctx, v, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s := e.Store
	if n := s.Commits(); n != 0 {
		t.Fatalf("opening a current store committed %d transactions", n)
	}
	for _, c := range []struct {
		name string
		in   WritePageIn
	}{
		{"edit", WritePageIn{Title: "Page 2", Content: "Body 2, edited, links [[Page 3]].\n"}},
		{"relink", WritePageIn{Title: "Page 2", Content: "Now [[Page 0]], [[Page 4]] and [[Page 5]].\n"}},
		{"create", WritePageIn{Title: "Page 9", Content: "New, links [[Page 1]] and [[Nowhere]].\n"}},
	} {
		before := s.Commits()
		if _, err := WritePage(ctx, e, &c.in); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n := s.Commits() - before; n != 1 {
			t.Errorf("%s committed %d write transactions, want 1", c.name, n)
		}
	}
}
