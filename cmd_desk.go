package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/desk"
	"github.com/synapse-wiki/synapse/internal/render"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/urfave/cli/v2"
)

func init() { extraCommands = append(extraCommands, deskCommand()) }

func deskCommand() *cli.Command {
	return &cli.Command{
		Name:      "desk",
		Usage:     "Decide the review queue and check recent writes in a full-screen terminal UI",
		UsageText: "synapse desk [--mouse]",
		Description: "Queue (1): pending items with their context; c create, r resolve, s skip, d dismiss,\n" +
			"R deep-research, each asking y/n; space selects for bulk; / filters. Activity (2): recent\n" +
			"writes with diffs, u restores. Page (3): a page, its links, backlinks and neighbours.\n" +
			"Every action is the operation a CLI verb runs (handed to a running serve). See docs/desk.md.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "mouse", Usage: "turn on the mouse: the wheel scrolls, a click moves the cursor"},
			&cli.StringFlag{Name: "vault", Usage: "vault folder"},
			&cli.BoolFlag{Name: "json", Usage: "refused: the desk draws on a terminal (use synapse review list --json)"},
		},
		Action: runDesk,
	}
}

func runDesk(c *cli.Context) error {
	if c.NArg() > 0 {
		return errs.E(errs.Invalid, "unexpected argument %q (usage: synapse desk [--mouse])", c.Args().First())
	}
	if globalsOf(c).json {
		return errs.E(errs.Invalid, "synapse desk draws on a terminal and prints no JSON; for JSON, use `synapse review list --json` and `synapse review show ID --json`")
	}
	if f, ok := c.App.Writer.(*os.File); !ok || !render.IsTerminal(f) {
		return errs.E(errs.Invalid, "synapse desk needs a terminal, and standard output is not one; in a script, use `synapse review list` and `synapse review resolve`")
	}
	v, err := findVault(globalsOf(c))
	if err != nil {
		return err
	}
	o := desk.Options{
		Caller: &deskCaller{c: c, v: v},
		Stamp:  desk.VaultStamp(v),
		Output: c.App.Writer,
		Plain:  os.Getenv("NO_COLOR") != "",
		Mouse:  c.Bool("mouse"),
	}
	if f, ok := c.App.Reader.(*os.File); ok && render.IsTerminal(f) {
		o.Input = f
	}
	err = desk.Run(c.Context, o)
	if errors.Is(err, desk.ErrInterrupted) {
		return cli.Exit("", 130)
	}
	return err
}

// deskCaller runs the desk's operations exactly as the desk's command
// would run a verb (invoke): handed to the server holding the vault, else
// in a short open of the store that never waits on its lock. One at a
// time, and with nothing printed: the desk owns the screen. The calls end
// with the command's context (SIGINT, SIGTERM).
type deskCaller struct {
	mu sync.Mutex
	c  *cli.Context
	v  *vault.Vault
}

func (d *deskCaller) Call(_ context.Context, name string, in []byte) ([]byte, error) {
	op := ops.Lookup(name)
	if op == nil {
		return nil, errs.E(errs.Internal, "no operation %s in this synapse", name)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	out, err := invoke(d.c, d.v, op, in, render.New(io.Discard, io.Discard))
	if err != nil {
		return nil, err
	}
	if raw, ok := out.(json.RawMessage); ok {
		return raw, nil
	}
	return ops.MarshalJSON(out)
}
