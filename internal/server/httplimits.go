package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synapse-wiki/synapse/errs"
)

// Limits bounds what one HTTP client can hold of the server
// (docs/serving.md#http): slow clients time out before and after the handler; unauthenticated
// requests are answered before their body is read). The defaults are the
// product's; tests shrink them.
type Limits struct {
	// ReadHeader bounds the request line and headers (http.Server's
	// ReadHeaderTimeout); Body bounds reading the body, whoever reads it;
	// Idle bounds a keep-alive connection between requests.
	ReadHeader, Body, Idle time.Duration
	// PerClient caps the open connections of one client address. Past it
	// a connection is still accepted, but answers 503 to every request
	// but /healthz and is closed after one; Overflow caps those
	// connections (all clients together), past which a new connection is
	// closed at once.
	PerClient, Overflow int
	// Grace is how long a shutdown waits for requests in flight before it
	// cancels the reads among them; Stop how long it then waits before it
	// closes every connection.
	Grace, Stop time.Duration
}

var defaultLimits = Limits{
	ReadHeader: 10 * time.Second,
	Body:       30 * time.Second,
	Idle:       120 * time.Second,
	PerClient:  256,
	Overflow:   64,
	Grace:      2 * time.Second,
	Stop:       1 * time.Second,
}

// connLimiter wraps the listener: it counts the open connections of each
// client address, marks those past the cap, and knows every connection so
// that a shutdown can cut off the ones still reading a request.
type connLimiter struct {
	net.Listener
	lim Limits

	mu       sync.Mutex
	perIP    map[string]int
	overflow int
	conns    map[*limitedConn]struct{}
}

func newConnLimiter(ln net.Listener, lim Limits) *connLimiter {
	return &connLimiter{Listener: ln, lim: lim, perIP: map[string]int{}, conns: map[*limitedConn]struct{}{}}
}

// Accept returns the next connection: over the per-client cap it is
// marked (answered 503), over the overflow cap it is closed at once and
// the next one is waited for.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := clientIP(c.RemoteAddr())
		l.mu.Lock()
		over := l.perIP[ip] >= l.lim.PerClient
		if over && l.overflow >= l.lim.Overflow {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.perIP[ip]++
		if over {
			l.overflow++
		}
		lc := &limitedConn{Conn: c, l: l, ip: ip, over: over}
		l.conns[lc] = struct{}{}
		l.mu.Unlock()
		return lc, nil
	}
}

func (l *connLimiter) release(c *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.conns[c]; !ok {
		return
	}
	delete(l.conns, c)
	if l.perIP[c.ip]--; l.perIP[c.ip] <= 0 {
		delete(l.perIP, c.ip)
	}
	if c.over {
		l.overflow--
	}
}

// cutReads makes every connection that is reading a request (its headers,
// or a body) or waiting for the next one fail its read now: a slow client
// cannot hold a shutdown up. Connections whose handler runs are left
// alone.
func (l *connLimiter) cutReads() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	for c := range l.conns {
		if !c.handling.Load() || c.body.Load() {
			_ = c.SetReadDeadline(now)
		}
	}
}

// shutdown stops the server within lim.Grace + lim.Stop whatever is in
// flight: it stops accepting and cuts off the connections still reading a request, again and again
// during the grace while the handlers running finish; then it cancels the
// reads among the handlers left (a write runs to completion: see
// service.call), waits lim.Stop more, and closes every connection.
func (hs *httpServer) shutdown() error {
	stopCutting := make(chan struct{})
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if hs.conns != nil {
				hs.conns.cutReads()
			}
			select {
			case <-stopCutting:
				return
			case <-t.C:
			}
		}
	}()
	defer close(stopCutting)
	ctx, cancel := context.WithTimeout(context.Background(), hs.lim.Grace)
	err := hs.srv.Shutdown(ctx)
	cancel()
	if err == nil {
		return nil
	}
	hs.cancelBase()
	for deadline := time.Now().Add(hs.lim.Stop); hs.active.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := hs.active.Load(); n > 0 {
		hs.log.Printf("http shutdown: closing %d connections with requests still running", n)
	}
	return hs.srv.Close()
}

// open counts the connections open now (tests).
func (l *connLimiter) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

func clientIP(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// limitedConn is one accepted connection.
type limitedConn struct {
	net.Conn
	l        *connLimiter
	ip       string
	over     bool
	body     atomic.Bool // a request body is being read
	handling atomic.Bool // a handler runs for it
	once     sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

type connKey struct{}

// trackConn is http.Server's ConnState hook.
func trackConn(c net.Conn, st http.ConnState) {
	if lc, ok := c.(*limitedConn); ok {
		if st == http.StateClosed || st == http.StateHijacked {
			lc.once.Do(func() { lc.l.release(lc) })
		}
	}
}

// connContext is http.Server's ConnContext hook: handlers find their
// connection in the context.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitedConn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// guard is the outermost handler. It answers a connection over its
// client's cap with 503 (but /healthz), and bounds the request body:
// reading it (by anyone) has a deadline, cleared once the body is read
// whole; and a body the handler left unread — a 401, a 403, a 413 — is not
// read afterwards (net/http would read up to 256 KiB of it with no
// deadline before answering): the answer goes out at once and the
// connection is closed.
func (hs *httpServer) guard(next http.Handler) http.Handler {
	lim := hs.lim
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lc, _ := r.Context().Value(connKey{}).(*limitedConn)
		hs.active.Add(1)
		defer hs.active.Add(-1)
		if lc != nil {
			lc.handling.Store(true)
			defer lc.handling.Store(false)
		}
		rc := http.NewResponseController(w)
		var body *deadlineBody
		if r.Body != nil && r.Body != http.NoBody {
			_ = rc.SetReadDeadline(time.Now().Add(lim.Body))
			body = &deadlineBody{ReadCloser: r.Body, rc: rc, conn: lc}
			if lc != nil {
				lc.body.Store(true)
			}
			r.Body = body
		}
		defer func() {
			if body != nil && !body.done.Load() {
				_ = rc.SetReadDeadline(time.Now())
				if lc != nil {
					lc.body.Store(false)
				}
			}
		}()
		if lc != nil && lc.over {
			w.Header().Set("Connection", "close") // one request per over-cap connection
		}
		if lc != nil && lc.over && r.URL.Path != "/healthz" {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, errs.E(errs.Unavailable,
				"too many connections from %s (at most %d at a time); try again shortly", lc.ip, lim.PerClient))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody clears the read deadline once the body is read whole (the
// connection then waits for the client with no deadline while the handler
// runs, as net/http's own background read does).
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	conn *limitedConn
	done atomic.Bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done.Swap(true) {
		_ = b.rc.SetReadDeadline(time.Time{})
		if b.conn != nil {
			b.conn.body.Store(false)
		}
	}
	return n, err
}
