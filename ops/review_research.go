package ops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/errs"
)

// The deep-research action hands an item to a command the user configures
// and records what it prints.
const (
	// ResearchCmdEnv holds the research command, run as `sh -c "$SYNAPSE_RESEARCH_CMD"`
	// in the vault folder, so it may be a pipeline or carry arguments. It gets
	// the item as JSON (the list_reviews form) on stdin and SYNAPSE_VAULT and
	// SYNAPSE_REVIEW_ID in its environment; its stdout is recorded on the item
	// as the resolution. A non-zero exit leaves the item pending.
	ResearchCmdEnv = "SYNAPSE_RESEARCH_CMD"
	// ResearchTimeoutEnv bounds the command's run time (a Go duration such as
	// "90s" or "5m"; default DefaultResearchTimeout). On timeout the whole
	// process group is killed and the item stays pending.
	ResearchTimeoutEnv = "SYNAPSE_RESEARCH_TIMEOUT"
	// DefaultResearchTimeout is the run-time bound without ResearchTimeoutEnv.
	DefaultResearchTimeout = 10 * time.Minute
	// MaxResearchOutput bounds the output recorded on the item; the rest is
	// read and discarded, and the resolution says it was truncated.
	MaxResearchOutput = 64 << 10
	// maxResearchStderr is how much of stderr a failure message quotes.
	maxResearchStderr = 2 << 10
)

type environKey struct{}

// WithEnviron makes environ (KEY=value entries, as os.Environ returns) the
// environment the research command is configured from and runs in, instead
// of this process's: a CLI verb handed to a running server carries its
// caller's environment, so `SYNAPSE_RESEARCH_CMD=… synapse review resolve ID
// --action deep-research` behaves the same with or without a server.
func WithEnviron(ctx context.Context, environ []string) context.Context {
	return context.WithValue(ctx, environKey{}, environ)
}

// environ is the environment of the caller: WithEnviron's, else this
// process's.
func environ(ctx context.Context) []string {
	if env, ok := ctx.Value(environKey{}).([]string); ok {
		return env
	}
	return os.Environ()
}

func getenv(ctx context.Context, key string) string {
	v := ""
	for _, kv := range environ(ctx) {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val // the last entry wins, as in exec
		}
	}
	return v
}

type callerKey struct{}

// Detach returns a context that ctx's cancellation does not reach, for a
// write that must run to completion once started, but that remembers ctx:
// steps that can stop without harm (the research command of deep-research,
// after which the item stays pending) still stop when the caller goes away.
func Detach(ctx context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(ctx), callerKey{}, ctx)
}

// callerContext is the context Detach was given, else ctx.
func callerContext(ctx context.Context) context.Context {
	if c, ok := ctx.Value(callerKey{}).(context.Context); ok {
		return c
	}
	return ctx
}

type researchConfig struct {
	cmd     string
	timeout time.Duration
}

// researchFromEnv reads the configuration from the caller's environment:
// unavailable without a command, invalid with a malformed timeout.
func researchFromEnv(ctx context.Context) (researchConfig, error) {
	c := researchConfig{cmd: strings.TrimSpace(getenv(ctx, ResearchCmdEnv)), timeout: DefaultResearchTimeout}
	if c.cmd == "" {
		return c, errs.E(errs.Unavailable, "deep-research needs a research command: set %s (run with `sh -c`, the item as JSON on stdin; its output is recorded on the item)", ResearchCmdEnv)
	}
	if v := strings.TrimSpace(getenv(ctx, ResearchTimeoutEnv)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, errs.E(errs.Invalid, "%s=%q is not a positive duration (e.g. 90s, 5m)", ResearchTimeoutEnv, v)
		}
		c.timeout = d
	}
	return c, nil
}

// capWriter keeps the first max bytes written (or the last max, with
// tail) and swallows the rest, so a chatty command is never blocked.
type capWriter struct {
	buf       bytes.Buffer
	max       int
	tail      bool
	truncated bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	n := len(p)
	if w.tail {
		w.buf.Write(p)
		if over := w.buf.Len() - w.max; over > 0 {
			w.buf.Next(over)
			w.truncated = true
		}
		return n, nil
	}
	if room := w.max - w.buf.Len(); room < len(p) {
		p = p[:max(room, 0)]
		w.truncated = true
	}
	w.buf.Write(p)
	return n, nil
}

// runResearch runs the research command for item and returns its output.
// Errors are unavailable (the command failed, timed out or was
// interrupted), naming the cause and quoting the end of its stderr.
func runResearch(ctx context.Context, e *Env, c researchConfig, item ReviewItem) (string, error) {
	ctx = callerContext(ctx) // a cancelled caller stops the command; the item stays pending
	input, err := MarshalJSON(item)
	if err != nil {
		return "", err
	}
	rctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(rctx, "/bin/sh", "-c", c.cmd)
	cmd.Dir = e.Vault.Root
	cmd.Env = append(environ(ctx), "SYNAPSE_VAULT="+e.Vault.Root, "SYNAPSE_REVIEW_ID="+item.ID)
	cmd.Stdin = bytes.NewReader(input)
	stdout := &capWriter{max: MaxResearchOutput}
	stderr := &capWriter{max: maxResearchStderr, tail: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 2 * time.Second
	killGroupOnCancel(cmd)
	err = cmd.Run()
	switch {
	case errors.Is(rctx.Err(), context.DeadlineExceeded):
		return "", errs.E(errs.Unavailable, "research command timed out after %v (%s); the item stays pending", c.timeout, ResearchTimeoutEnv)
	case ctx.Err() != nil:
		return "", errs.E(errs.Unavailable, "research command interrupted; the item stays pending")
	case err != nil:
		msg := strings.TrimSpace(strings.ToValidUTF8(stderr.buf.String(), "\uFFFD"))
		if msg != "" {
			msg = ": " + msg
		}
		return "", errs.Wrap(errs.Unavailable, err, "research command failed (%v)%s; the item stays pending", err, msg)
	}
	out := strings.TrimSpace(strings.ToValidUTF8(stdout.buf.String(), "\uFFFD"))
	if out == "" {
		out = "research command produced no output"
	}
	if stdout.truncated {
		out += fmt.Sprintf("\n…[output truncated at %d KiB]", MaxResearchOutput>>10)
	}
	if ctx.Err() != nil { // cancelled as the command ended: nothing is recorded
		return "", errs.E(errs.Unavailable, "research command interrupted; the item stays pending")
	}
	return out, nil
}
