package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/internal/replay"
)

// server is a running `synapse serve --http`; base is "" when it did
// not start.
type server struct {
	*replay.Server
	base string
}

// serve starts `serve --http --write` on v; token "" leaves SYNAPSE_TOKEN
// unset (the token file is used).
func serve(v vaultDir, token string) *server {
	cmd := exec.Command(bin, "--vault", string(v), "serve", "--http", "--write", "--addr", "127.0.0.1:0")
	cmd.Env = env(v)
	if token != "" {
		cmd.Env = append(cmd.Env, "SYNAPSE_TOKEN="+token)
	}
	rs, err := replay.StartServer(cmd, 60*time.Second)
	s := &server{Server: rs}
	if err == nil && rs.Addr != "" {
		s.base = "http://" + rs.Addr
	}
	return s
}

func (s *server) log() string { return s.Log() }

func (s *server) stop() { s.Stop(30 * time.Second) }

type resp struct {
	status int
	header http.Header
	body   string
	err    error
}

func (r resp) String() string {
	if r.err != nil {
		return "error: " + r.err.Error()
	}
	b := strings.TrimSpace(r.body)
	if len(b) > 100 {
		b = b[:100] + "…"
	}
	return fmt.Sprintf("%d %s %s", r.status, r.header.Get("Content-Type"), b)
}

// do sends a request with a bearer token (none when "").
func (s *server) do(method, path, token, body string, hdr ...string) resp {
	if s.base == "" {
		return resp{err: fmt.Errorf("the server did not start: %s", firstLine(s.log()))}
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		return resp{err: err}
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := (&http.Client{Timeout: hang}).Do(req)
	if err != nil {
		return resp{err: err}
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: string(data)}
}

// raw sends a request line Go's client would refuse to build (a path
// with a bad escape) and reads the answer.
func (s *server) raw(method, path, token string) resp {
	if s.base == "" {
		return resp{err: fmt.Errorf("the server did not start")}
	}
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(s.base, "http://"), hang)
	if err != nil {
		return resp{err: err}
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(hang))
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", method, path, strings.TrimPrefix(s.base, "http://"), token)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return resp{err: err}
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: string(data)}
}

// mcp posts one JSON-RPC message to /mcp (session "" for initialize) and
// returns the answer and the session id.
func (s *server) mcp(token, session, msg string) (resp, string) {
	hdr := []string{"Accept", "application/json, text/event-stream", "MCP-Protocol-Version", "2025-06-18"}
	if session != "" {
		hdr = append(hdr, "Mcp-Session-Id", session)
	}
	r := s.do("POST", "/mcp", token, msg, hdr...)
	sid := ""
	if r.header != nil {
		sid = r.header.Get("Mcp-Session-Id")
	}
	return r, sid
}

// session opens an initialized MCP session.
func (s *server) session(token string) string {
	_, sid := s.mcp(token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostilevault","version":"1"}}}`)
	s.mcp(token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}
