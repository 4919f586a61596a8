package server

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/server/servertest"
	"github.com/synapse-wiki/synapse/ops"
)

// TestMCP_ConformanceCases: the protocol cases an audit found odd, over
// stdio. initialize without a protocol version negotiates the newest
// (2025-03-26 before); a tools/list cursor this server never issued is
// -32602 (one naming a tool was accepted); params that are not an object
// are -32602 (-32600); text that JSON decoding would turn into U+FFFD is
// refused by write_page, and nothing is written.
func TestMCP_ConformanceCases(t *testing.T) {
	s, _ := newTestService(t, ops.Table())
	cases := []struct {
		name, msg, want string
		init            bool // on an initialized session
	}{
		{"initialize with empty params", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, `"protocolVersion":"` + latestVersion + `"`, false},
		{"initialize without params", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, `"protocolVersion":"` + latestVersion + `"`, false},
		{"initialize with an empty version", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, `"protocolVersion":"` + latestVersion + `"`, false},
		{"initialize with an old version", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, `"protocolVersion":"2025-03-26"`, false},
		{"a cursor naming a tool", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"` + base64.StdEncoding.EncodeToString([]byte("search_wiki")) + `"}}`, `"code":-32602`, true},
		{"any cursor", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"abc"}}`, `"code":-32602`, true},
		{"no cursor", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, `"tools":[`, true},
		{"array params", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":["search_wiki",{"query":"x"}]}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602`, true},
		{"number params", `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":7}`, `"code":-32602`, true},
		{"array params before initialize", `{"jsonrpc":"2.0","id":3,"method":"initialize","params":[]}`, `"code":-32602`, false},
		{"latin-1 byte in a write", "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"write_page\",\"arguments\":{\"title\":\"Latin\",\"content\":\"caf\xe9\"}}}", `invalid: parameters are not valid UTF-8`, true},
		{"lone surrogate in a write", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write_page","arguments":{"title":"Lone","content":"a\ud800b"}}}`, `lone UTF-16 surrogate`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := startStdioPeer(t, s)
			if tc.init {
				p.initialize("2025-06-18")
			}
			p.send(tc.msg)
			if got := p.next(); !strings.Contains(got, tc.want) {
				t.Errorf("got %s\nwant %s", got, tc.want)
			}
		})
	}
	ts := newTestHTTP(t, s, false)
	for _, title := range []string{"Latin", "Lone"} {
		if r := doREST(t, ts, "GET", "/pages/"+title, ""); r.status != 404 {
			t.Errorf("page %q was written: %d", title, r.status)
		}
	}
}

// rawHTTP sends a request as is (Go's client refuses to build a bad
// escape) to addr and returns the answer.
func rawHTTP(t *testing.T, addr, line, body string) (*http.Response, string) {
	t.Helper()
	extra := ""
	if body != "" {
		extra = fmt.Sprintf("Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	c := raw(t, addr, fmt.Sprintf("%s\r\nHost: %s\r\nAuthorization: Bearer %s\r\n%sConnection: close\r\n\r\n%s", line, addr, testToken, extra, body))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res, string(data)
}

// TestREST_UnparsableAndBadUTF8: a request net/http cannot parse (a bad
// %-escape) is answered with the JSON error envelope (text/plain before);
// a path or query value that is not UTF-8 once unescaped is refused as
// invalid (it became U+FFFD and a page of that title was written).
func TestREST_UnparsableAndBadUTF8(t *testing.T) {
	_, addr := limitServer(t, defaultLimits)
	for _, tc := range []struct {
		line, body string
		want       string
	}{
		{"GET /pages/%ZZ HTTP/1.1", "", `{"error":{"code":"invalid","message":"the request line or a header could not be parsed`},
		{"GET /search?q=%ZZ HTTP/1.1", "", `"code":"invalid"`},
		{"GET /pages/%FF HTTP/1.1", "", `"message":"path parameter \"title\" is not valid UTF-8`},
		{"GET /search?q=caf%E9 HTTP/1.1", "", `"message":"query parameter \"q\" is not valid UTF-8`},
		{"PUT /pages/%FF HTTP/1.1", `{"content":"x"}`, `not valid UTF-8`},
	} {
		res, body := rawHTTP(t, addr, tc.line, tc.body)
		if res.StatusCode != 400 || res.Header.Get("Content-Type") != "application/json" || !strings.Contains(body, tc.want) {
			t.Errorf("%q: %d %s %s", tc.line, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}
	ts := "http://" + addr
	if r := servertest.REST(t, ts, "GET", "/pages/%EF%BF%BD", ""); r.Status != 404 {
		t.Errorf("a page titled U+FFFD exists: %d %s", r.Status, r.Raw)
	}
}

// TestHTTP_WrongTokenSaysSo: a missing or wrong token is a 401 whose
// challenge says which and names protected-resource metadata, fetched
// without a token, that names no authorization server; the registration
// an MCP client tries next answers an OAuth error saying to send the
// token, so that the client reports that instead of opening a login (the
// metadata was 404 behind the token, and /register 401).
func TestHTTP_WrongTokenSaysSo(t *testing.T) {
	s, _ := newTestService(t, ops.Table())
	ts := newTestHTTP(t, s, false)

	for _, tc := range []struct {
		name, auth, path, want string
	}{
		{"wrong token on /mcp", "Bearer nope", "/mcp", `error="invalid_token", error_description="wrong bearer token; the token is in $SYNAPSE_TOKEN or the vault's .synapse/token", resource_metadata="` + ts.URL + `/.well-known/oauth-protected-resource/mcp"`},
		{"no token on /mcp", "", "/mcp", `error_description="no bearer token; the token is in $SYNAPSE_TOKEN or the vault's .synapse/token", resource_metadata="` + ts.URL + `/.well-known/oauth-protected-resource/mcp"`},
		{"wrong token on REST", "Bearer nope", "/status", `resource_metadata="` + ts.URL + `/.well-known/oauth-protected-resource"`},
	} {
		r := servertest.REST(t, ts.URL, "POST", tc.path, `{}`, "Authorization", tc.auth)
		if r.Status != 401 || !strings.Contains(r.Header.Get("WWW-Authenticate"), tc.want) || r.Body["error"] == nil {
			t.Errorf("%s: %d %q %s", tc.name, r.Status, r.Header.Get("WWW-Authenticate"), r.Raw)
		}
	}
	for _, tc := range []struct{ path, resource string }{
		{"/.well-known/oauth-protected-resource/mcp", ts.URL + "/mcp"},
		{"/.well-known/oauth-protected-resource", ts.URL},
	} {
		r := servertest.REST(t, ts.URL, "GET", tc.path, "", "Authorization", "")
		if r.Status != 200 || r.Body["resource"] != tc.resource || r.Body["authorization_servers"] != nil || !strings.Contains(fmt.Sprint(r.Body["resource_name"]), "not OAuth") {
			t.Errorf("%s: %d %s", tc.path, r.Status, r.Raw)
		}
	}
	r := servertest.REST(t, ts.URL, "POST", "/register", `{"redirect_uris":["http://127.0.0.1:1/cb"]}`, "Authorization", "")
	if r.Status != 400 || r.Body["error"] != "invalid_request" || !strings.Contains(fmt.Sprint(r.Body["error_description"]), "Authorization: Bearer <token>") {
		t.Errorf("/register: %d %s", r.Status, r.Raw)
	}
	for _, p := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		r := servertest.REST(t, ts.URL, "GET", p, "", "Authorization", "")
		if r.Status != 404 || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s", p, r.Status, r.Raw)
		}
	}
	// the Host guard still applies to them
	if r := servertest.REST(t, ts.URL, "GET", "/.well-known/oauth-protected-resource", "", "Authorization", "", "Host", "evil.example"); r.Status != 403 {
		t.Errorf("metadata for a rebinding host: %d", r.Status)
	}
}
