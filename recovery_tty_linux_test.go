package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/vaultgen"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// openPTY opens a pseudo-terminal pair (no library: /dev/ptmx, unlock,
// then the slave by number).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pty slave: %v", err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// TestRecovery_ProgressOnATerminal: the command that finishes an
// interrupted reindex says so and, its stderr being a terminal, draws the
// progress of each phase (files, then pages for links and the graph)
// while the data on stdout stays plain.
func TestRecovery_ProgressOnATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a 1500-page vault")
	}
	bin := synapseBinary(t)
	v := generatedVault(t, vaultgen.Options{Pages: 1500, Sources: 50, Seed: 9, BodyWords: 60})
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := ops.NewEnv(v, s)
	ctx, cancel := context.WithCancel(context.Background())
	e.Index.Progress = func(phase string, done, total int) {
		if phase == "index" && done > 0 {
			cancel() // once the first batch is committed
		}
	}
	if _, err := e.Index.Scan(ctx, index.ScanOptions{Full: true}); err == nil {
		t.Fatal("the reindex was not interrupted")
	}
	s.Close()

	master, slave := openPTY(t)
	cmd := exec.Command(bin, "page", "list", "--limit", "1", "--vault", v.Root)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, slave
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "TERM=xterm")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	tty := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		_, _ = io.Copy(&b, master) // EIO once the child has exited
		tty <- b.String()
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("page list: %v", err)
	}
	got := <-tty
	if !strings.Contains(got, "left half built") {
		t.Fatalf("no notice on the terminal:\n%q", got)
	}
	for _, re := range []string{`index \d+/\d+ files`, `links \d+/\d+ pages`, `graph \d+/\d+ pages`} {
		if !regexp.MustCompile(re).MatchString(got) {
			t.Errorf("no %q progress on the terminal:\n%q", re, got)
		}
	}
	if strings.Contains(stdout.String(), "\r") || !strings.Contains(stdout.String(), "wiki/") {
		t.Fatalf("stdout:\n%q", stdout.String())
	}
}
