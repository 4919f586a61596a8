package ops

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// freshRead opens the vault as a CLI read verb does (read-only, a short
// lock wait, the freshness check on) and searches it, failing the test if
// it does not return within a minute (a hang), however loaded the machine.
func freshRead(t *testing.T, v *vault.Vault, query string) (hits int, f *Freshness, notes []string, err error) {
	t.Helper()
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		e, oerr := OpenEnv(context.Background(), v, OpenOptions{ReadOnly: true, Timeout: 100 * time.Millisecond, Holder: "test read",
			Fresh: true, Notify: func(m string) { mu.Lock(); notes = append(notes, m); mu.Unlock() }})
		if oerr != nil {
			err = oerr
			return
		}
		defer e.Close()
		out, serr := searchWiki(context.Background(), e, &SearchIn{Query: query, K: 10})
		if serr != nil {
			err = serr
			return
		}
		hits, f = len(out.Hits), e.Fresh
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the read did not return within a minute: it waits on the lock")
	}
	return hits, f, notes, err
}

// TestFresh_HeldStore: a CLI read finding a page edited by hand indexes
// it first when the store is free; while another process holds the store
// with a shared lock (a concurrent CLI read) it neither waits nor fails:
// it answers from the persisted index and says so on stderr; while one
// holds it for writing it fails at once with the store's locked error,
// which the CLI polls (cmd_socket.go), never a hang.
func TestFresh_HeldStore(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/concepts/loom.md", "# Loom\nA weaving machine.\n")
	e, err := OpenEnv(context.Background(), v, OpenOptions{Holder: "test"})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	testvault.Write(t, v, "wiki/concepts/loom.md", "# Loom\nA weaving machine read by punched cards.\n")

	// another reader holds the shared lock
	reader, err := store.Open(v.Abs(vault.DBFile), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	hits, f, notes, err := freshRead(t, v, "punched")
	if err != nil {
		t.Fatalf("read beside a reader: %v", err)
	}
	if hits != 0 || f == nil || f.Indexed || f.Changed != 1 || f.NotIndexed == "" {
		t.Fatalf("read beside a reader: %d hits, freshness %+v; want the persisted answer and the change not indexed", hits, f)
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "1 file changed since the last scan (1 changed); another synapse process holds the store") {
		t.Fatalf("notes %q", notes)
	}

	// a writer holds the exclusive lock
	reader.Close()
	writer, err := store.Open(v.Abs(vault.DBFile), store.Options{Holder: "test writer"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := freshRead(t, v, "punched"); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("read beside a writer: %v, want the locked error", err)
	}
	writer.Close()

	// the store free: indexed before the answer, without a note
	hits, f, notes, err = freshRead(t, v, "punched")
	if err != nil || hits != 1 || f == nil || !f.Indexed || len(notes) != 0 {
		t.Fatalf("read alone: %d hits, freshness %+v, notes %q, err %v; want the edit indexed first", hits, f, notes, err)
	}
	hits, f, _, err = freshRead(t, v, "punched")
	if err != nil || hits != 1 || f.Count() != 0 || f.Indexed {
		t.Fatalf("next read: %d hits, freshness %+v, err %v; want nothing left to do", hits, f, err)
	}
}
