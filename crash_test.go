package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/internal/vaultgen"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// synapseBinary builds the synapse binary once per test run.
func synapseBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "synapse-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "synapse")
		out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build synapse: %v", buildErr)
	}
	return builtBin
}

func fingerprint(t *testing.T, dbPath string) string {
	t.Helper()
	s, err := store.Open(dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fp, err := storecheck.Fingerprint(s)
	if err != nil {
		t.Fatal(err)
	}
	if diffs, err := storecheck.CheckGraph(s); err != nil || len(diffs) > 0 {
		t.Fatalf("graph check: %v %v", err, diffs[:min(len(diffs), 10)])
	}
	return fp
}

// generatedVault makes a vault in a temporary folder filled by vaultgen.
func generatedVault(t *testing.T, o vaultgen.Options) *vault.Vault {
	t.Helper()
	v, _, err := vault.Init(filepath.Join(t.TempDir(), "v"))
	if err != nil {
		t.Fatal(err)
	}
	o.CorpusDir = testvault.CorpusDir()
	if _, err := vaultgen.Generate(v.Root, o); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCrash_KillDuringReindex kills `synapse reindex` with SIGKILL at
// several moments and shows that the next run — a plain incremental rescan —
// leaves a store identical to one built from scratch, with the review queue
// untouched.
func TestCrash_KillDuringReindex(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a 1500-page vault")
	}
	bin := synapseBinary(t)
	v := generatedVault(t, vaultgen.Options{Pages: 1500, Sources: 200, Seed: 3, BodyWords: 200})
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, append(args, "--vault", v.Root)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("reindex"); err != nil {
		t.Fatalf("reindex: %v\n%s", err, out)
	}
	if out, err := run("review", "add", "--type", "suggestion", "--title", "Keep this decision"); err != nil {
		t.Fatalf("review add: %v\n%s", err, out)
	}
	db := v.Abs(vault.DBFile)
	want := fingerprint(t, db)

	killed := 0
	for _, delay := range []time.Duration{20, 60, 120, 200, 300, 450, 700} {
		cmd := exec.Command(bin, "reindex", "--vault", v.Root)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay * time.Millisecond)
		_ = cmd.Process.Kill()
		err := cmd.Wait()
		if err != nil {
			killed++
		}
		// the next run is an ordinary rescan: it must finish the job
		if out, err := run("source", "rescan"); err != nil {
			t.Fatalf("rescan after a kill at %v: %v\n%s", delay, err, out)
		}
		if out, err := run("review", "list", "--json"); err != nil || !strings.Contains(out, "Keep this decision") {
			t.Fatalf("the review queue lost its item after a kill at %v: %v\n%s", delay, err, out)
		}
		if got := fingerprint(t, db); got != want {
			d := storecheck.DiffLines(want, got)
			t.Fatalf("after a kill at %dms the rescanned store differs from a clean one (%d lines):\n%s", delay, len(d), strings.Join(d[:min(len(d), 15)], "\n"))
		}
	}
	if killed == 0 {
		t.Fatal("no reindex was interrupted; the vault is too small for the kill points")
	}
	t.Logf("%d of 7 reindex runs were killed mid-way; each time the next rescan restored the store", killed)
}
