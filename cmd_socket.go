package main

// The CLI beside a server: a verb's operation is handed to the server that
// holds the vault over its socket (package sock), else run in this process.

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/gcmode"
	"github.com/synapse-wiki/synapse/internal/render"
	"github.com/synapse-wiki/synapse/internal/server/sock"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/urfave/cli/v2"
)

// ---- the CLI beside a server ------------------------------------------------

// invokeVerb runs a CLI verb's operation: handed to the server that holds
// the vault when one answers on its socket, else in this process. While
// another process holds the store without a socket (a CLI verb, a server
// starting or stopping) it polls both for up to the socket timing's
// LockWait, then fails
// naming the holder. It never waits on the lock alone.
func invokeVerb(c *cli.Context, v *vault.Vault, op *ops.Op, raw []byte, o *render.Output) (any, error) {
	in, err := op.Decode(raw)
	if err != nil {
		return nil, err
	}
	ctx := c.Context
	timing := sockTiming(c)
	deadline := time.Now().Add(timing.LockWait)
	var why error // why the socket did not take the operation, if worth saying
	first := true
	for {
		if !op.Local {
			out, err := forwardVerb(c, v, op, raw, o)
			switch {
			case err == nil:
				return out, nil
			case errors.Is(err, sock.ErrUnsafe) && why == nil:
				o.Note("synapse: %v; running `synapse %s` in this process", err, op.CLI)
				why = err
			case ctx.Err() != nil:
				// whatever the socket said, the signal ended the verb
				return nil, interrupted(op, context.Canceled)
			case errors.Is(err, sock.ErrNoServer), errors.Is(err, sock.ErrRetry),
				errors.Is(err, sock.ErrGone) && !op.Writes(in):
				// not run (or a read that may simply be asked again):
				// look for the store, or the next server
				if !errors.Is(err, sock.ErrRetry) && err != sock.ErrNoServer {
					why = err
				}
			case errors.Is(err, sock.ErrGone):
				return nil, errs.Wrap(errs.Unavailable, err, "the server holding the vault stopped while running `synapse %s`; it may or may not have taken effect, check before running it again", op.CLI)
			default:
				return nil, err
			}
		}
		if first {
			// a read the vault's file monitor answers when nothing changed
			first = false
			if out, ok, err := monitorVerb(c, v, op, in, raw); ok {
				return out, err
			}
		}
		if op.Scans || op.Rescans || op.Concurrent {
			gcmode.Long() // reindex, rescan, lint and embed work through the vault
		}
		e, err := ops.OpenEnv(ctx, v, ops.OpenOptions{
			ReadOnly: !op.Writes(in) && !op.Rescans,
			// lint rescans first, but answers on a read-only mount
			ReadOnlyFallback: op.Rescans && !op.Writes(in),
			Timeout:          timing.LockPoll,
			Holder:           "synapse " + op.CLI,
			Progress:         o.Progress(),
			Notify:           o.ScanNote,
			NoInitialScan:    op.Scans,
			Detachable:       true, // this process runs one verb (ops.OpenOptions)
			// files changed by hand are indexed first (no server watches),
			// found by the vault's file monitor when one runs
			Fresh:   !op.Scans && !op.Rescans,
			Monitor: cliMonitor{root: v.Root},
		})
		if err == nil {
			defer e.Close()
			run := ctx
			if op.Writes(in) && !op.Scans && !op.Concurrent {
				// a write that has started runs to completion, as on a
				// server (SIGINT and SIGTERM stop reads and scans at once,
				// and embed, which commits as it goes and resumes)
				run = context.WithoutCancel(ctx)
				guard := guardOf(ctx)
				if !guard.beginWrite() {
					return nil, interrupted(op, context.Canceled)
				}
				defer guard.endWrite()
			}
			out, err := op.Run(run, e, in)
			o.EndProgress()
			if err != nil && ctx.Err() != nil {
				err = interrupted(op, err)
			}
			return out, err
		}
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return nil, interrupted(op, err) // a signal while the index was brought up to date
		}
		if !errors.Is(err, store.ErrLocked) || time.Now().After(deadline) || ctx.Err() != nil {
			return nil, sock.LockedBecause(err, why)
		}
	}
}

// interrupted is the error of a verb a signal stopped.
func interrupted(op *ops.Op, err error) error {
	if !errors.Is(err, context.Canceled) {
		return err
	}
	return errs.Wrap(errs.Unavailable, err, "interrupted (SIGINT or SIGTERM) before `synapse %s` finished; what it had committed stays, run it again to finish", op.CLI)
}

// forwardVerb hands op to the server holding v and returns its result in
// the form runOp prints: the server's JSON as is for --json (and for verbs
// without a renderer), else the typed result.
func forwardVerb(c *cli.Context, v *vault.Vault, op *ops.Op, raw []byte, o *render.Output) (any, error) {
	sc, err := sock.Dial(v, sockTiming(c))
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	key := ""
	if cfg, err := v.LoadConfig(); err == nil {
		key = cfg.Embeddings.APIKeyEnv
	}
	req := sock.NewRequest(op, raw, key)
	req.Patient = true
	var progress func(sock.Progress)
	if draw := o.Progress(); draw != nil {
		req.Progress = true
		progress = func(p sock.Progress) { draw(p.Phase, p.Done, p.Total) }
	}
	r, err := sc.Call(c.Context, req, progress)
	o.EndProgress()
	if err != nil {
		return nil, err
	}
	return replyResult(c, op, r, "server")
}

// replyResult is the result of op that another process (a server, the
// vault's file monitor) sent in r, in the form runOp prints: its JSON as
// is for --json (and for verbs without a renderer), else the typed
// result.
func replyResult(c *cli.Context, op *ops.Op, r *sock.Reply, who string) (any, error) {
	if globalsOf(c).json || rendererFor(op) == nil {
		return json.RawMessage(r.Result), nil
	}
	out := reflect.New(op.Out).Interface()
	if err := json.Unmarshal(r.Result, out); err != nil {
		return nil, errs.Wrap(errs.Internal, err, "decode the %s's answer: %v", who, err)
	}
	if err := sock.RestoreFrontmatter(out, r.Frontmatter); err != nil {
		return nil, errs.Wrap(errs.Internal, err, "decode the %s's answer: %v", who, err)
	}
	return out, nil
}
