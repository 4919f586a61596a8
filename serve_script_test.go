package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run `synapse` as a subprocess of the test binary.
// (Other areas' script tests share it; keep one TestMain in package main.)
func TestMain(m *testing.M) {
	os.Exit(testscript.RunMain(m, map[string]func() int{
		"synapse": func() int { return run(os.Args, os.Stdin, os.Stdout, os.Stderr) },
	}))
}

// TestServeScripts runs testdata/script/serve-*.txtar.
func TestServeScripts(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "script", "serve-*.txtar"))
	if len(files) == 0 {
		t.Fatal("no serve-*.txtar scripts")
	}
	testscript.Run(t, testscript.Params{
		Files: files,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("SYNAPSE_VAULT", "")
			env.Setenv("SYNAPSE_TOKEN", "")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// waitfile FILE: wait (up to 20 s) until FILE exists
			"waitfile": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: waitfile FILE")
				}
				deadline := time.Now().Add(20 * time.Second)
				for {
					_, err := os.Stat(ts.MkAbs(args[0]))
					if err == nil {
						return
					}
					if time.Now().After(deadline) {
						ts.Fatalf("%s did not appear", args[0])
					}
					time.Sleep(20 * time.Millisecond)
				}
			},
		},
	})
}
