package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// The test binary doubles as the synapse command of the write-* scripts:
// started under the name "synapse" with SYNAPSE_TESTSCRIPT_MAIN=1 it runs
// the CLI and exits. (An init function rather than TestMain, so that this
// harness coexists with the other areas' script harnesses.)
func init() {
	if os.Getenv("SYNAPSE_TESTSCRIPT_MAIN") == "1" && filepath.Base(os.Args[0]) == "synapse" {
		os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
	}
}

// TestScript_Write runs testdata/script/write-*.txtar against the CLI.
func TestScript_Write(t *testing.T) {
	files, err := filepath.Glob("testdata/script/write-*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no write scripts: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "synapse")); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Files: files,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("SYNAPSE_TESTSCRIPT_MAIN", "1")
			env.Setenv("NO_COLOR", "1")
			env.Setenv("SYNAPSE_VAULT", "")
			return nil
		},
		// the same extra commands as the shared script harness on main
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// exitcode N CMD ARGS...: run CMD and require exit status N
			"exitcode": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: exitcode N CMD ARGS...")
				}
				want, err := strconv.Atoi(args[0])
				ts.Check(err)
				got := 0
				if err := ts.Exec(args[1], args[2:]...); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) {
						ts.Fatalf("%s: %v", args[1], err)
					}
					got = ee.ExitCode()
				}
				if got != want {
					ts.Fatalf("%s exited %d, want %d", args[1], got, want)
				}
			},
			// envout VAR: set VAR to the last command's stdout, trimmed
			"envout": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: envout VAR")
				}
				ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
			},
		},
	})
}
