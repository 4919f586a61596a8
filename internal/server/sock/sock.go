// Package sock is the local socket's protocol: how a CLI verb, or a second
// `serve` on the same vault, hands an operation to the server that holds
// the vault's store instead of waiting for the store's lock. The server
// listens on .synapse/serve.sock (mode 0600 in the 0700 .synapse folder; on
// Linux the peer's uid is checked too). This package holds the wire types
// and the client; the server half is package server.
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
package sock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// File is the server's socket, vault-relative.
const File = vault.StateDir + "/serve.sock"

// Time bounds of the socket. A client never waits on a silent server for
// longer than Idle: the server sends a line at least every Heartbeat while
// an operation runs, however long it takes. Tests shrink them.
var (
	DialTimeout  = time.Second
	HelloTimeout = 2 * time.Second
	ReadRequest  = 10 * time.Second // server: time to send the request after hello
	Heartbeat    = time.Second
	Idle         = 30 * time.Second
	// LockWait bounds how long a verb waits for a store that another
	// process holds without a socket (a CLI verb about to finish, a
	// server starting or stopping), polling both every LockPoll.
	LockWait = 2 * time.Second
	LockPoll = 100 * time.Millisecond
)

// MaxRequest bounds a request line (page content is at most 1 MiB, which
// JSON escaping can grow several times).
const MaxRequest = 16 << 20

// Hello is the server's first line on every connection.
type Hello struct {
	Synapse string `json:"synapse"`
	PID     int    `json:"pid"`
	Holder  string `json:"holder"`
}

// Request is one operation handed to the server.
type Request struct {
	Op    string          `json:"op"`
	Input json.RawMessage `json:"input,omitempty"`
	// Environ is what of the caller's environment the operation needs
	// (ops.ForwardEnviron); the server reads the caller's settings from
	// it and from nothing else, so an empty list is sent as [].
	Environ []string `json:"environ"`
	// Progress asks for the progress of the server's scans while waiting.
	Progress bool `json:"progress,omitempty"`
	// Patient waits for the first index of a new vault however long it
	// takes (a CLI verb would, alone); otherwise the server bounds it.
	Patient bool `json:"patient,omitempty"`
}

// NewRequest is the request that runs op on input as this process would:
// the one place that decides what of the caller's environment travels
// with it — synapse's own settings and the variable keyVar names as the
// embeddings key, or all of it for an operation that runs the user's
// research command (ops.ForwardEnviron).
func NewRequest(op *ops.Op, input []byte, keyVar string) Request {
	return Request{Op: op.Name, Input: input, Environ: ops.ForwardEnviron(op, os.Environ(), keyVar)}
}

// Progress is the progress of a scan the server runs.
type Progress struct {
	Phase string `json:"phase"`
	Done  int    `json:"done"`
	Total int    `json:"total"`
}

// Reply is one line the server sends after the request: a heartbeat
// (Alive, maybe with Progress) or the final answer (Result, Error or
// Retry).
type Reply struct {
	Progress    *Progress        `json:"progress,omitempty"`
	Alive       bool             `json:"alive,omitempty"`
	Result      json.RawMessage  `json:"result,omitempty"`
	Frontmatter []*string        `json:"frontmatter,omitempty"`
	Error       *ops.ErrorDetail `json:"error,omitempty"`
	Retry       string           `json:"retry,omitempty"`
}

var (
	// ErrNoServer: no server answers on the socket (no socket file, or a
	// stale one left by a killed server).
	ErrNoServer = errors.New("no server is running")
	// ErrRetry: the server declined the operation without running it (it
	// is stopping).
	ErrRetry = errors.New("the server is stopping")
	// ErrGone: the connection ended after the request was sent and before
	// the answer; the operation may or may not have run.
	ErrGone = errors.New("the server stopped before answering")
	// ErrUnsafe: the socket is not this user's server's (a symlink, a file
	// another user owns, another user listening): nothing was sent. It
	// comes wrapped in ErrNoServer, so the verb runs in its own process
	// when it can.
	ErrUnsafe = errors.New("not this user's server")
)

// UnsafeError is the error of a socket that fails a check: it matches
// ErrUnsafe and ErrNoServer (errors.Is).
type UnsafeError struct{ Why string }

func (e *UnsafeError) Error() string {
	return "not using " + File + ": it " + e.Why + ", so nothing was sent to it"
}

// Is makes an UnsafeError match ErrUnsafe and ErrNoServer.
func (e *UnsafeError) Is(target error) bool { return target == ErrUnsafe || target == ErrNoServer }

func unsafe(why string) error { return &UnsafeError{Why: why} }

// checkFile says why the socket file st (from Lstat) is not one to
// connect to ("" when it is): a vault arrives from anywhere, and its
// serve.sock may be a symlink to someone's listener, or a socket another
// user made.
func checkFile(path string, st os.FileInfo) string {
	switch {
	case st.Mode()&os.ModeSymlink != 0:
		to, _ := os.Readlink(path)
		return fmt.Sprintf("is a symlink (to %s)", to)
	case st.Mode().Type() != os.ModeSocket:
		return fmt.Sprintf("is not a socket (%s)", st.Mode().Type())
	}
	if uid, ok := fileOwner(st); ok && uid != os.Getuid() {
		return fmt.Sprintf("belongs to uid %d, not to you (uid %d)", uid, os.Getuid())
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Sprintf("is open to other users (mode %04o)", perm)
	}
	return ""
}

// Conn is a connection to a running server, after its hello.
type Conn struct {
	c     net.Conn
	dec   *json.Decoder
	hello Hello
}

// Dial connects to the server that holds v's store, after checking that
// it is this user's: the socket file is a socket, not a symlink, owned by
// this user and closed to others, and (where the system tells) the
// process listening runs as this user — else ErrUnsafe, before a byte is
// sent. Every failure wraps ErrNoServer; one that says more than "nothing
// listens" (a server that does not say hello in time) says so in its
// message.
func Dial(v *vault.Vault) (*Conn, error) {
	path := v.Abs(File)
	st, err := os.Lstat(path)
	if err != nil {
		return nil, ErrNoServer
	}
	if why := checkFile(path, st); why != "" {
		return nil, unsafe(why)
	}
	addr, release, err := Addr(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoServer, err)
	}
	c, err := net.DialTimeout("unix", addr, DialTimeout)
	release()
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, os.ErrNotExist) {
			return nil, ErrNoServer // a stale socket, or the server just left
		}
		return nil, fmt.Errorf("%w: connect to %s: %v", ErrNoServer, File, err)
	}
	if err := CheckPeer(c); err != nil {
		c.Close()
		return nil, unsafe("is served by another user (" + err.Error() + ")")
	}
	sc := &Conn{c: c, dec: json.NewDecoder(c)}
	c.SetReadDeadline(time.Now().Add(HelloTimeout))
	if err := sc.dec.Decode(&sc.hello); err != nil || sc.hello.PID == 0 {
		c.Close()
		if err == nil || errors.Is(err, io.EOF) {
			// closed at once: a server refusing this user, or stopping
			return nil, fmt.Errorf("%w: the server on %s closed the connection", ErrNoServer, File)
		}
		return nil, fmt.Errorf("%w: the server on %s did not answer within %v", ErrNoServer, File, HelloTimeout)
	}
	return sc, nil
}

// Hello is what the server said when the connection opened.
func (sc *Conn) Hello() Hello { return sc.hello }

// Close closes the connection.
func (sc *Conn) Close() { sc.c.Close() }

// Call sends one request and waits for its answer, passing progress lines
// to progress (may be nil). A domain error comes back as an *errs.Error;
// ErrRetry and ErrGone say the server did not answer.
func (sc *Conn) Call(ctx context.Context, req Request, progress func(Progress)) (*Reply, error) {
	stop := context.AfterFunc(ctx, func() { sc.c.Close() })
	defer stop()
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	sc.c.SetWriteDeadline(time.Now().Add(Idle))
	if _, err := sc.c.Write(append(data, '\n')); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, ErrRetry // nothing was read: it cannot have run
	}
	for {
		sc.c.SetReadDeadline(time.Now().Add(Idle))
		var r Reply
		if err := sc.dec.Decode(&r); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w: %v", ErrGone, err)
		}
		switch {
		case r.Retry != "":
			return nil, ErrRetry
		case r.Error != nil:
			return nil, errs.E(r.Error.Code, "%s", r.Error.Message)
		case r.Result != nil:
			return &r, nil
		case r.Progress != nil && progress != nil:
			progress(*r.Progress)
		}
	}
}

// LockedBecause adds to a held-store error why the holder's socket did not
// take the operation.
func LockedBecause(err, why error) error {
	if why == nil || !errors.Is(err, store.ErrLocked) {
		return err
	}
	return errs.Wrap(errs.Unavailable, err, "%s (%s)", errs.Message(err), trimSentinel(why))
}

// trimSentinel is an error's message without its sentinel prefix.
func trimSentinel(err error) string {
	msg := err.Error()
	for _, s := range []error{ErrNoServer, ErrGone} {
		if p := s.Error() + ": "; len(msg) > len(p) && msg[:len(p)] == p {
			return msg[len(p):]
		}
	}
	return msg
}
