//go:build unix

package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/agentskill"
)

// TestSkill_InstallRefusesSpecialFiles: a named pipe, a socket or a folder
// where SKILL.md goes is refused at once, naming it (a named pipe made the
// install wait forever for a writer).
func TestSkill_InstallRefusesSpecialFiles(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		make       func(p string) error
	}{
		{"fifo", "named pipe", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"socket", "socket", func(p string) error {
			ln, err := net.Listen("unix", p)
			if err == nil {
				t.Cleanup(func() { ln.Close() })
			}
			return err
		}},
		{"folder", "folder", func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "sk")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if err := tc.make(filepath.Join(dir, "SKILL.md")); err != nil {
				t.Skip(err)
			}
			done := make(chan error, 1)
			go func() { _, err := agentskill.Install(dir, skillFiles, true); done <- err }()
			select {
			case err := <-done:
				if !errs.Is(err, errs.Forbidden) || !strings.Contains(err.Error(), tc.kind) || !strings.Contains(err.Error(), "SKILL.md") {
					t.Errorf("got %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("skill install still waiting after 10 s")
			}
		})
	}
}
