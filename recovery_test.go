package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/vaultgen"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// TestRecovery_NextCommandSaysItFinishesTheRebuild: a reindex interrupted
// after its first batch leaves a half-built index; the next command (a
// read) finishes it before it answers, says so on stderr, and the store
// it leaves is the one a clean reindex builds.
func TestRecovery_NextCommandSaysItFinishesTheRebuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a 2500-page vault")
	}
	bin := synapseBinary(t)
	v := generatedVault(t, vaultgen.Options{Pages: 2500, Sources: 100, Seed: 5, BodyWords: 80})
	run := func(args ...string) (string, string, error) {
		cmd := exec.Command(bin, append(args, "--vault", v.Root)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	if _, errOut, err := run("reindex"); err != nil {
		t.Fatalf("reindex: %v\n%s", err, errOut)
	}
	db := v.Abs(vault.DBFile)
	want := fingerprint(t, db)

	// a reindex stopped once its first batch is committed
	s, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := ops.NewEnv(v, s)
	ctx, cancel := context.WithCancel(context.Background())
	batches := 0
	e.Index.Progress = func(phase string, done, total int) {
		if phase == "index" {
			if batches++; batches == 1 {
				cancel()
			}
		}
	}
	if _, err := e.Index.Scan(ctx, index.ScanOptions{Full: true}); err == nil {
		t.Fatal("the reindex was not interrupted")
	}
	s.Close()

	out, errOut, err := run("page", "list", "--limit", "1")
	if err != nil {
		t.Fatalf("page list: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "left half built") || !strings.Contains(errOut, "finishing it") {
		t.Fatalf("the command did not say it finishes the rebuild; stderr:\n%s", errOut)
	}
	if !strings.Contains(out, "wiki/") {
		t.Fatalf("page list answered:\n%s", out)
	}
	if got := fingerprint(t, db); got != want {
		t.Fatal("the finished store differs from a clean reindex")
	}
	// once finished, nothing more is said
	if _, errOut, err := run("page", "list", "--limit", "1"); err != nil || strings.Contains(errOut, "half built") {
		t.Fatalf("a second command: %v, stderr %q", err, errOut)
	}
}
