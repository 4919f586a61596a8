package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"synapse": func() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScript runs the CLI scripts in testdata/script against the real
// binary entry point. Extra commands:
//
//	corpus DIR      copy the Obsidian Help corpus into DIR
func TestScript(t *testing.T) {
	testscript.Run(t, scriptParams(t))
}

func scriptParams(t *testing.T) testscript.Params {
	return testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("SYNAPSE_VAULT", "")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"corpus": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 {
					ts.Fatalf("usage: corpus DIR")
				}
				ts.Check(testvault.CopyTree(testvault.CorpusDir(), ts.MkAbs(args[0])))
			},
		},
	}
}
