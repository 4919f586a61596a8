package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestMain lets testscript run the synapse binary in-process.
func TestMain(m *testing.M) {
	os.Exit(testscript.RunMain(m, map[string]func() int{
		"synapse": func() int { return run(os.Args, os.Stdin, os.Stdout, os.Stderr) },
	}))
}

// TestSearchScripts runs testdata/script/search-*.txtar. Besides the
// standard commands, scripts have `corpus DIR`, which copies the Obsidian
// Help corpus into DIR.
func TestSearchScripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "script", "search-*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no search scripts: %v", err)
	}
	testscript.Run(t, testscript.Params{
		Files: files,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"corpus": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: corpus DIR")
				}
				ts.Check(testvault.CopyTree(testvault.CorpusDir(), ts.MkAbs(args[0])))
			},
		},
	})
}
