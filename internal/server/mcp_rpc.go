package server

import (
	"bufio"
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// The MCP transports (stdio here, streamable HTTP in mcp_http.go) are
// synapse's own, over mcp-go's protocol core (MCPServer.HandleMessage):
// mcp-go's transports answer requests before initialize, refuse JSON-RPC
// batches as invalid JSON, answer cancelled requests and keep no real
// sessions. An mcpConn is one MCP session and applies the rules of the
// 2025-03-26, 2025-06-18 and 2025-11-25 specifications that the core does
// not:
//
//   - before initialize only initialize and ping are answered (an error
//     otherwise); initialize comes once and never in a batch;
//   - a JSON-RPC batch is served when the negotiated version has batches
//     (2025-03-26) and refused with -32600 otherwise;
//   - notifications/cancelled cancels the request's context and its result
//     is never sent; a write that has started runs to completion
//     (service.call);
//   - a tools/list cursor (this server issues none) and params that are
//     not an object are -32602;
//   - initialize without a protocol version negotiates the latest.

// JSON-RPC error codes.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcInvalidParams  = -32602
)

// batchVersions are the protocol versions whose transports take JSON-RPC
// batches: 2025-03-26 added them, 2025-06-18 removed them.
var batchVersions = []string{mcp.ProtocolVersion20250326}

// mcpConn is one MCP session. It implements mcp-go's ClientSession, so
// that the core sees the session of each message.
type mcpConn struct {
	id  string
	srv *mcpserver.MCPServer

	mu       sync.Mutex
	version  string              // negotiated by initialize; "" before
	inflight map[string]*rpcCall // requests being served, by id

	// session table bookkeeping (HTTP), guarded by the table's lock
	busy     int           // requests being served
	lastUsed time.Time     // when the last one ended
	ended    bool          // deleted or expired
	idle     *list.Element // in the table's idle list; nil while busy
}

// rpcCall is one request being served.
type rpcCall struct {
	cancel    context.CancelFunc
	cancelled bool
}

func newMCPConn(id string, srv *mcpserver.MCPServer) *mcpConn {
	return &mcpConn{id: id, srv: srv, inflight: map[string]*rpcCall{}}
}

// ClientSession (mcp-go).
func (c *mcpConn) SessionID() string { return c.id }
func (c *mcpConn) Initialize()       {}
func (c *mcpConn) Initialized() bool { return c.negotiated() != "" }

// NotificationChannel is nil: synapse sends no notifications, and mcp-go
// drops what it cannot send.
func (c *mcpConn) NotificationChannel() chan<- mcp.JSONRPCNotification { return nil }

// SetProtocolVersion records the version initialize negotiated (mcp-go
// calls it from its initialize handler).
func (c *mcpConn) SetProtocolVersion(v string) {
	c.mu.Lock()
	c.version = v
	c.mu.Unlock()
}

func (c *mcpConn) negotiated() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// rpcMsg is the envelope of any JSON-RPC message.
type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func (m *rpcMsg) hasID() bool { return len(m.ID) > 0 }

// isBatch tells a JSON-RPC batch (an array) from a single message.
func isBatch(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// rpcError builds an error response; id nil is JSON null.
func rpcError(id json.RawMessage, code int, format string, args ...any) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, fmt.Sprintf(format, args...)}})
	return data
}

// served is the work of serving one accepted transport message: it
// returns the response to send (nil: none) and how many requests the
// message held (a message of notifications holds none). It may run
// concurrently with the messages accepted after it.
type served func() (resp []byte, requests int)

// answered is the work of a message decided at acceptance.
func answered(resp []byte, requests int) served {
	return func() ([]byte, int) { return resp, requests }
}

// handle serves one transport message, a single JSON-RPC message or a
// batch, at once.
func (c *mcpConn) handle(ctx context.Context, body []byte) (resp []byte, requests int) {
	return c.accept(ctx, body)()
}

// accept takes one transport message in arrival order. Everything the
// session's state decides is decided here, against the state at arrival:
// a request before initialize is refused even when initialize, sent after
// it, has been served by the time it would run; a second initialize, a
// batch the negotiated version lacks, a reused request id and a bad cursor
// are refused; notifications (a cancellation) take effect; and each
// request is registered as in flight, so that a cancellation read after
// it finds it. What is left, serving the requests, is the returned work,
// which transports may run concurrently (JSON-RPC allows it).
func (c *mcpConn) accept(ctx context.Context, body []byte) served {
	if !isBatch(body) {
		return c.acceptOne(ctx, body, false)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(body, &elems); err != nil {
		return answered(rpcError(nil, rpcParseError, "parse error: %v", err), 1)
	}
	v := c.negotiated()
	switch {
	case v == "":
		return answered(rpcError(nil, rpcInvalidRequest, "a JSON-RPC batch cannot initialize a session: send initialize alone"), 1)
	case !slices.Contains(batchVersions, v):
		return answered(rpcError(nil, rpcInvalidRequest, "JSON-RPC batches are not part of MCP %s (only %s has them); send one message at a time", v, batchVersions[0]), 1)
	case len(elems) == 0:
		return answered(rpcError(nil, rpcInvalidRequest, "empty batch"), 1)
	}
	work := make([]served, len(elems))
	for i, e := range elems {
		work[i] = c.acceptOne(ctx, e, true) // in order: a cancellation overtakes nothing
	}
	return func() ([]byte, int) {
		out := make([][]byte, len(elems))
		counts := make([]int, len(elems))
		var wg sync.WaitGroup
		for i, w := range work {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i], counts[i] = w()
			}()
		}
		wg.Wait()
		var parts [][]byte
		requests := 0
		for i, r := range out {
			requests += counts[i]
			if r != nil {
				parts = append(parts, r)
			}
		}
		if len(parts) == 0 {
			return nil, requests
		}
		return append(append([]byte("["), bytes.Join(parts, []byte(","))...), ']'), requests
	}
}

func parseMsg(raw []byte) (*rpcMsg, error) {
	var m rpcMsg
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// acceptOne accepts one JSON-RPC message (see accept).
func (c *mcpConn) acceptOne(ctx context.Context, raw []byte, inBatch bool) served {
	m, err := parseMsg(raw)
	if err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || !json.Valid(raw) {
			return answered(rpcError(nil, rpcParseError, "parse error: %v", err), 1)
		}
		return answered(rpcError(nil, rpcInvalidRequest, "not a JSON-RPC message: %v", err), 1)
	}
	if m.JSONRPC != "2.0" {
		return answered(rpcError(m.ID, rpcInvalidRequest, `jsonrpc must be "2.0"`), 1)
	}
	if m.Method == "" {
		if m.hasID() && (m.Result != nil || m.Error != nil) {
			return answered(nil, 0) // a response: this server sends no requests to answer
		}
		return answered(rpcError(m.ID, rpcInvalidRequest, "a request needs a method"), 1)
	}
	if !m.hasID() {
		c.notify(ctx, m, raw)
		return answered(nil, 0)
	}
	if string(m.ID) == "null" || (m.ID[0] != '"' && !isJSONNumber(m.ID)) {
		return answered(rpcError(nil, rpcInvalidRequest, "a request id must be a string or a number"), 1)
	}
	if p := bytes.TrimSpace(m.Params); len(p) > 0 && p[0] != '{' && string(p) != "null" {
		return answered(rpcError(m.ID, rpcInvalidParams, "params must be an object: MCP methods take named parameters"), 1)
	}
	v := c.negotiated()
	switch {
	case m.Method == string(mcp.MethodInitialize) && inBatch:
		return answered(rpcError(m.ID, rpcInvalidRequest, "initialize must not be part of a JSON-RPC batch"), 1)
	case m.Method == string(mcp.MethodInitialize) && v != "":
		return answered(rpcError(m.ID, rpcInvalidRequest, "the session is already initialized (protocol %s)", v), 1)
	case m.Method != string(mcp.MethodInitialize) && m.Method != string(mcp.MethodPing) && v == "":
		return answered(rpcError(m.ID, rpcInvalidRequest, "the session is not initialized: send initialize first"), 1)
	case m.Method == string(mcp.MethodInitialize):
		raw = withProtocolVersion(raw, m)
	case m.Method == string(mcp.MethodToolsList):
		if err := c.checkCursor(m.Params); err != nil {
			return answered(rpcError(m.ID, rpcInvalidParams, "%v", err), 1)
		}
	}
	key := string(m.ID)
	cctx, cancel := context.WithCancel(ctx)
	call := &rpcCall{cancel: cancel}
	c.mu.Lock()
	if _, dup := c.inflight[key]; dup {
		c.mu.Unlock()
		cancel()
		return answered(rpcError(m.ID, rpcInvalidRequest, "request id %s is already in use by a request in progress", key), 1)
	}
	c.inflight[key] = call
	c.mu.Unlock()
	return func() ([]byte, int) {
		defer cancel()
		resp := c.srv.HandleMessage(c.srv.WithContext(cctx, c), raw)
		c.mu.Lock()
		delete(c.inflight, key)
		cancelled := call.cancelled
		c.mu.Unlock()
		if cancelled || resp == nil {
			return nil, 1 // a cancelled request gets no response
		}
		data, err := json.Marshal(resp)
		if err != nil {
			return rpcError(m.ID, -32603, "internal error: could not encode the response"), 1
		}
		return data, 1
	}
}

func isJSONNumber(b []byte) bool {
	var n json.Number
	return json.Unmarshal(b, &n) == nil
}

// notify handles a notification: a cancellation here, the others in the
// core (notifications/initialized and the like need no answer).
func (c *mcpConn) notify(ctx context.Context, m *rpcMsg, raw []byte) {
	if m.Method == string(mcp.MethodNotificationCancelled) {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) != nil || len(p.RequestID) == 0 {
			return
		}
		var key bytes.Buffer
		if json.Compact(&key, p.RequestID) != nil {
			return
		}
		c.mu.Lock()
		if call := c.inflight[key.String()]; call != nil {
			call.cancelled = true
			call.cancel()
		}
		c.mu.Unlock()
		return
	}
	c.srv.HandleMessage(c.srv.WithContext(ctx, c), raw)
}

// checkCursor refuses a tools/list cursor: this server issues none (every
// tool fits on one page), so any cursor given is one it did not issue.
func (c *mcpConn) checkCursor(params json.RawMessage) error {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil || p.Cursor == nil || *p.Cursor == "" {
		return nil
	}
	return fmt.Errorf("invalid cursor %q: this server lists every tool at once and issued no cursor; leave it out", *p.Cursor)
}

// latestVersion is the newest protocol version initialize negotiates.
var latestVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION

// withProtocolVersion gives an initialize request without a protocol
// version the newest this server speaks: the specification has a server
// answer a version it does not support with its latest, and the core
// would answer 2025-03-26 (the default of a request without the HTTP
// version header, which does not apply to initialize).
func withProtocolVersion(raw []byte, m *rpcMsg) []byte {
	var params map[string]json.RawMessage
	if len(m.Params) > 0 && string(m.Params) != "null" && json.Unmarshal(m.Params, &params) != nil {
		return raw
	}
	var v string
	if json.Unmarshal(params["protocolVersion"], &v) == nil && v != "" {
		return raw
	}
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	params["protocolVersion"], _ = json.Marshal(latestVersion)
	var msg map[string]json.RawMessage
	if json.Unmarshal(raw, &msg) != nil {
		return raw
	}
	msg["params"], _ = json.Marshal(params)
	out, err := json.Marshal(msg)
	if err != nil {
		return raw
	}
	return out
}

// maxMessageBytes bounds one stdio message (a line), as maxBodyBytes
// bounds an HTTP body.
const maxMessageBytes = maxBodyBytes

// serveStdio serves every tool (read and write) over stdin and stdout until
// the client closes stdin or ctx ends; either way every request read is
// answered (or, when cancelled, dropped) before it returns. Only JSON-RPC
// goes to stdout, one message per line.
func (s *Service) serveStdio(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	c := newMCPConn("stdio", s.newMCPServer(false))
	var wmu sync.Mutex
	var werr error
	write := func(b []byte) {
		wmu.Lock()
		defer wmu.Unlock()
		if werr == nil {
			_, werr = stdout.Write(append(b, '\n'))
		}
	}
	type line struct {
		b   []byte
		err error
	}
	lines := make(chan line)
	go func() {
		br := bufio.NewReaderSize(stdin, 64<<10)
		for {
			b, err := readLine(br, maxMessageBytes)
			select {
			case lines <- line{b, err}:
			case <-ctx.Done():
				return
			}
			if err != nil && !errors.Is(err, errLineTooLong) {
				return
			}
		}
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		var l line
		select {
		case <-ctx.Done():
			return nil
		case l = <-lines:
		}
		if errors.Is(l.err, errLineTooLong) {
			write(rpcError(nil, rpcInvalidRequest, "message larger than %d bytes", maxMessageBytes))
			continue
		}
		if b := bytes.TrimSpace(l.b); len(b) > 0 {
			work := c.accept(ctx, b) // decided in arrival order
			if servedInline(b) {
				if resp, _ := work(); resp != nil {
					write(resp)
				}
			} else {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if resp, _ := work(); resp != nil {
						write(resp)
					}
				}()
			}
		}
		if l.err == io.EOF {
			return nil
		}
		if l.err != nil {
			return l.err
		}
	}
}

// servedInline tells the messages the read loop serves itself before it
// reads the next: initialize (what follows it is accepted under the
// version it negotiates) and messages with no request to serve
// (notifications take effect in accept already).
func servedInline(b []byte) bool {
	if isBatch(b) {
		return false
	}
	m, err := parseMsg(b)
	return err != nil || !m.hasID() || m.Method == string(mcp.MethodInitialize)
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line of at most max bytes; a longer line is read to
// its end and discarded (errLineTooLong).
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > max {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, errLineTooLong
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return buf, err
	}
}
