package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

const serverToken = "hostilevault-token-0123456789abcdef"

// conformance replays the protocol cases the audit found odd, against a
// running server and the CLI.
func conformance() {
	v := newVault("conformance")
	s := serve(v, serverToken)
	defer s.stop()

	r := s.raw("GET", "/pages/%ZZ", serverToken)
	record("REST `GET /pages/%ZZ`", "400 text/plain", r.status == 400 && strings.HasPrefix(r.header.Get("Content-Type"), "application/json") && strings.Contains(r.body, `"invalid"`), "%s", r)

	wrongToken(s)
	badUTF8(s)

	sid := s.session(serverToken)
	r, _ = s.mcp(serverToken, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	record("MCP `initialize` with empty params", "answers 2025-03-26", strings.Contains(r.body, `"protocolVersion":"2025-11-25"`), "%s", r)
	cur := base64.StdEncoding.EncodeToString([]byte("search_wiki"))
	r, _ = s.mcp(serverToken, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":"`+cur+`"}}`)
	record("MCP `tools/list` with a cursor the server never issued", "accepted (a page of tools)", strings.Contains(r.body, `"code":-32602`), "%s", r)
	r, _ = s.mcp(serverToken, sid, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":["search_wiki",{"query":"dog"}]}`)
	record("MCP `tools/call` with array params", "-32600", strings.Contains(r.body, `"code":-32602`), "%s", r)

	openAPI(s)

	c := cli(v, "", "page", "write", "Note", "--file", filepath.Join(work, "nonexistent.md"))
	record("`page write --file /nonexistent`", "exit 2 (help says 3 for not found)", c.code == 3, "%s", c)
	skillFIFO()
}

// wrongToken: a wrong token says so, and the discovery a client then
// tries (RFC 9728 metadata, client registration) ends with that message
// instead of an OAuth login.
func wrongToken(s *server) {
	r := s.do("POST", "/mcp", "not-the-token", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "Accept", "application/json, text/event-stream")
	wa := r.header.Get("WWW-Authenticate")
	m := regexp.MustCompile(`resource_metadata="([^"]+)"`).FindStringSubmatch(wa)
	record("MCP with a wrong token: the challenge", "401 `Bearer realm=\"synapse\", error=\"invalid_token\"`, no metadata",
		r.status == 401 && strings.Contains(wa, `error="invalid_token"`) && strings.Contains(wa, "error_description") && m != nil,
		"%d WWW-Authenticate: %s", r.status, wa)
	meta := resp{err: fmt.Errorf("no resource_metadata")}
	if m != nil {
		meta = s.do("GET", strings.TrimPrefix(m[1], s.base), "", "")
	}
	var doc map[string]any
	json.Unmarshal([]byte(meta.body), &doc)
	_, hasAS := doc["authorization_servers"]
	record("the metadata it names (no token)", "404: clients fall back to OAuth discovery of the server itself",
		meta.status == 200 && doc["resource"] == s.base+"/mcp" && !hasAS, "%s", meta)
	reg := s.do("POST", "/register", "", `{"redirect_uris":["http://127.0.0.1:1/cb"]}`)
	var oe struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	json.Unmarshal([]byte(reg.body), &oe)
	record("OAuth client registration a client tries next (`POST /register`)", "404 text: the client opened an OAuth login or looped",
		reg.status == 400 && oe.Error != "" && strings.Contains(oe.Description, "token"), "%s", reg)
}

// badUTF8: bytes that are not UTF-8 in a write are refused, not turned
// into U+FFFD and written.
func badUTF8(s *server) {
	r := s.do("PUT", "/pages/Latin", serverToken, "{\"content\":\"caf\xe9\\n\"}")
	g := s.do("GET", "/pages/Latin", serverToken, "")
	record("REST `PUT /pages/Latin` with a Latin-1 byte", "200: written with U+FFFD", r.status == 400 && strings.Contains(r.body, "UTF-8") && g.status == 404, "%s; then GET %d", r, g.status)
	sid := s.session(serverToken)
	m, _ := s.mcp(serverToken, sid, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"write_page\",\"arguments\":{\"title\":\"Latin2\",\"content\":\"caf\xe9\\n\"}}}")
	g = s.do("GET", "/pages/Latin2", serverToken, "")
	record("MCP `write_page` with a Latin-1 byte", "written with U+FFFD", strings.Contains(m.body, "UTF-8") && g.status == 404, "%s; then GET %d", m, g.status)
	m, _ = s.mcp(serverToken, sid, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write_page","arguments":{"title":"Lone","content":"a\ud800b"}}}`)
	g = s.do("GET", "/pages/Lone", serverToken, "")
	record("MCP `write_page` with a lone surrogate escape", "written with U+FFFD", strings.Contains(m.body, "surrogate") && g.status == 404, "%s; then GET %d", m, g.status)
}

// openAPI: the document lists the 201 answers and types reviewed_at as
// nullable (the Go test checks every route against real answers).
func openAPI(s *server) {
	r := s.do("GET", "/openapi.json", serverToken, "")
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]any `json:"responses"`
		} `json:"paths"`
	}
	json.Unmarshal([]byte(r.body), &doc)
	_, put := doc.Paths["/pages/{title}"]["put"].Responses["201"]
	_, add := doc.Paths["/review/queue"]["post"].Responses["201"]
	record("OpenAPI: 201 of `PUT /pages/{title}` and `POST /review/queue`", "not listed (generated clients take success for the default error)", put && add, "PUT 201 listed: %v; POST 201 listed: %v", put, add)
	nullable := regexp.MustCompile(`"reviewed_at":\s*\{[^}]*"null"`).MatchString(r.body)
	record("OpenAPI: `reviewed_at`", "typed string; the answers hold null", nullable, "nullable: %v", nullable)
}

// skillFIFO: skill install where SKILL.md is a named pipe.
func skillFIFO() {
	dir := filepath.Join(work, "skill")
	must(os.MkdirAll(dir, 0o755))
	must(syscall.Mkfifo(filepath.Join(dir, "SKILL.md"), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "skill", "install", "--dir", dir, "--force")
	cmd.Env = env("")
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	hung := ctx.Err() != nil
	record("`skill install --dir D` where D/SKILL.md is a named pipe", "hangs", !hung && code == 5, "hung: %v, exit %d%s", hung, code, clipMsg(firstLine(string(out))))
}
