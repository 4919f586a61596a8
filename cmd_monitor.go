package main

// The vault's file monitor (internal/monitor): the hidden verb that runs
// it, and how a CLI verb asks it what changed (or starts it).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/monitor"
	"github.com/synapse-wiki/synapse/internal/server/sock"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/urfave/cli/v2"
)

func init() {
	extraCommands = append(extraCommands, &cli.Command{
		Name:      "monitor",
		Hidden:    true,
		Usage:     "Watch the vault's files for the CLI's freshness check (started by the CLI)",
		UsageText: "synapse monitor [--vault DIR]",
		Description: "Runs the vault's file monitor in the foreground: it answers which files changed\n" +
			"since a token on .synapse/monitor.sock (owner only), and runs the CLI's read verbs\n" +
			"when nothing changed, and exits after ten idle minutes. CLI verbs start it in the\n" +
			"background when they need it (freshness.monitor).",
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
			// the verbs it runs for the CLI check freshness, whatever the
			// environment of the CLI that started it
			os.Unsetenv("SYNAPSE_FRESH")
			err = monitor.Run(c.Context, v.Root, monitor.Options{Version: monitorVersion(), CheckPeer: sock.CheckPeer, Addr: sock.Addr,
				Serve: monitorServe(v)})
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
	return monitor.ClientOptions{Version: monitorVersion(), CheckPeer: sock.CheckPeer, Addr: sock.Addr}
}

// monitorVersion is what a CLI and the monitor compare: the version and
// the executable's size and mtime, so that a monitor left by another
// build (a reinstall, a development build of the same version) is asked
// to quit instead of answering verbs with other code.
var monitorVersion = sync.OnceValue(func() string {
	v := version
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			v += fmt.Sprintf("+%d.%d", st.Size(), st.ModTime().UnixNano())
		}
	}
	return v
})

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

// ---- verbs the monitor answers ----------------------------------------------

// monitorVerb hands a read-only verb to the vault's file monitor, which
// runs it when no file changed since the index was last brought up to
// date (the verb's answer is then what this process would give, without
// opening the store or building a search here). ok is false when the
// monitor did not answer — none runs, it runs another version, files
// changed, the store is held by a writer — and the verb runs here, as
// without one. A monitor is never started from here (the freshness check
// of the verb run here does that).
func monitorVerb(c *cli.Context, v *vault.Vault, op *ops.Op, in any, raw []byte) (out any, ok bool, err error) {
	if !monitorRuns(op, in) || !monitor.Supported() {
		return nil, false, nil
	}
	cfg, err := v.LoadConfig()
	if err != nil || ops.MonitorOff(cfg) {
		return nil, false, nil
	}
	data, err := json.Marshal(sock.NewRequest(op, raw, cfg.Embeddings.APIKeyEnv))
	if err != nil {
		return nil, false, nil
	}
	ans, err := monitor.AskOp(c.Context, v.Root, data, monitorClient())
	if err != nil {
		return nil, false, nil
	}
	var r sock.Reply
	if json.Unmarshal(ans, &r) != nil {
		return nil, false, nil
	}
	switch {
	case r.Error != nil:
		// an error of the verb itself is the answer; one of the
		// monitor's process (unavailable, internal) is checked here
		if r.Error.Code == errs.Unavailable || r.Error.Code == errs.Internal {
			return nil, false, nil
		}
		return nil, true, errs.E(r.Error.Code, "%s", r.Error.Message)
	case r.Result == nil:
		return nil, false, nil
	}
	out, err = replyResult(c, op, &r, "file monitor")
	return out, true, err
}

// monitorRuns reports whether the file monitor may run op on in: a read
// that neither writes (lint --to-review), nor scans, nor reaches beyond
// the vault (deep-research's command, run with the caller's environment),
// nor reads the caller's process.
func monitorRuns(op *ops.Op, in any) bool {
	return op.Access == ops.Read && !op.Writes(in) && !op.Scans && !op.Rescans &&
		!op.Local && !op.OpenWorld && !op.Concurrent
}

// monitorServe is the monitor's side (monitor.Options.Serve): it runs the
// verb of req on the store of v opened read-only for this request only,
// when the monitor's change log vouches that the index is current (the
// paths it saw change since the index's token are indexed as they are);
// else it declines, and the CLI runs the verb itself.
func monitorServe(v *vault.Vault) func(context.Context, json.RawMessage, monitor.View) (json.RawMessage, string) {
	return func(ctx context.Context, raw json.RawMessage, mv monitor.View) (reply json.RawMessage, declined string) {
		defer func() {
			if r := recover(); r != nil {
				reply, declined = nil, fmt.Sprintf("panic: %v", r)
			}
		}()
		var req sock.Request
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, "bad request: " + err.Error()
		}
		op := ops.Lookup(req.Op)
		if op == nil {
			return nil, fmt.Sprintf("unknown operation %q", req.Op)
		}
		in, err := op.Decode(req.Input)
		if err != nil || !monitorRuns(op, in) {
			return nil, "not a verb the monitor runs"
		}
		ctx = ops.WithEnviron(ctx, req.Environ)
		e, err := ops.OpenEnv(ctx, v, ops.OpenOptions{
			NeverWrite: true,
			Fresh:      true,
			Timeout:    time.Nanosecond, // a writer holds it: no wait, the CLI runs the verb
			Holder:     "synapse monitor",
			Monitor:    viewMonitor{mv},
		})
		if err != nil {
			return nil, err.Error()
		}
		defer e.Close()
		e.ReadOnly = true
		if e.Fresh == nil || len(e.Fresh.Deferred) > 0 {
			return nil, "not vouched for" // (the CLI says why)
		}
		e.Fresh.AnsweredBy, e.Fresh.MonitorAnswers = "monitor", mv.Answered()+1
		out, err := op.Run(ctx, e, in)
		var r sock.Reply
		switch code := errs.CodeOf(err); {
		case err != nil && (ctx.Err() != nil || code == errs.Unavailable || code == errs.Internal):
			return nil, err.Error()
		case err != nil:
			r.Error = &ops.ErrorDetail{Code: code, Message: errs.Raw(err)}
		default:
			data, err := ops.MarshalJSON(out)
			if err != nil {
				return nil, err.Error()
			}
			r.Result, r.Frontmatter = data[:len(data)-1], sock.FrontmatterYAML(out)
		}
		data, err := json.Marshal(r)
		if err != nil {
			return nil, err.Error()
		}
		return data, ""
	}
}

// viewMonitor is the monitor's own change log as the freshness check of
// a verb it runs asks it (ops.FreshMonitor).
type viewMonitor struct{ v monitor.View }

func (m viewMonitor) Changes(_ context.Context, token string) (*ops.MonitorAnswer, error) {
	tok, paths, full := m.v.Since(token)
	return &ops.MonitorAnswer{Token: tok, Paths: paths, Full: full, PID: m.v.PID()}, nil
}
