package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/server/servertest"
)

// limitServer serves the full HTTP stack on a loopback port through the
// real listener (connection caps included), with lim.
func limitServer(t *testing.T, lim Limits) (*httpServer, string) {
	hs, addr, _ := limitServerRows(t, lim)
	return hs, addr
}

func limitServerRows(t *testing.T, lim Limits) (*httpServer, string, *testRows) {
	t.Helper()
	tr := newTestRows()
	s, _ := newTestService(t, tr.list)
	hs := s.newHTTPServer(Config{HTTP: true, Write: true, Limits: &lim}, testToken)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs.listen(ln)
	go hs.serve()
	t.Cleanup(func() { hs.shutdown() })
	return hs, ln.Addr().String(), tr
}

// raw opens a TCP connection and writes req.
func raw(t *testing.T, addr, req string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if req != "" {
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// answer reads one response from c and then waits for the connection to
// be closed, both within bound (a hang detector: main never answers).
func answer(t *testing.T, c net.Conn, bound time.Duration) (status int, closed bool) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(bound))
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer within %s: %v", bound, err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	_, err = br.ReadByte()
	return res.StatusCode, err == io.EOF
}

const wantQuick = 10 * time.Second

// A slow body without a token is answered 401 before it is read, and the
// connection is closed (main read the body with no deadline first).
func TestHTTP_SlowBodyWithoutToken(t *testing.T) {
	_, addr := limitServer(t, defaultLimits)
	for _, path := range []string{"/status", "/pages/X", "/mcp"} {
		c := raw(t, addr, "POST "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"a\":")
		status, closed := answer(t, c, wantQuick)
		if status != http.StatusUnauthorized || !closed {
			t.Errorf("%s: status %d, closed %v", path, status, closed)
		}
	}
}

// An authenticated body sent too slowly, and headers sent too slowly, are
// cut off at their deadlines.
func TestHTTP_SlowClientsTimeOut(t *testing.T) {
	lim := defaultLimits
	lim.Body, lim.ReadHeader = 300*time.Millisecond, 300*time.Millisecond
	_, addr := limitServer(t, lim)
	c := raw(t, addr, "POST /bulk HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+testToken+
		"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"ids\":")
	status, closed := answer(t, c, wantQuick)
	if status != http.StatusBadRequest || !closed {
		t.Errorf("slow body: status %d, closed %v", status, closed)
	}
	// a GET with a body the route never reads: answered, not drained
	c = raw(t, addr, "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+testToken+
		"\r\nContent-Length: 100000\r\n\r\nxx")
	if status, closed := answer(t, c, wantQuick); status != http.StatusOK || !closed {
		t.Errorf("unread body: status %d, closed %v", status, closed)
	}
	c = raw(t, addr, "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	c.SetReadDeadline(time.Now().Add(wantQuick))
	if n, err := c.Read(make([]byte, 1)); err == nil && n > 0 {
		// net/http may answer 408 before closing
	} else if err != nil && err != io.EOF && !strings.Contains(err.Error(), "reset") {
		t.Errorf("slow headers: %v", err)
	}
}

// One client address holds at most PerClient connections; past it
// requests are answered 503 and /healthz still works; past the overflow
// cap a connection is closed at once. When the client lets go, it is
// served again.
func TestHTTP_PerClientCap(t *testing.T) {
	lim := defaultLimits
	lim.PerClient, lim.Overflow = 4, 2
	lim.ReadHeader = time.Minute // the held connections stay for the whole test
	hs, addr := limitServer(t, lim)
	var hold []net.Conn
	for i := 0; i < lim.PerClient; i++ {
		hold = append(hold, raw(t, addr, "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n")) // headers never end
	}
	servertest.Eventually(t, "the held connections", func() bool { return hs.conns.open() == lim.PerClient })
	get := func(path string, token bool) int {
		req := "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		if token {
			req += "Authorization: Bearer " + testToken + "\r\n"
		}
		c := raw(t, addr, req+"\r\n")
		status, closed := answer(t, c, wantQuick)
		if !closed {
			t.Errorf("%s: an over-cap connection stays open", path)
		}
		return status
	}
	if st := get("/healthz", false); st != http.StatusOK {
		t.Errorf("/healthz under attack: %d", st)
	}
	if st := get("/status", true); st != http.StatusServiceUnavailable {
		t.Errorf("/status past the cap: %d", st)
	}
	// (the two answered connections let go first: on a loaded machine
	// their release can trail the client seeing them closed)
	servertest.Eventually(t, "the answered connections released", func() bool { return hs.conns.open() == lim.PerClient })
	// the overflow is full: the next connection is closed unanswered
	var over []net.Conn
	for i := 0; i < lim.Overflow; i++ {
		over = append(over, raw(t, addr, ""))
	}
	servertest.Eventually(t, "the overflow connections", func() bool { return hs.conns.open() == lim.PerClient+lim.Overflow })
	c := raw(t, addr, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(wantQuick))
	if n, err := c.Read(make([]byte, 1)); n > 0 || err == nil {
		t.Errorf("past the overflow cap a connection was served")
	}
	for _, c := range append(hold, over...) {
		c.Close()
	}
	servertest.Eventually(t, "the released connections", func() bool { return hs.conns.open() == 0 })
	res, err := http.Get("http://" + addr + "/healthz")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("after the attack: %v %v", res, err)
	}
	res.Body.Close()
}

// A shutdown is bounded whatever the clients do: slow headers, a slow
// body, an idle keep-alive connection and a streaming MCP GET do not hold
// it up past Grace + Stop, and a write in flight still gets its answer.
func TestHTTP_ShutdownBounded(t *testing.T) {
	hs, addr, tr := limitServerRows(t, defaultLimits)
	write := raw(t, addr, "POST /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+testToken+"\r\nContent-Length: 0\r\n\r\n")
	<-tr.started
	raw(t, addr, "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	raw(t, addr, "POST /bulk HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+testToken+
		"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"ids\":")
	idle := raw(t, addr, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	if st, _ := answerKeep(t, idle); st != http.StatusOK {
		t.Fatalf("healthz: %d", st)
	}
	servertest.Eventually(t, "four connections", func() bool { return hs.conns.open() == 4 })
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- hs.shutdown() }()
	time.AfterFunc(500*time.Millisecond, func() { close(tr.release) })
	if st, err := answerKeep(t, write); st != http.StatusOK {
		t.Errorf("the write in flight: %d %v", st, err)
	}
	select {
	case <-done:
	case <-time.After(wantQuick):
		t.Fatalf("shutdown still waiting after %s", wantQuick)
	}
	t.Logf("shutdown took %s", time.Since(start).Round(time.Millisecond))
	servertest.Eventually(t, "every connection closed", func() bool { return hs.conns.open() == 0 })
}

// answerKeep reads one response and leaves the connection open.
func answerKeep(t *testing.T, c net.Conn) (int, error) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(wantQuick))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	c.SetReadDeadline(time.Time{})
	return res.StatusCode, nil
}
