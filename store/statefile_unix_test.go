//go:build unix

package store

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
)

// TestOpen_StateFilesNeverFollowed: a store path that is a symlink (to a
// file outside, existing or not) or a named pipe is refused by name, and a
// holder file that is a symlink is replaced, never written through (main
// overwrote the outside file with the holder's JSON and created the store
// outside); a holder file that is a named pipe is never waited on.
func TestOpen_StateFilesNeverFollowed(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside.txt")
	os.WriteFile(outside, []byte("precious\n"), 0o644)

	for _, tc := range []struct {
		name string
		make func(p string) error
	}{
		{"symlink to a file outside", func(p string) error { return os.Symlink(outside, p) }},
		{"dangling symlink outside", func(p string) error { return os.Symlink(filepath.Join(dir, "created-outside.db"), p) }},
		{"named pipe", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "s.db")
			if err := tc.make(db); err != nil {
				t.Fatal(err)
			}
			for _, ro := range []bool{false, true} {
				done := make(chan error, 1)
				go func() {
					s, err := Open(db, Options{ReadOnly: ro, Timeout: 100 * time.Millisecond})
					if err == nil {
						s.Close()
					}
					done <- err
				}()
				select {
				case err := <-done:
					if errs.CodeOf(err) != errs.Forbidden || !strings.Contains(err.Error(), db) {
						t.Errorf("read-only %v: %v", ro, err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("open waited on the store file")
				}
			}
		})
	}
	if data, _ := os.ReadFile(outside); string(data) != "precious\n" {
		t.Errorf("the outside file was changed: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "created-outside.db")); err == nil {
		t.Error("a store was created outside")
	}

	// the holder file
	db := filepath.Join(t.TempDir(), "s.db")
	os.Symlink(outside, HolderPath(db))
	s, err := Open(db, Options{Holder: "synapse page write"})
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(outside); string(data) != "precious\n" {
		t.Errorf("the holder was written through a symlink: %q", data)
	}
	if h, ok := ReadHolder(db); !ok || h.Command != "synapse page write" {
		t.Errorf("holder %+v %v", h, ok)
	}
	s.Close()
	syscall.Mkfifo(HolderPath(db), 0o600)
	done := make(chan bool, 1)
	go func() { _, ok := ReadHolder(db); done <- ok }()
	select {
	case ok := <-done:
		if ok {
			t.Error("a named pipe read as a holder")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadHolder waited on a named pipe")
	}
}
