package ops

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// TestOpenEnv_RebuildsAStaleSearchIndex: a read-only command on a store
// whose search index another version of synapse built takes the write
// lock, rebuilds the search index (telling why through Notify) and answers;
// with the store held by a reader that cannot write it, it answers
// unavailable saying what will rebuild it.
func TestOpenEnv_RebuildsAStaleSearchIndex(t *testing.T) {
	v := testvault.New(t)
	for i := range 12 {
		testvault.Write(t, v, fmt.Sprintf("wiki/concepts/page-%02d.md", i), fmt.Sprintf("Page %d is about widgets.\n", i))
	}
	e, err := OpenEnv(context.Background(), v, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = e.Store.Update(func(tx *store.Tx) error { return tx.SetSearchVersion("0-older") })
	e.Close()
	if err != nil {
		t.Fatal(err)
	}
	searchOp := ByTool("search_wiki")

	// while another reader holds the store, the write lock cannot be had:
	// the command answers from a read-only store, and search says what
	// will rebuild its index
	ro, err := store.Open(v.Abs(vault.DBFile), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	held, err := OpenEnv(context.Background(), v, OpenOptions{ReadOnly: true, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = searchOp.Call(context.Background(), held, []byte(`{"query":"widgets"}`))
	if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "another version of synapse") || !strings.Contains(err.Error(), "rebuilds it") {
		t.Fatalf("stale index beside a reader: %v", err)
	}
	held.Close()
	ro.Close()

	var notes []string
	e, err = OpenEnv(context.Background(), v, OpenOptions{ReadOnly: true, Notify: func(s string) { notes = append(notes, s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	out, err := searchOp.Call(context.Background(), e, []byte(`{"query":"widgets","k":20}`))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(out.(*SearchOut).Hits); n != 12 {
		t.Errorf("after the rebuild: %d hits, want 12", n)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "another version of synapse; rebuilding it") {
		t.Errorf("notes = %q", notes)
	}
	e.Store.View(func(tx *store.Tx) error {
		if search.NeedsRebuild(tx) || tx.SearchVersion() != search.AnalyzerVersion {
			t.Errorf("after the rebuild: version %q, needs rebuild %v", tx.SearchVersion(), search.NeedsRebuild(tx))
		}
		return nil
	})
}
