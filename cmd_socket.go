package main

// The local socket (SPEC §7 "The CLI keeps working while serve runs"). The
// server that holds a vault's store listens on .synapse/serve.sock (mode
// 0600 in the 0700 .synapse folder; on Linux the peer's uid is checked
// too). A CLI verb, or a second `serve` on the same vault, hands it an
// operation instead of waiting for the store's lock.
//
// The protocol is newline-delimited JSON, one operation per connection:
//
//	server: {"synapse":"0.1.0","pid":123,"holder":"synapse serve --mcp-stdio"}
//	client: {"op":"page.get","input":{"title":"Home"},"environ":["K=V",…],"progress":true,"patient":true}
//	server: {"progress":{"phase":"scan","done":10,"total":99}}   zero or more, one a second
//	server: {"result":{…},"frontmatter":["title: Home\n"]}     or
//	        {"error":{"code":"not_found","message":"…"}}        or
//	        {"retry":"shutting down"}                           (not run; try again)
//
// The result is the JSON every other surface returns. A page's frontmatter
// is YAML whose styles JSON cannot carry, so each one in the result also
// travels as YAML text: a CLI verb answered by a server prints exactly what
// it prints without one.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"sync"
	"syscall"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/gcmode"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/urfave/cli/v2"
)

// sockFile is the server's socket, vault-relative.
const sockFile = vault.StateDir + "/serve.sock"

// Time bounds of the socket. A client never waits on a silent server for
// longer than sockIdle: the server sends a line at least every
// sockHeartbeat while an operation runs, however long it takes.
var (
	sockDialTimeout  = time.Second
	sockHelloTimeout = 2 * time.Second
	sockReadRequest  = 10 * time.Second // server: time to send the request after hello
	sockHeartbeat    = time.Second
	sockIdle         = 30 * time.Second
	// lockWait bounds how long a verb waits for a store that another
	// process holds without a socket (a CLI verb about to finish, a
	// server starting or stopping), polling both every lockPoll.
	lockWait = 2 * time.Second
	lockPoll = 100 * time.Millisecond
)

// maxSockRequest bounds a request line (page content is at most 1 MiB,
// which JSON escaping can grow several times).
const maxSockRequest = 16 << 20

type sockHello struct {
	Synapse string `json:"synapse"`
	PID     int    `json:"pid"`
	Holder  string `json:"holder"`
}

type sockRequest struct {
	Op    string          `json:"op"`
	Input json.RawMessage `json:"input,omitempty"`
	// Environ is the caller's environment (deep-research runs with it).
	Environ []string `json:"environ,omitempty"`
	// Progress asks for the progress of the server's scans while waiting.
	Progress bool `json:"progress,omitempty"`
	// Patient waits for the first index of a new vault however long it
	// takes (a CLI verb would, alone); otherwise firstIndexWait bounds it.
	Patient bool `json:"patient,omitempty"`
}

type sockProgress struct {
	Phase string `json:"phase"`
	Done  int    `json:"done"`
	Total int    `json:"total"`
}

type sockReply struct {
	Progress    *sockProgress    `json:"progress,omitempty"`
	Alive       bool             `json:"alive,omitempty"`
	Result      json.RawMessage  `json:"result,omitempty"`
	Frontmatter []*string        `json:"frontmatter,omitempty"`
	Error       *ops.ErrorDetail `json:"error,omitempty"`
	Retry       string           `json:"retry,omitempty"`
}

// ---- server ---------------------------------------------------------------

// sockServer serves the socket for a service that holds the store.
type sockServer struct {
	s    *service
	ln   net.Listener
	path string

	mu      sync.Mutex
	closing bool
	wg      sync.WaitGroup // connection handlers
	// base is the context of every call: a shutdown cancels it when the
	// calls in flight have had sockGrace (reads stop; writes run to
	// completion, see service.call).
	base       context.Context
	cancelBase context.CancelFunc
}

// sockGrace is how long a shutdown lets the calls in flight finish before
// it cancels the reads among them.
const sockGrace = 2 * time.Second

// listenSocket binds .synapse/serve.sock. The caller holds the store, so
// a socket file already there is a stale one (its server was killed) and
// is replaced.
func (s *service) listenSocket(v *vault.Vault) (*sockServer, error) {
	path := v.Abs(sockFile)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	addr, release, err := sockAddr(path)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", addr)
	release()
	if err != nil {
		return nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // removed by path in shutdown
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.Remove(path)
		return nil, err
	}
	ss := &sockServer{s: s, ln: ln, path: path}
	ss.base, ss.cancelBase = context.WithCancel(context.Background())
	ss.wg.Add(1)
	go ss.accept()
	return ss, nil
}

func (ss *sockServer) accept() {
	defer ss.wg.Done()
	for {
		c, err := ss.ln.Accept()
		if err != nil {
			ss.mu.Lock()
			closing := ss.closing
			ss.mu.Unlock()
			if closing || errors.Is(err, net.ErrClosed) {
				return
			}
			ss.s.log.Printf("socket: accept: %v", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		ss.wg.Add(1)
		go func() {
			defer ss.wg.Done()
			defer c.Close()
			ss.handle(c)
		}()
	}
}

// shutdown stops accepting, removes the socket file and waits (up to
// ctx) for the operations in flight. A connection whose request arrives
// from now on is told to retry: its client finds the store free once this
// server has closed it.
func (ss *sockServer) shutdown(ctx context.Context) {
	ss.mu.Lock()
	ss.closing = true
	ss.mu.Unlock()
	ss.ln.Close()
	if err := os.Remove(ss.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		ss.s.log.Printf("socket: remove %s: %v", ss.path, err)
	}
	done := make(chan struct{})
	go func() { ss.wg.Wait(); close(done) }()
	grace := time.NewTimer(sockGrace)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-grace.C:
	case <-ctx.Done():
	}
	ss.cancelBase()
	select {
	case <-done:
	case <-ctx.Done():
		ss.s.log.Printf("socket: operations still running at shutdown")
	}
}

// lineWriter writes one JSON value a line; heartbeats and the final reply
// come from different goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (lw *lineWriter) send(v any) error {
	data, err := ops.MarshalJSON(v)
	if err != nil {
		return err
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	_, err = lw.w.Write(data)
	return err
}

func (ss *sockServer) handle(c net.Conn) {
	if err := checkPeer(c); err != nil {
		ss.s.log.Printf("socket: refused a connection: %v", err)
		return
	}
	lw := &lineWriter{w: c}
	if err := lw.send(sockHello{Synapse: version, PID: os.Getpid(), Holder: ss.s.holder}); err != nil {
		return
	}
	c.SetReadDeadline(time.Now().Add(sockReadRequest))
	var req sockRequest
	if err := json.NewDecoder(io.LimitReader(c, maxSockRequest)).Decode(&req); err != nil {
		if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrDeadlineExceeded) {
			lw.send(sockReply{Error: &ops.ErrorDetail{Code: errs.Invalid, Message: "bad request on the socket: " + err.Error()}})
		}
		return
	}
	c.SetReadDeadline(time.Time{})
	ss.mu.Lock()
	closing := ss.closing
	ss.mu.Unlock()
	if closing {
		lw.send(sockReply{Retry: "shutting down"})
		return
	}
	op := ss.s.lookup(req.Op)
	if op == nil {
		lw.send(sockReply{Error: &ops.ErrorDetail{Code: errs.Unavailable, Message: fmt.Sprintf(
			"the running server (synapse %s, pid %d) does not know the operation %q; restart it with this version of synapse", version, os.Getpid(), req.Op)}})
		return
	}

	// the client going away cancels a read (a write runs to completion:
	// see service.call)
	ctx, cancel := context.WithCancel(ss.base)
	defer cancel()
	go func() {
		io.Copy(io.Discard, c)
		cancel()
	}()
	if req.Patient {
		ctx = context.WithValue(ctx, patientKey{}, true)
	}
	if len(req.Environ) > 0 {
		ctx = ops.WithEnviron(ctx, req.Environ)
	}

	stop := make(chan struct{})
	var beats sync.WaitGroup
	beats.Add(1)
	go func() {
		defer beats.Done()
		t := time.NewTicker(sockHeartbeat)
		defer t.Stop()
		var seen uint64
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			msg := sockReply{Alive: true}
			if req.Progress {
				if p, seq := ss.s.progress.get(); seq != seen && p.Phase != "" {
					seen, msg.Progress = seq, &p
				}
			}
			if lw.send(msg) != nil {
				return
			}
		}
	}()
	out, err := ss.s.call(ctx, ss.s.envFor(false), op, req.Input)
	close(stop)
	beats.Wait()
	if err != nil && ss.base.Err() != nil && op.Access == ops.Read {
		// cut short by the shutdown: the client runs it again elsewhere
		lw.send(sockReply{Retry: "shutting down"})
		return
	}
	if err != nil {
		// references kept: the CLI renders the message for its user
		lw.send(sockReply{Error: &ops.ErrorDetail{Code: errs.CodeOf(err), Message: errs.Raw(err)}})
		return
	}
	data, err := ops.MarshalJSON(out)
	if err != nil {
		ss.s.log.Printf("%s: encode result: %v", op.Name, err)
		lw.send(sockReply{Error: &ops.ErrorDetail{Code: errs.Internal, Message: "internal error: could not encode the result"}})
		return
	}
	lw.send(sockReply{Result: data[:len(data)-1], Frontmatter: frontmatterYAML(out)})
}

// patientKey marks a call that waits for the first index of a vault
// however long that takes, as a CLI verb would without a server.
type patientKey struct{}

// ---- frontmatter alongside the JSON -----------------------------------------

var frontmatterType = reflect.TypeFor[*markdown.Frontmatter]()

// eachFrontmatter calls fn for every *markdown.Frontmatter reachable from
// v through pointers, structs, slices and arrays, in a fixed order (maps
// are not walked; no result holds frontmatter in a map).
func eachFrontmatter(v reflect.Value, fn func(fm reflect.Value)) {
	switch {
	case v.Type() == frontmatterType:
		fn(v)
	case v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface:
		if !v.IsNil() {
			eachFrontmatter(v.Elem(), fn)
		}
	case v.Kind() == reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				eachFrontmatter(v.Field(i), fn)
			}
		}
	case v.Kind() == reflect.Slice || v.Kind() == reflect.Array:
		for i := 0; i < v.Len(); i++ {
			eachFrontmatter(v.Index(i), fn)
		}
	}
}

// frontmatterYAML is the YAML of each frontmatter in out (nil for a nil
// one), in eachFrontmatter's order.
func frontmatterYAML(out any) []*string {
	if out == nil {
		return nil
	}
	var list []*string
	eachFrontmatter(reflect.ValueOf(out), func(fm reflect.Value) {
		f := fm.Interface().(*markdown.Frontmatter)
		if f == nil {
			list = append(list, nil)
			return
		}
		y, _ := f.YAML()
		list = append(list, &y)
	})
	return list
}

// restoreFrontmatter puts the YAML sent alongside a result back into the
// frontmatters decoded from its JSON.
func restoreFrontmatter(out any, list []*string) error {
	i := 0
	var err error
	eachFrontmatter(reflect.ValueOf(out), func(fm reflect.Value) {
		if i >= len(list) || err != nil {
			i++
			return
		}
		if y := list[i]; y != nil && fm.CanSet() {
			// kept, not parsed: a page's frontmatter that is not valid
			// YAML travels as its text (Err set), as in-process
			fm.Set(reflect.ValueOf(markdown.KeepFrontmatter(*y)))
		}
		i++
	})
	return err
}

// ---- client ---------------------------------------------------------------

var (
	// errNoServer: no server answers on the socket (no socket file, or a
	// stale one left by a killed server).
	errNoServer = errors.New("no server is running")
	// errServerRetry: the server declined the operation without running
	// it (it is stopping).
	errServerRetry = errors.New("the server is stopping")
	// errServerGone: the connection ended after the request was sent and
	// before the answer; the operation may or may not have run.
	errServerGone = errors.New("the server stopped before answering")
)

// sockConn is a connection to a running server, after its hello.
type sockConn struct {
	c     net.Conn
	dec   *json.Decoder
	hello sockHello
}

// dialServer connects to the server that holds v's store. Every failure
// wraps errNoServer; one that says more than "nothing listens" (a server
// that does not say hello in time) says so in its message.
func dialServer(v *vault.Vault) (*sockConn, error) {
	path := v.Abs(sockFile)
	if _, err := os.Stat(path); err != nil {
		return nil, errNoServer
	}
	addr, release, err := sockAddr(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoServer, err)
	}
	c, err := net.DialTimeout("unix", addr, sockDialTimeout)
	release()
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, os.ErrNotExist) {
			return nil, errNoServer // a stale socket, or the server just left
		}
		return nil, fmt.Errorf("%w: connect to %s: %v", errNoServer, sockFile, err)
	}
	sc := &sockConn{c: c, dec: json.NewDecoder(c)}
	c.SetReadDeadline(time.Now().Add(sockHelloTimeout))
	if err := sc.dec.Decode(&sc.hello); err != nil || sc.hello.PID == 0 {
		c.Close()
		if err == nil || errors.Is(err, io.EOF) {
			// closed at once: a server refusing this user, or stopping
			return nil, fmt.Errorf("%w: the server on %s closed the connection", errNoServer, sockFile)
		}
		return nil, fmt.Errorf("%w: the server on %s did not answer within %v", errNoServer, sockFile, sockHelloTimeout)
	}
	return sc, nil
}

func (sc *sockConn) close() { sc.c.Close() }

// call sends one request and waits for its answer, passing progress lines
// to progress (may be nil). A domain error comes back as an *errs.Error;
// errServerRetry and errServerGone say the server did not answer.
func (sc *sockConn) call(ctx context.Context, req sockRequest, progress func(sockProgress)) (*sockReply, error) {
	stop := context.AfterFunc(ctx, func() { sc.c.Close() })
	defer stop()
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	sc.c.SetWriteDeadline(time.Now().Add(sockIdle))
	if _, err := sc.c.Write(append(data, '\n')); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errServerRetry // nothing was read: it cannot have run
	}
	for {
		sc.c.SetReadDeadline(time.Now().Add(sockIdle))
		var r sockReply
		if err := sc.dec.Decode(&r); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w: %v", errServerGone, err)
		}
		switch {
		case r.Retry != "":
			return nil, errServerRetry
		case r.Error != nil:
			return nil, errs.E(r.Error.Code, "%s", r.Error.Message)
		case r.Result != nil:
			return &r, nil
		case r.Progress != nil && progress != nil:
			progress(*r.Progress)
		}
	}
}

// ---- the CLI beside a server ------------------------------------------------

// invokeVerb runs a CLI verb's operation: handed to the server that holds
// the vault when one answers on its socket, else in this process. While
// another process holds the store without a socket (a CLI verb, a server
// starting or stopping) it polls both for up to lockWait, then fails
// naming the holder. It never waits on the lock alone.
func invokeVerb(c *cli.Context, v *vault.Vault, op *ops.Op, raw []byte, o *output) (any, error) {
	in, err := op.Decode(raw)
	if err != nil {
		return nil, err
	}
	ctx := c.Context
	deadline := time.Now().Add(lockWait)
	var why error // why the socket did not take the operation, if worth saying
	for {
		if !op.Local {
			out, err := forwardVerb(c, v, op, raw, o)
			switch {
			case err == nil:
				return out, nil
			case ctx.Err() != nil:
				return nil, interrupted(op, err)
			case errors.Is(err, errNoServer), errors.Is(err, errServerRetry),
				errors.Is(err, errServerGone) && !op.Writes(in):
				// not run (or a read that may simply be asked again):
				// look for the store, or the next server
				if !errors.Is(err, errServerRetry) && err != errNoServer {
					why = err
				}
			case errors.Is(err, errServerGone):
				return nil, errs.Wrap(errs.Unavailable, err, "the server holding the vault stopped while running `synapse %s`; it may or may not have taken effect, check before running it again", op.CLI)
			default:
				return nil, err
			}
		}
		if op.Scans || op.Rescans || op.Concurrent {
			gcmode.Long() // reindex, rescan, lint and embed work through the vault
		}
		e, err := ops.OpenEnv(ctx, v, ops.OpenOptions{
			ReadOnly: !op.Writes(in) && !op.Rescans,
			// lint rescans first, but answers on a read-only mount
			ReadOnlyFallback: op.Rescans && !op.Writes(in),
			Timeout:          lockPoll,
			Holder:           "synapse " + op.CLI,
			Progress:         o.progress(),
			Notify:           o.scanNote,
			NoInitialScan:    op.Scans,
			Detachable:       true, // this process runs one verb (ops.OpenOptions)
			// files changed by hand are indexed first (no server watches)
			Fresh: !op.Scans && !op.Rescans,
		})
		if err == nil {
			defer e.Close()
			run := ctx
			if op.Writes(in) && !op.Scans && !op.Concurrent {
				// a write that has started runs to completion, as on a
				// server (SIGINT and SIGTERM stop reads and scans at once,
				// and embed, which commits as it goes and resumes)
				run = context.WithoutCancel(ctx)
			}
			out, err := op.Run(run, e, in)
			o.endProgress()
			if err != nil && ctx.Err() != nil {
				err = interrupted(op, err)
			}
			return out, err
		}
		if !errors.Is(err, store.ErrLocked) || time.Now().After(deadline) || ctx.Err() != nil {
			return nil, lockedBecause(err, why)
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

// lockedBecause adds to a held-store error why the holder's socket did not
// take the operation.
func lockedBecause(err, why error) error {
	if why == nil || !errors.Is(err, store.ErrLocked) {
		return err
	}
	return errs.Wrap(errs.Unavailable, err, "%s (%s)", errs.Message(err), trimSentinel(why))
}

// trimSentinel is an error's message without its sentinel prefix.
func trimSentinel(err error) string {
	msg := err.Error()
	for _, s := range []error{errNoServer, errServerGone} {
		if p := s.Error() + ": "; len(msg) > len(p) && msg[:len(p)] == p {
			return msg[len(p):]
		}
	}
	return msg
}

// forwardVerb hands op to the server holding v and returns its result in
// the form runOp prints: the server's JSON as is for --json (and for verbs
// without a renderer), else the typed result.
func forwardVerb(c *cli.Context, v *vault.Vault, op *ops.Op, raw []byte, o *output) (any, error) {
	sc, err := dialServer(v)
	if err != nil {
		return nil, err
	}
	defer sc.close()
	req := sockRequest{Op: op.Name, Input: raw, Environ: os.Environ(), Patient: true}
	var progress func(sockProgress)
	if draw := o.progress(); draw != nil {
		req.Progress = true
		progress = func(p sockProgress) { draw(p.Phase, p.Done, p.Total) }
	}
	r, err := sc.call(c.Context, req, progress)
	o.endProgress()
	if err != nil {
		return nil, err
	}
	if globalsOf(c).json || renderers[op.Name] == nil {
		return json.RawMessage(r.Result), nil
	}
	out := reflect.New(op.Out).Interface()
	if err := json.Unmarshal(r.Result, out); err != nil {
		return nil, errs.Wrap(errs.Internal, err, "decode the server's answer: %v", err)
	}
	if err := restoreFrontmatter(out, r.Frontmatter); err != nil {
		return nil, errs.Wrap(errs.Internal, err, "decode the server's answer: %v", err)
	}
	return out, nil
}
