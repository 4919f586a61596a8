package server

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/synapse-wiki/synapse/ops"
)

// TestStrict_KeysExactOnce: a case-variant key and a key given twice are
// invalid on REST and on MCP alike, and nothing is written (main matched
// keys case-insensitively and let the last duplicate win).
func TestStrict_KeysExactOnce(t *testing.T) {
	s, _ := newTestService(t, ops.Table())
	ts := newTestHTTP(t, s, true)
	cases := []struct {
		name, body, want string
	}{
		{"case variant", `{"CONTENT":"x\n"}`, `unknown parameter "CONTENT": names are case-sensitive; did you mean "content"?`},
		{"duplicate", `{"content":"a\n","content":"b\n"}`, `parameter "content" is given twice`},
		{"duplicate in frontmatter", `{"content":"a\n","frontmatter":{"tags":["x"],"tags":["y"]}}`, `key "tags" is given twice in "frontmatter"`},
	}
	for _, c := range cases {
		t.Run("REST/"+c.name, func(t *testing.T) {
			r := doREST(t, ts, "PUT", "/pages/Strict%20Page", c.body)
			if r.status != 400 || !strings.Contains(unescape(r.raw), c.want) {
				t.Fatalf("%d %s", r.status, r.raw)
			}
		})
	}
	sid := openSession(t, ts.URL, mcp.ProtocolVersion20250618)
	mcpCases := []struct {
		name, tool, args, want string
	}{
		{"case variant", "read_source_file", `{"Path":"notes.md"}`, `did you mean "path"`},
		{"duplicate", "read_source_file", `{"path":"a.md","path":"b.md"}`, `parameter "path" is given twice`},
		{"write case variant", "write_page", `{"title":"Strict Page","CONTENT":"x\n"}`, `did you mean "content"`},
		{"write duplicate", "write_page", `{"title":"Strict Page","title":"Other","content":"x\n"}`, `parameter "title" is given twice`},
	}
	for _, c := range mcpCases {
		t.Run("MCP/"+c.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + c.tool + `","arguments":` + c.args + `}}`
			st, _, resp, _ := mcpPost(t, ts.URL, sid, body)
			if st != 200 || !strings.Contains(resp, `"isError":true`) || !strings.Contains(resp, "invalid") || !strings.Contains(unescape(resp), c.want) {
				t.Fatalf("%d %s", st, resp)
			}
		})
	}
	// nothing was written
	if r := doREST(t, ts, "GET", "/pages/Strict%20Page", ""); r.status != 404 {
		t.Fatalf("a refused write wrote a page: %d %s", r.status, r.raw)
	}
	// exact keys work (201: the page was created)
	if r := doREST(t, ts, "PUT", "/pages/Strict%20Page", `{"content":"x\n","frontmatter":{"Tags":["a"],"tags":["b"]}}`); r.status != 201 {
		t.Fatalf("exact keys: %d %s", r.status, r.raw)
	}
}

// unescape drops the backslashes of JSON string escaping (one or two
// levels), so messages compare as written.
func unescape(s string) string { return strings.ReplaceAll(s, `\`, "") }
