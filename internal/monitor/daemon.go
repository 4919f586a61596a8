package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synapse-wiki/synapse/vault"
)

// Files of the monitor, vault-relative.
const (
	SockFile = vault.StateDir + "/monitor.sock"
	LockFile = vault.StateDir + "/monitor.lock"
	OffFile  = vault.StateDir + "/monitor.off"
)

// DefaultIdle is how long a monitor waits for a question before it exits.
const DefaultIdle = 10 * time.Minute

// Time bounds of the monitor's side of a connection.
var (
	connDeadline = 5 * time.Second // a whole connection, hello to answer
	flushTimeout = 2 * time.Second // a cookie's event, once created
)

// A verb run for a client (Options.Serve): past opTimeout its context
// ends; the connection is cut at opDeadline whatever happens.
const (
	opTimeout  = 15 * time.Second
	opDeadline = 20 * time.Second
)

// maxOps bounds the verbs a monitor runs at once: more are declined
// (their clients run them themselves).
const maxOps = 2

// ErrRunning says another monitor already watches the vault.
var ErrRunning = errors.New("a monitor already watches this vault")

// Options tune Run.
type Options struct {
	// Version is the synapse version, sent in the hello: a CLI of another
	// version stops this monitor and starts its own.
	Version string
	// Idle is how long the monitor waits for a question before it exits
	// (DefaultIdle when zero).
	Idle time.Duration
	// CheckPeer refuses a connection from another user (required).
	CheckPeer func(net.Conn) error
	// Addr returns a socket address for a socket file's path (paths too
	// long for sun_path); nil uses the path.
	Addr func(path string) (addr string, release func(), err error)
	// Log receives what the monitor does (nil: nothing).
	Log *log.Logger
	// Serve, when set, answers a request to run a read-only verb (AskOp):
	// it gets the request as the client sent it and the monitor's view of
	// the vault, after the flush that makes that view current, and returns
	// the verb's reply, or why it declines (the client then runs the verb
	// itself). It must not hold anything of the vault once it returns, and
	// must give up when ctx ends.
	Serve func(ctx context.Context, req json.RawMessage, v View) (reply json.RawMessage, declined string)
}

// View is what a Serve handler knows of the monitor.
type View struct{ d *daemon }

// Since is the change log's answer to "what changed since token" (as
// Ask's): the token for now, the paths changed after token, or full when
// it cannot say. It is current to the request: every change finished
// before the request came is in it.
func (v View) Since(token string) (tok string, paths []string, full bool) {
	return v.d.log.since(token)
}

// Answered is how many verbs this monitor answered before this one.
func (v View) Answered() int { return int(v.d.answered.Load()) }

// PID is the monitor's process.
func (v View) PID() int { return v.d.hello.PID }

// hello is the monitor's first line on every connection.
type hello struct {
	Monitor  string    `json:"monitor"` // the synapse version
	PID      int       `json:"pid"`
	Instance string    `json:"instance"`
	Started  time.Time `json:"started"`
}

// request is the one question of a connection.
type request struct {
	Since string `json:"since,omitempty"`
	// Status asks for the number of folders watched as well.
	Status bool `json:"status,omitempty"`
	// Quit asks the monitor to exit (a CLI of another version, serve).
	Quit bool `json:"quit,omitempty"`
	// Op asks the monitor to run a read-only verb (AskOp): it is passed
	// to Options.Serve as is.
	Op json.RawMessage `json:"op,omitempty"`
}

// Run runs the monitor of the vault at root until it has had no question
// for o.Idle, ctx ends, it is asked to quit, or it cannot go on (the
// vault or its socket went away, a folder could not be watched). It
// returns ErrRunning when another monitor holds the vault. When the
// monitor cannot watch this vault at all, the reason is also written to
// OffFile.
func Run(ctx context.Context, root string, o Options) error {
	if o.CheckPeer == nil {
		return errors.New("monitor: no peer check")
	}
	if o.Idle <= 0 {
		o.Idle = DefaultIdle
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			o.Log.Printf(format, args...)
		}
	}
	if why := unsupported(root); why != "" {
		writeOff(root, why)
		return errors.New(why)
	}
	unlock, err := lock(filepath.Join(root, LockFile))
	if err != nil {
		return err
	}
	defer unlock()
	changes := newChangeLog()
	w, err := newWatcher(root, changes)
	if err != nil {
		writeOff(root, err.Error())
		return err
	}
	ln, ino, err := listen(root, o.Addr)
	if err != nil {
		w.fsw.Close()
		return err
	}
	os.Remove(filepath.Join(root, OffFile))
	w.sock = ino
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go w.run(ctx)
	d := &daemon{w: w, log: changes, o: o, ctx: ctx, cancel: cancel, ops: make(chan struct{}, maxOps),
		hello: hello{Monitor: o.Version, PID: os.Getpid(), Instance: changes.instance, Started: time.Now().UTC()}}
	d.last.Store(time.Now().UnixNano())
	logf("monitor: watching %s (%d folders), pid %d", root, w.folders(), os.Getpid())
	var conns sync.WaitGroup
	go d.accept(ln, &conns)
	why := d.wait(ctx, root, ino)
	ln.Close()
	if same, _ := sameFile(filepath.Join(root, SockFile), ino); same {
		os.Remove(filepath.Join(root, SockFile))
	}
	cancel()
	conns.Wait()
	<-w.stopped
	logf("monitor: exits: %s", why)
	return nil
}

// daemon is a running monitor's connection side.
type daemon struct {
	w      *watcher
	log    *changeLog
	o      Options
	hello  hello
	ctx    context.Context // ends when the monitor stops (a verb it runs stops too)
	cancel context.CancelFunc
	last   atomic.Int64 // when the last question came, UnixNano
	quit   atomic.Bool
	// ops holds a token for each verb running (Options.Serve); answered
	// counts the verbs answered
	ops      chan struct{}
	answered atomic.Int64
}

// wait returns why the monitor stops: idle, asked to quit, its socket
// replaced or removed, ctx done, or the watcher stopped.
func (d *daemon) wait(ctx context.Context, root string, ino uint64) string {
	tick := time.NewTicker(min(d.o.Idle/4, 5*time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if d.quit.Load() {
				return "asked to quit"
			}
			return "stopped"
		case <-d.w.stopped:
			if errors.As(d.w.why, new(cannotWatch)) {
				writeOff(root, d.w.why.Error())
			}
			return fmt.Sprintf("the watch ended: %v", d.w.why)
		case <-tick.C:
		}
		if time.Since(time.Unix(0, d.last.Load())) >= d.o.Idle {
			return fmt.Sprintf("no question for %v", d.o.Idle)
		}
		if same, err := sameFile(filepath.Join(root, SockFile), ino); !same {
			return fmt.Sprintf("its socket was removed or replaced (%v)", err)
		}
	}
}

func (d *daemon) accept(ln net.Listener, conns *sync.WaitGroup) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer c.Close()
			d.serve(c)
		}()
	}
}

// serve answers one connection: hello, one question, one answer.
func (d *daemon) serve(c net.Conn) {
	if d.o.CheckPeer(c) != nil {
		return
	}
	c.SetDeadline(time.Now().Add(connDeadline))
	enc := json.NewEncoder(c)
	if enc.Encode(d.hello) != nil {
		return
	}
	var req request
	if err := json.NewDecoder(io.LimitReader(c, 64<<10)).Decode(&req); err != nil {
		return
	}
	if req.Quit {
		d.quit.Store(true)
		enc.Encode(Answer{})
		d.cancel()
		return
	}
	d.last.Store(time.Now().UnixNano())
	if req.Op != nil {
		c.SetDeadline(time.Now().Add(opDeadline))
		enc.Encode(d.runOp(req.Op))
		return
	}
	var a Answer
	if err := d.w.flush(context.Background(), flushTimeout); err != nil {
		a.Error = err.Error()
	} else {
		a.Token, a.Paths, a.Full = d.log.since(req.Since)
	}
	if req.Status {
		a.Folders = d.w.folders()
	}
	enc.Encode(a)
}

// runOp answers a request to run a verb: declined when the monitor
// serves none, runs too many already or cannot make its view current;
// else Options.Serve's reply.
func (d *daemon) runOp(op json.RawMessage) Answer {
	if d.o.Serve == nil {
		return Answer{Declined: "this monitor runs no verbs"}
	}
	select {
	case d.ops <- struct{}{}:
		defer func() { <-d.ops }()
	default:
		return Answer{Declined: "the monitor is busy"}
	}
	ctx, cancel := context.WithTimeout(d.ctx, opTimeout)
	defer cancel()
	if err := d.w.flush(ctx, flushTimeout); err != nil {
		return Answer{Declined: err.Error()}
	}
	reply, declined := d.o.Serve(ctx, op, View{d})
	if declined != "" {
		return Answer{Declined: declined}
	}
	d.answered.Add(1)
	return Answer{Reply: reply}
}

// listen binds the socket (a stale one, left by a monitor that was
// killed, is replaced: the caller holds the lock) and returns its inode.
func listen(root string, addrOf func(string) (string, func(), error)) (net.Listener, uint64, error) {
	path := filepath.Join(root, SockFile)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, 0, fmt.Errorf("remove stale socket: %w", err)
	}
	addr, release := path, func() {}
	if addrOf != nil {
		var err error
		if addr, release, err = addrOf(path); err != nil {
			return nil, 0, err
		}
	}
	ln, err := net.Listen("unix", addr)
	release()
	if err != nil {
		return nil, 0, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // removed by path, if still ours
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, 0, err
	}
	ino, err := inode(path)
	if err != nil {
		ln.Close()
		return nil, 0, err
	}
	return ln, ino, nil
}

// sameFile reports whether path is still the file of inode ino.
func sameFile(path string, ino uint64) (bool, error) {
	n, err := inode(path)
	if err != nil {
		return false, err
	}
	return n == ino, nil
}

// writeOff records why the monitor cannot run on this vault.
func writeOff(root, why string) {
	p := filepath.Join(root, OffFile)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(why+"\n"), 0o600); err == nil {
		if os.Rename(tmp, p) != nil {
			os.Remove(tmp)
		}
	}
}
