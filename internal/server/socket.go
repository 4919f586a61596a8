package server

// The server half of the local socket (package sock holds the protocol
// and the client): it serves a service's operations to CLI verbs and to a
// second serve on the same vault.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/server/sock"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
)

// ---- server ---------------------------------------------------------------

// sockServer serves the socket for a service that holds the store.
type sockServer struct {
	s    *Service
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
func (s *Service) listenSocket(v *vault.Vault) (*sockServer, error) {
	path := v.Abs(sock.File)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	// bound under a temporary name, made owner-only, then renamed into
	// place: a client never finds the socket open to others (it refuses
	// one that is)
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".serve.sock-%d", os.Getpid()))
	os.Remove(tmp)
	addr, release, err := sock.Addr(tmp)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", addr)
	release()
	if err != nil {
		return nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // removed by path in shutdown
	if err := os.Chmod(tmp, 0o600); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		ln.Close()
		os.Remove(tmp)
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
	if err := sock.CheckPeer(c); err != nil {
		ss.s.log.Printf("socket: refused a connection: %v", err)
		return
	}
	lw := &lineWriter{w: c}
	if err := lw.send(sock.Hello{Synapse: ss.s.version, PID: os.Getpid(), Holder: ss.s.holder}); err != nil {
		return
	}
	c.SetReadDeadline(time.Now().Add(sock.ReadRequest))
	var req sock.Request
	if err := json.NewDecoder(io.LimitReader(c, sock.MaxRequest)).Decode(&req); err != nil {
		if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrDeadlineExceeded) {
			lw.send(sock.Reply{Error: &ops.ErrorDetail{Code: errs.Invalid, Message: "bad request on the socket: " + err.Error()}})
		}
		return
	}
	c.SetReadDeadline(time.Time{})
	ss.mu.Lock()
	closing := ss.closing
	ss.mu.Unlock()
	if closing {
		lw.send(sock.Reply{Retry: "shutting down"})
		return
	}
	op := ss.s.lookup(req.Op)
	if op == nil {
		lw.send(sock.Reply{Error: &ops.ErrorDetail{Code: errs.Unavailable, Message: fmt.Sprintf(
			"the running server (synapse %s, pid %d) does not know the operation %q; restart it with this version of synapse", ss.s.version, os.Getpid(), req.Op)}})
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
	if req.Environ != nil {
		// the caller's settings, and only those (sock.NewRequest)
		ctx = ops.WithEnviron(ctx, req.Environ)
	}

	stop := make(chan struct{})
	var beats sync.WaitGroup
	beats.Add(1)
	go func() {
		defer beats.Done()
		t := time.NewTicker(sock.Heartbeat)
		defer t.Stop()
		var seen uint64
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			msg := sock.Reply{Alive: true}
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
		lw.send(sock.Reply{Retry: "shutting down"})
		return
	}
	if err != nil {
		// references kept: the CLI renders the message for its user
		lw.send(sock.Reply{Error: &ops.ErrorDetail{Code: errs.CodeOf(err), Message: errs.Raw(err)}})
		return
	}
	data, err := ops.MarshalJSON(out)
	if err != nil {
		ss.s.log.Printf("%s: encode result: %v", op.Name, err)
		lw.send(sock.Reply{Error: &ops.ErrorDetail{Code: errs.Internal, Message: "internal error: could not encode the result"}})
		return
	}
	lw.send(sock.Reply{Result: data[:len(data)-1], Frontmatter: sock.FrontmatterYAML(out)})
}

// patientKey marks a call that waits for the first index of a vault
// however long that takes, as a CLI verb would without a server.
type patientKey struct{}
