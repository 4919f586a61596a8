package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run the test binary as `synapse`. (One TestMain
// serves every script harness of package main.)
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"synapse": func() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// sourceScriptCmds are the script commands the source-*.txtar scripts use
// beyond the standard set:
//
//	mtime FILE RFC3339       set a file's modification time (source
//	                         states compare mtimes, so scripts pin them)
//	exitcode N CMD ARGS...   run CMD (with the script's environment and
//	                         folder) and expect exit code N; its output is
//	                         checked with stdout/stderr as after exec
var sourceScriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"mtime": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: mtime FILE RFC3339")
		}
		tm, err := time.Parse(time.RFC3339, args[1])
		ts.Check(err)
		ts.Check(os.Chtimes(ts.MkAbs(args[0]), tm, tm))
	},
	"exitcode": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) < 2 {
			ts.Fatalf("usage: exitcode N CMD [ARGS...]")
		}
		want, err := strconv.Atoi(args[0])
		ts.Check(err)
		cmd := exec.Command(args[1], args[2:]...)
		cmd.Dir = ts.MkAbs(".")
		for _, k := range []string{"PATH", "HOME", "TMPDIR", "WORK", "NO_COLOR", "SYNAPSE_VAULT", "TERM"} {
			cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
		}
		if p, err := exec.LookPath(args[1]); err == nil {
			cmd.Path = p
		}
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err = cmd.Run()
		ts.Stdout().Write(so.Bytes())
		ts.Stderr().Write(se.Bytes())
		got := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			got = ee.ExitCode()
		} else if err != nil {
			ts.Fatalf("%s: %v", args[1], err)
		}
		if got != want {
			ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
		}
	},
}

func TestSourceScripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "script", "source-*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no source scripts: %v", err)
	}
	testscript.Run(t, testscript.Params{
		Files: files,
		Cmds:  sourceScriptCmds,
		Setup: func(e *testscript.Env) error {
			e.Setenv("NO_COLOR", "1")
			return nil
		},
		RequireExplicitExec: true,
	})
}

func TestSource_TerminalSafe(t *testing.T) {
	in := "a\tb\r\nred \x1b[31mtext\x1b[0m \x07bell \u009bcsi café ☕\n"
	want := "a\tb\r\nred \uFFFD[31mtext\uFFFD[0m \uFFFDbell \uFFFDcsi café ☕\n"
	if got := terminalSafe(in); got != want {
		t.Errorf("terminalSafe = %q, want %q", got, want)
	}
}
