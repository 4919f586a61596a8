package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestMain lets testscript run the synapse binary in-process.
func TestMain(m *testing.M) {
	testscript.Main(removeBuiltBinary{m}, map[string]func(){
		"synapse": func() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// removeBuiltBinary deletes the binary synapseBinary built (crash_test.go)
// once every test has run, so test runs leave no synapse-bin-* folders in
// the temporary directory.
type removeBuiltBinary struct{ m *testing.M }

func (r removeBuiltBinary) Run() int {
	// the tests' own user config folder (not when this process runs a
	// script's synapse command: the script's environment says)
	defer testvault.PrivateUserConfig()()
	code := r.m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	return code
}

// TestScript runs every CLI script in testdata/script against the real
// entry point. Extra commands:
//
//	corpus DIR                 copy the Obsidian Help corpus into DIR
//	exitcode N CMD ARGS...     run CMD and require exit status N
//	envout VAR                 set VAR to the last command's stdout, trimmed
//	jsonids FILE OUT           write the ids of FILE's `.items[]` to OUT, one a line
//	mtime FILE RFC3339         set a file's modification time (source states compare mtimes)
//	waitfile FILE              wait (up to 20 s) until FILE exists
//	[!] eventually CMD ARGS... run CMD until it succeeds (with !: until it fails), up to 20 s
//	freeport VAR               set VAR to a free TCP port on 127.0.0.1
//	[!] httpget URL [TOKEN]    GET URL (with a bearer token); stdout is the body; fails unless 2xx
//	jsonvar VAR PATH           set VAR from the last JSON stdout (.hits[0].path, .items[title=X].id)
//	skillmd FILE               copy the repository's skill/SKILL.md to FILE
//	skillrun PREFIX [N=V...]   run the SKILL.md command line starting with PREFIX, placeholders filled
//
// (jsonvar, skillmd and skillrun live in cmd_skill_test.go.)
func TestScript(t *testing.T) {
	testscript.Run(t, scriptParams(t))
}

func scriptParams(t *testing.T) testscript.Params {
	return testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("SYNAPSE_VAULT", "")
			env.Setenv("SYNAPSE_TOKEN", "")
			return nil
		},
		Cmds: scriptCmds,
	}
}

var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"eventually": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 1 {
			ts.Fatalf("usage: [!] eventually CMD ARGS...")
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			err := ts.Exec(args[0], args[1:]...)
			if (err == nil) != neg {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("%s did not %s within 20 s (last: %v)", args[0], map[bool]string{false: "succeed", true: "fail"}[neg], err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	},
	"waitfile": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 {
			ts.Fatalf("usage: waitfile FILE")
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("%s did not appear", args[0])
			}
			time.Sleep(20 * time.Millisecond)
		}
	},
	"mtime": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: mtime FILE RFC3339")
		}
		tm, err := time.Parse(time.RFC3339, args[1])
		ts.Check(err)
		ts.Check(os.Chtimes(ts.MkAbs(args[0]), tm, tm))
	},
	"corpus": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 {
			ts.Fatalf("usage: corpus DIR")
		}
		ts.Check(testvault.CopyTree(testvault.CorpusDir(), ts.MkAbs(args[0])))
	},
	"exitcode": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 {
			ts.Fatalf("usage: exitcode N CMD ARGS...")
		}
		want, err := strconv.Atoi(args[0])
		ts.Check(err)
		err = ts.Exec(args[1], args[2:]...)
		got := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			got = ee.ExitCode()
		} else if err != nil {
			ts.Fatalf("%s: %v", args[1], err)
		}
		if got != want {
			ts.Fatalf("%s exited %d, want %d", args[1], got, want)
		}
	},
	"envout": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 {
			ts.Fatalf("usage: envout VAR")
		}
		ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
	},
	"freeport": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: freeport VAR")
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		ts.Setenv(args[0], strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
		ln.Close()
	},
	"httpget": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 1 || len(args) > 2 {
			ts.Fatalf("usage: [!] httpget URL [TOKEN]")
		}
		req, err := http.NewRequest("GET", args[0], nil)
		ts.Check(err)
		if len(args) == 2 {
			req.Header.Set("Authorization", "Bearer "+args[1])
		}
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		status := fmt.Sprint(err)
		if err == nil {
			status = resp.Status
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ts.Stdout().Write(body)
		}
		if ok := err == nil && resp.StatusCode/100 == 2; ok == neg {
			ts.Fatalf("GET %s: %s", args[0], status)
		}
	},
	"jsonids": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: jsonids FILE OUT")
		}
		var l struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &l))
		var b strings.Builder
		for _, it := range l.Items {
			b.WriteString(it.ID + "\n")
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(b.String()), 0o644))
	},
}
