package main

// The vault's file monitor (internal/monitor): the hidden verb that runs
// it, and how a CLI verb asks it what changed (or starts it).

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/monitor"
	"github.com/synapse-wiki/synapse/internal/server/sock"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/urfave/cli/v2"
)

func init() {
	extraCommands = append(extraCommands, &cli.Command{
		Name:      "monitor",
		Hidden:    true,
		Usage:     "Watch the vault's files for the CLI's freshness check (started by the CLI)",
		UsageText: "synapse monitor [--vault DIR]",
		Description: "Runs the vault's file monitor in the foreground: it answers which files changed\n" +
			"since a token on .synapse/monitor.sock (owner only) and exits after ten idle minutes.\n" +
			"CLI verbs start it in the background when they need it (freshness.monitor).",
		Flags:        []cli.Flag{&cli.StringFlag{Name: "vault", Usage: "vault folder"}},
		OnUsageError: usageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return errs.E(errs.Invalid, "unexpected argument %q (usage: %s)", c.Args().First(), c.Command.UsageText)
			}
			v, err := findVault(globalsOf(c))
			if err != nil {
				return err
			}
			err = monitor.Run(c.Context, v.Root, monitor.Options{Version: version, CheckPeer: sock.CheckPeer, Addr: sock.Addr})
			if errors.Is(err, monitor.ErrRunning) {
				return nil // another one watches the vault
			}
			return err
		},
	})
}

// cliMonitor is the vault's file monitor as a CLI verb reaches it
// (ops.FreshMonitor): asked over its socket, and started in the
// background when none answers, for the next verb.
type cliMonitor struct{ root string }

func monitorClient() monitor.ClientOptions {
	return monitor.ClientOptions{Version: version, CheckPeer: sock.CheckPeer, Addr: sock.Addr}
}

func (m cliMonitor) Changes(ctx context.Context, token string) (*ops.MonitorAnswer, error) {
	if !monitor.Supported() {
		return nil, errors.New("no file monitor on this system")
	}
	a, err := monitor.Ask(ctx, m.root, token, monitorClient())
	if err == nil {
		return &ops.MonitorAnswer{Token: a.Token, Paths: a.Paths, Full: a.Full, PID: a.PID}, nil
	}
	if !errors.Is(err, monitor.ErrNotRunning) && !errors.Is(err, monitor.ErrVersion) {
		return nil, err
	}
	if why, ok := monitor.OffReason(m.root); ok {
		return nil, fmt.Errorf("the file monitor cannot run on this vault: %s", why)
	}
	exe, xerr := os.Executable()
	if xerr == nil {
		xerr = monitor.Start(m.root, exe, []string{"monitor", "--vault", m.root})
	}
	if xerr != nil {
		return nil, fmt.Errorf("could not start the file monitor: %v", xerr)
	}
	return nil, errors.New("the file monitor was started for the next command")
}
