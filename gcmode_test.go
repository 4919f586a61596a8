package main

import (
	"bytes"
	"flag"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/cliargs"
	"github.com/synapse-wiki/synapse/internal/gcmode"
	"github.com/urfave/cli/v2"
)

// A command that is no operation row (serve, init, skill, version…) turns
// the collector back on when it starts: only one operation run in this
// process goes without it.
func TestExtraCommandCollectsGarbage(t *testing.T) {
	pct, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(pct)
	t.Cleanup(func() {
		gcmode.Long()
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	})
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	gcmode.Short()
	if !gcmode.Off() {
		t.Fatal("Short left the collector on")
	}
	// the action itself: running the app would set up the shared
	// command (help flag and subcommand), which the surface tests see
	var out, errb bytes.Buffer
	app := newApp(strings.NewReader(""), &out, &errb)
	app.Metadata = map[string]any{typedArgsKey: []string{"synapse", "version"}}
	if err := cliargs.FindCommand(app.Commands, "version").Action(cli.NewContext(app, flag.NewFlagSet("version", flag.ContinueOnError), nil)); err != nil {
		t.Fatalf("version: %v", err)
	}
	if gcmode.Off() {
		t.Fatal("`synapse version` ran with the collector off")
	}
}
