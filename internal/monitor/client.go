package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Answer is the monitor's answer to "what changed since token T?".
type Answer struct {
	// Token stands for now: the next question asks since it.
	Token string `json:"token,omitempty"`
	// Paths are the vault paths (files and folders) changed after the
	// token asked about, sorted. Full says that token cannot be answered
	// (another run's, from before a lost event, or none): anything may
	// have changed.
	Paths []string `json:"paths,omitempty"`
	Full  bool     `json:"full,omitempty"`
	// Folders is how many folders the monitor watches (asked with
	// ClientOptions.Status).
	Folders int `json:"folders,omitempty"`
	// Error says why the monitor could not answer.
	Error string `json:"error,omitempty"`
	// Reply is the reply of a verb the monitor ran (AskOp); Declined says
	// why it did not run it.
	Reply    json.RawMessage `json:"reply,omitempty"`
	Declined string          `json:"declined,omitempty"`
	// PID is the monitor's process.
	PID int `json:"-"`
}

// Errors of Ask.
var (
	// ErrNotRunning: no monitor listens on the vault's socket.
	ErrNotRunning = errors.New("no monitor is running")
	// ErrVersion: the monitor runs another version of synapse; Ask asked
	// it to quit.
	ErrVersion = errors.New("the monitor runs another version of synapse")
	// ErrDeclined: the monitor did not run the verb (AskOp).
	ErrDeclined = errors.New("the monitor declined")
)

// ClientOptions tune Ask.
type ClientOptions struct {
	// Version is this synapse's version: a monitor of another is asked to
	// quit (ErrVersion).
	Version string
	// CheckPeer refuses a monitor run by another user (required).
	CheckPeer func(net.Conn) error
	// Addr is as in Options.
	Addr func(path string) (addr string, release func(), err error)
	// Timeout bounds the whole question (DefaultTimeout when zero).
	Timeout time.Duration
	// Status asks for the number of folders watched as well.
	Status bool
}

// DefaultTimeout bounds a question to the monitor: past it, the CLI
// falls back to the stat check.
const DefaultTimeout = 3 * time.Second

// Ask asks the monitor of the vault at root which files changed since
// token (empty: none known). Every failure means the caller checks the
// files itself; ErrNotRunning means it may start one.
func Ask(ctx context.Context, root, token string, o ClientOptions) (*Answer, error) {
	c, h, err := dialSame(ctx, root, o)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := json.NewEncoder(c).Encode(request{Since: token, Status: o.Status}); err != nil {
		return nil, fmt.Errorf("ask the monitor: %w", err)
	}
	var a Answer
	if err := json.NewDecoder(c).Decode(&a); err != nil {
		return nil, fmt.Errorf("the monitor's answer: %w", err)
	}
	if a.Error != "" {
		return nil, fmt.Errorf("the monitor could not answer: %s", a.Error)
	}
	a.PID = h.PID
	return &a, nil
}

// OpTimeout bounds a request to run a verb (AskOp) when
// ClientOptions.Timeout is zero.
const OpTimeout = opDeadline

// AskOp asks the monitor of the vault at root to run a read-only verb:
// op is the request, passed to the monitor's Options.Serve as is. It
// returns the verb's reply; every error means the verb did not run there
// and the caller runs it itself: ErrNotRunning, ErrVersion (the monitor
// was asked to quit), ErrDeclined (with the monitor's reason: files
// changed since the index was last brought up to date, the store busy),
// or a failure to talk to it. It never starts a monitor.
func AskOp(ctx context.Context, root string, op json.RawMessage, o ClientOptions) (json.RawMessage, error) {
	if o.Timeout <= 0 {
		o.Timeout = OpTimeout
	}
	c, _, err := dialSame(ctx, root, o)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err := json.NewEncoder(c).Encode(request{Op: op}); err != nil {
		return nil, fmt.Errorf("ask the monitor: %w", err)
	}
	var a Answer
	if err := json.NewDecoder(c).Decode(&a); err != nil {
		return nil, fmt.Errorf("the monitor's answer: %w", err)
	}
	switch {
	case a.Declined != "":
		return nil, fmt.Errorf("%w: %s", ErrDeclined, a.Declined)
	case a.Error != "":
		return nil, fmt.Errorf("the monitor could not answer: %s", a.Error)
	case a.Reply == nil:
		return nil, errors.New("the monitor's answer: no reply")
	}
	return a.Reply, nil
}

// Quit asks the monitor of the vault at root, if one runs, to exit (a
// server that watches the vault itself stops it).
func Quit(ctx context.Context, root string, o ClientOptions) error {
	c, _, err := dial(ctx, root, o)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := json.NewEncoder(c).Encode(request{Quit: true}); err != nil {
		return err
	}
	var a Answer
	return json.NewDecoder(c).Decode(&a)
}

// dial connects to the monitor's socket, checks that it is this user's
// (the socket file and the process behind it) and reads its hello.
// dialSame dials the monitor and checks that it is of this build: one of
// another build is asked to quit (ErrVersion).
func dialSame(ctx context.Context, root string, o ClientOptions) (net.Conn, *hello, error) {
	c, h, err := dial(ctx, root, o)
	if err != nil {
		return nil, nil, err
	}
	if h.Monitor != o.Version {
		json.NewEncoder(c).Encode(request{Quit: true})
		c.Close()
		return nil, nil, fmt.Errorf("%w (%s, this is %s)", ErrVersion, h.Monitor, o.Version)
	}
	return c, h, nil
}

func dial(ctx context.Context, root string, o ClientOptions) (net.Conn, *hello, error) {
	if o.CheckPeer == nil {
		return nil, nil, errors.New("monitor: no peer check")
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	path := filepath.Join(root, SockFile)
	if err := ownSocket(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, ErrNotRunning
		}
		return nil, nil, fmt.Errorf("%w: %v", ErrNotRunning, err)
	}
	addr, release := path, func() {}
	if o.Addr != nil {
		var err error
		if addr, release, err = o.Addr(path); err != nil {
			return nil, nil, err
		}
	}
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "unix", addr)
	release()
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, os.ErrNotExist) {
			return nil, nil, ErrNotRunning // a stale socket, or one just gone
		}
		return nil, nil, fmt.Errorf("connect to the monitor: %w", err)
	}
	if err := o.CheckPeer(c); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("the monitor's socket: %w", err)
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.SetDeadline(deadline)
	var h hello
	if err := json.NewDecoder(c).Decode(&h); err != nil || h.PID == 0 {
		c.Close()
		return nil, nil, fmt.Errorf("the monitor did not say hello: %v", err)
	}
	return c, &h, nil
}

// offFor is how long a reason in OffFile keeps the CLI from starting a
// monitor again.
const offFor = time.Hour

// OffReason returns why the last monitor could not run on the vault at
// root, if that was less than an hour ago.
func OffReason(root string) (string, bool) {
	p := filepath.Join(root, OffFile)
	st, err := os.Lstat(p)
	if err != nil || !st.Mode().IsRegular() || time.Since(st.ModTime()) > offFor {
		return "", false
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(data)), true
}

// Start starts a monitor for the vault at root in the background: the
// program exe with args (the CLI's hidden monitor verb), in a session of
// its own, its output discarded. It does not wait for the monitor to be
// ready; one already running keeps the vault (the new one exits).
func Start(root, exe string, args []string) error {
	if !Supported() {
		return errors.New(unsupported(root))
	}
	cmd := exec.Command(exe, args...)
	cmd.Args[0] = "synapse" // the name a test binary runs the CLI by
	cmd.Dir = root
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reaped if this process outlives it
	return nil
}
