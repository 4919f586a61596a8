package ops

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// killAfterFile runs a write that stops dead once its page file is in
// place, as a SIGKILL there would: the hook panics (the test recovers),
// and the note the write left is put back as the kill would have left it.
func killAfterFile(t *testing.T, e *Env, in *WritePageIn) {
	t.Helper()
	var note []byte
	old := e.observe.stage
	e.observe.stage = func(stage string, _ time.Duration) {
		if stage == "file" {
			note, _ = os.ReadFile(e.Vault.Abs(intentFile))
			panic("killed")
		}
	}
	defer func() {
		e.observe.stage = old
		if recover() == nil {
			t.Fatal("the write was not stopped")
		}
		if note != nil {
			if err := os.WriteFile(e.Vault.Abs(intentFile), note, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}()
	_, _ = WritePage(context.Background(), e, in)
}

func missingItem(t *testing.T, e *Env, name string) *store.ReviewRec {
	t.Helper()
	var r *store.ReviewRec
	if err := e.Store.View(func(tx *store.Tx) (err error) {
		r, err = tx.ReviewByKey(ReviewKey(TypeMissingPage, name))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestWritePage_KilledAfterItsFile: a write killed once its page is on
// disk, before the commit that files its items, has them filed by the
// next command that opens the store; without the note the write leaves,
// the page's dangling links would have no items.
func TestWritePage_KilledAfterItsFile(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing bool // the write replaces a page
		dropNote bool // the note is lost: nothing finishes the write
		fresh    bool // the next command indexes changed files first
	}{
		{"new page", false, false, false},
		{"new page, fresh", false, false, true},
		{"existing page", true, false, false},
		{"no note", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := testvault.New(t)
			e, err := OpenEnv(context.Background(), v, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.existing {
				write(t, e, &WritePageIn{Title: "Killed", Content: "No links yet.\n"})
			}
			killAfterFile(t, e, &WritePageIn{Title: "Killed", Content: "It links [[Never filed]].\n"})
			if _, err := os.Stat(v.Abs(intentFile)); err != nil {
				t.Fatalf("the write left no note: %v", err)
			}
			if tc.dropNote {
				_ = os.Remove(v.Abs(intentFile))
			}
			e.Close()
			e, err = OpenEnv(context.Background(), v, OpenOptions{Fresh: tc.fresh})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if r := missingItem(t, e, "Never filed"); (r != nil) == tc.dropNote {
				t.Errorf("item for the dangling link: %+v", r)
			}
			if _, err := os.Stat(v.Abs(intentFile)); err == nil {
				t.Error("the note is still there")
			}
		})
	}
}

// TestWritePage_IntentNoteIsConfined: a note planted as a symlink out of
// the vault is never written through, and a write still succeeds.
func TestWritePage_IntentNoteIsConfined(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, v.Abs(intentFile)); err != nil {
		t.Fatal(err)
	}
	write(t, e, &WritePageIn{Title: "Confined", Content: "x\n"})
	if got, _ := os.ReadFile(outside); string(got) != "keep\n" {
		t.Errorf("the file outside became %q", got)
	}
	if st, err := os.Lstat(v.Abs(intentFile)); err == nil && st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("a note is left after the write: %v", st.Mode())
	}
}

// TestWritePage_KilledBeforeItsFile: a note whose page never reached the
// disk (a type whose folder does not exist yet) is just removed.
func TestWritePage_KilledBeforeItsFile(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	_ = e.noteIntent("Never written", "", "recipe") // killed: the note stays
	e.Close()
	e = newTestEnv(t, v)
	if _, err := os.Stat(v.Abs(intentFile)); err == nil {
		t.Error("the note is still there")
	}
	if r := missingItem(t, e, "Never written"); r != nil {
		t.Errorf("an item: %+v", r)
	}
}
