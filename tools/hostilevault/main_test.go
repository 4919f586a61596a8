package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestMain lets this test binary be the fake server socketForeign runs as
// another user, as the command itself is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == fakeServerArg {
		fakeServerMain(os.Args[2:])
		return
	}
	os.Exit(m.Run())
}

// TestHostileVault_Quick replays the attacks against a synapse built from
// this tree (the quick variant: servers held for a second, not eight) and
// fails on every one that still does harm.
func TestHostileVault_Quick(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the replay reads Linux behaviour (peer credentials, /proc)")
	}
	if testing.Short() {
		t.Skip("builds synapse and runs it many times")
	}
	dir := t.TempDir()
	bin = filepath.Join(dir, "synapse")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build synapse: %v\n%s", err, out)
	}
	quick, hang = true, 30*time.Second
	os.Unsetenv("SYNAPSE_VAULT")
	bad, err := run("", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range table.Rows {
		if !r.OK {
			t.Errorf("%s: %s", r.Name, r.Now)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d attacks still do harm", bad, len(table.Rows))
	}
}
