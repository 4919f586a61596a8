//go:build unix

package ops

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestMove_KeptIDsFromAnotherVault: .synapse/ids.json arrives with the
// vault, so it is untrusted: a named pipe there is never waited on, an id
// it gives twice or an id another page has is not taken twice, and a
// malformed or oversized file is ignored (ids come from paths).
func TestMove_KeptIDsFromAnotherVault(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/a.md", "A.\n")
	testvault.Write(t, v, "wiki/b.md", "B.\n")
	testvault.Write(t, v, "wiki/c.md", "C.\n")
	ids := filepath.Join(v.Root, ".synapse", "ids.json")
	if err := os.MkdirAll(filepath.Dir(ids), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(ids, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		e, err := OpenEnv(context.Background(), v, OpenOptions{})
		if err == nil {
			e.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("open with a named pipe as ids.json: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("opening the vault waited on a named pipe at .synapse/ids.json")
	}
	os.Remove(ids)
	if err := os.WriteFile(ids, []byte(`{"wiki/a.md":"zzzzzzzz","wiki/b.md":"zzzzzzzz","wiki/c.md":"not an id"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(v.Root, ".synapse", "synapse.db"))
	e, _ := openEnv(t, v)
	seen := map[string]string{}
	for _, p := range []string{"a", "b", "c"} {
		g := getPageOut(t, e, "wiki/"+p+".md")
		if other, dup := seen[g.ID]; dup {
			t.Errorf("pages %s and %s share the id %s", other, g.Path, g.ID)
		}
		seen[g.ID] = g.Path
	}
}
