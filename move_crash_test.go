package main

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

// TestCrash_KillDuringMove kills `synapse page move` (Settings, 64 pages
// linking to it, renamed) with SIGKILL at moments spread over its run, and
// runs one more command: every time, the vault's files are as before the
// move or as after it, the journal is gone, and the index is the one a
// reindex builds.
func TestCrash_KillDuringMove(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and moves a page a dozen times")
	}
	bin := synapseBinary(t)
	run := func(v *vault.Vault, args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--vault", v.Root)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("synapse %s: %v\n%s", strings.Join(args, " "), err, errb.String())
		}
		return out.String(), errb.String()
	}
	fresh := func() *vault.Vault {
		v := testvault.WithCorpus(t)
		run(v, "reindex")
		return v
	}
	moveArgs := []string{"page", "move", "Settings", "--to", "Preferences"}
	ref := fresh()
	before := testvault.WikiFiles(t, ref)
	start := time.Now()
	run(ref, moveArgs...)
	took := time.Since(start)
	after := testvault.WikiFiles(t, ref)
	if maps.Equal(before, after) {
		t.Fatal("the move changed nothing")
	}

	outcomes := map[string]int{}
	const points = 12
	for i := 0; i < points; i++ {
		v := fresh()
		delay := took * time.Duration(i) / (points - 2) // the last ones run to the end
		cmd := exec.Command(bin, append(moveArgs, "--vault", v.Root)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		_ = cmd.Process.Kill()
		killed := cmd.Wait() != nil
		_, notes := run(v, "page", "list", "--limit", "1")
		got := testvault.WikiFiles(t, v)
		switch {
		case maps.Equal(got, before):
			outcomes["before"]++
		case maps.Equal(got, after):
			outcomes["after"]++
		default:
			t.Fatalf("killed after %v: the vault is neither as before nor as after the move", delay)
		}
		if strings.Contains(notes, "interrupted move") {
			outcomes["finished by the next command"]++
		}
		if killed {
			outcomes["killed"]++
		}
		if _, err := os.Stat(v.Abs(".synapse/move.json")); !os.IsNotExist(err) {
			t.Fatalf("killed after %v: the move's journal is left", delay)
		}
		db := v.Abs(vault.DBFile)
		got1 := fingerprint(t, db)
		run(v, "reindex")
		if got2 := fingerprint(t, db); got1 != got2 {
			t.Fatalf("killed after %v: the index differs from a reindex", delay)
		}
	}
	t.Logf("a move takes %v; %d kills: %v", took, points, outcomes)
	if outcomes["killed"] == 0 {
		t.Fatal("no move was interrupted")
	}
}
