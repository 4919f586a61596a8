package server

import (
	"container/list"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// MCP sessions of `serve --http` (docs/serving.md#mcp). initialize opens a session and
// answers its id in the Mcp-Session-Id header; every later request carries
// it. DELETE /mcp with the header ends the session. A request without the
// header is 400, one with an id that is not live (never issued, ended,
// expired) is 404, after which a client initializes again. A session
// unused for mcpSessionIdle ends by itself; at most maxMCPSessions are
// live, and when one more is opened the session idle the longest ends to
// make room (a session serving a request is never ended; when all are,
// initialize answers 503).
const (
	maxMCPSessions = 1000
	mcpSessionIdle = 30 * time.Minute
)

// mcpVersionsHTTP are the protocol versions this transport speaks; a
// request whose MCP-Protocol-Version header names another is 400.
var mcpVersionsHTTP = []string{
	mcp.ProtocolVersion20241105, mcp.ProtocolVersion20250326,
	mcp.ProtocolVersion20250618, mcp.ProtocolVersion20251125,
}

// sessionTable holds the live sessions, the idle ones in the order they
// were last used.
type sessionTable struct {
	srv  *mcpserver.MCPServer
	max  int
	ttl  time.Duration
	now  func() time.Time
	mu   sync.Mutex
	byID map[string]*mcpConn
	idle list.List // of *mcpConn, least recently used first
}

func newSessionTable(srv *mcpserver.MCPServer, max int, ttl time.Duration) *sessionTable {
	return &sessionTable{srv: srv, max: max, ttl: ttl, now: time.Now, byID: map[string]*mcpConn{}}
}

// open starts a session, busy until release; nil when every live session
// is busy and the table is full.
func (t *sessionTable) open() *mcpConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expireLocked()
	if len(t.byID) >= t.max {
		front := t.idle.Front()
		if front == nil {
			return nil
		}
		t.endLocked(front.Value.(*mcpConn))
	}
	c := newMCPConn(newSessionID(), t.srv)
	c.busy = 1
	t.byID[c.id] = c
	return c
}

// acquire returns the live session with this id, busy until release, or
// nil.
func (t *sessionTable) acquire(id string) *mcpConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expireLocked()
	c := t.byID[id]
	if c == nil {
		return nil
	}
	if c.idle != nil {
		t.idle.Remove(c.idle)
		c.idle = nil
	}
	c.busy++
	return c
}

// release ends a use of the session.
func (t *sessionTable) release(c *mcpConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c.busy--
	c.lastUsed = t.now()
	if c.busy == 0 && !c.ended {
		c.idle = t.idle.PushBack(c)
	}
}

// end ends the session with this id; false when none is live.
func (t *sessionTable) end(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.byID[id]
	if c == nil {
		return false
	}
	t.endLocked(c)
	return true
}

func (t *sessionTable) endLocked(c *mcpConn) {
	delete(t.byID, c.id)
	c.ended = true
	if c.idle != nil {
		t.idle.Remove(c.idle)
		c.idle = nil
	}
}

// expireLocked ends the sessions idle for longer than ttl.
func (t *sessionTable) expireLocked() {
	cut := t.now().Add(-t.ttl)
	for e := t.idle.Front(); e != nil; e = t.idle.Front() {
		c := e.Value.(*mcpConn)
		if !c.lastUsed.Before(cut) {
			return
		}
		t.endLocked(c)
	}
}

// live counts the live sessions.
func (t *sessionTable) live() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expireLocked()
	return len(t.byID)
}

// newSessionID is 128 random bits in hex (visible ASCII, as the
// specification asks).
func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// mcpHTTP is the streamable HTTP transport at /mcp: POST carries messages,
// DELETE ends a session, GET is 405 (this server sends nothing unasked,
// so it offers no event stream).
type mcpHTTP struct {
	sessions *sessionTable
	log      *log.Logger
}

func (s *Service) newMCPHTTP(readOnly bool) *mcpHTTP {
	return &mcpHTTP{sessions: newSessionTable(s.newMCPServer(readOnly), maxMCPSessions, mcpSessionIdle), log: s.log}
}

const sessionHeader = "Mcp-Session-Id"

func (h *mcpHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "POST, DELETE")
		rpcHTTPError(w, http.StatusMethodNotAllowed, rpcError(nil, rpcInvalidRequest, "%s is not served on /mcp: POST sends messages, DELETE ends a session (this server offers no event stream)", r.Method))
	}
}

func rpcHTTPError(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

func (h *mcpHTTP) post(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		rpcHTTPError(w, http.StatusUnsupportedMediaType, rpcError(nil, rpcInvalidRequest, "POST /mcp takes Content-Type: application/json"))
		return
	}
	if v := r.Header.Get("MCP-Protocol-Version"); v != "" && !slices.Contains(mcpVersionsHTTP, v) {
		rpcHTTPError(w, http.StatusBadRequest, rpcError(nil, rpcInvalidRequest, "unsupported MCP-Protocol-Version %q; this server speaks %s", v, strings.Join(mcpVersionsHTTP, ", ")))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		rpcHTTPError(w, http.StatusBadRequest, rpcError(nil, rpcParseError, "could not read the request body: %v", err))
		return
	}
	var c *mcpConn
	if !isBatch(body) {
		if m, err := parseMsg(body); err == nil && m.Method == string(mcp.MethodInitialize) && m.hasID() {
			if c = h.sessions.open(); c == nil {
				rpcHTTPError(w, http.StatusServiceUnavailable, rpcError(m.ID, rpcInvalidRequest, "too many live MCP sessions (%d), all busy; try again shortly", maxMCPSessions))
				return
			}
			defer h.sessions.release(c)
			resp, _ := c.handle(r.Context(), body)
			if c.negotiated() == "" { // initialize failed: no session
				h.sessions.end(c.id)
			} else {
				w.Header().Set(sessionHeader, c.id)
			}
			writeRPC(w, r, resp, 1)
			return
		}
	}
	id := r.Header.Get(sessionHeader)
	if id == "" {
		rpcHTTPError(w, http.StatusBadRequest, rpcError(nil, rpcInvalidRequest, "missing %s header: send initialize first and pass the session id it answers", sessionHeader))
		return
	}
	if c = h.sessions.acquire(id); c == nil {
		rpcHTTPError(w, http.StatusNotFound, rpcError(nil, rpcInvalidRequest, "no live MCP session %q (ended, expired or never opened); send initialize to open a new one", id))
		return
	}
	defer h.sessions.release(c)
	resp, requests := c.handle(r.Context(), body)
	writeRPC(w, r, resp, requests)
}

// writeRPC answers a POST: the response as JSON; 202 for a message of
// notifications or responses; and for requests that were all cancelled,
// an event stream that ends without a message (their results are never
// sent), or 202 to a client that does not take event streams.
func writeRPC(w http.ResponseWriter, r *http.Request, resp []byte, requests int) {
	switch {
	case resp != nil:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(append(resp, '\n'))
	case requests > 0 && strings.Contains(r.Header.Get("Accept"), "text/event-stream"):
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

func (h *mcpHTTP) delete(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(sessionHeader)
	if id == "" {
		rpcHTTPError(w, http.StatusBadRequest, rpcError(nil, rpcInvalidRequest, "missing %s header: DELETE /mcp ends the session it names", sessionHeader))
		return
	}
	if !h.sessions.end(id) {
		rpcHTTPError(w, http.StatusNotFound, rpcError(nil, rpcInvalidRequest, "no live MCP session %q", id))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
