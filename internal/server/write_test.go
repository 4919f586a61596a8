package server

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/synapse-wiki/synapse/ops"
)

// TestWrite_LargeNumbersExact: a frontmatter number written through REST
// or MCP lands in the file with every digit it was sent with (JSON numbers
// were decoded as float64: 12345678901234567890 became
// 1.2345678901234567e+19), and writing the same number again is no change.
func TestWrite_LargeNumbersExact(t *testing.T) {
	s, _ := newTestService(t, ops.Table())
	ts := newTestHTTP(t, s, true)
	sid := openSession(t, ts.URL, mcp.ProtocolVersion20250618)
	fm := `{"big":12345678901234567890,"neg":-9007199254740993,"pi":3.14159265358979323846264338327950288,"small":3,"ids":[9007199254740993,1.5],"nested":{"id":18446744073709551615}}`
	want := []string{"big: 12345678901234567890", "neg: -9007199254740993", "pi: 3.14159265358979323846264338327950288",
		"small: 3", "- 9007199254740993", "- 1.5", "id: 18446744073709551615"}
	check := func(how, rel string) {
		t.Helper()
		data, err := os.ReadFile(s.vault.Abs(rel))
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		for _, w := range want {
			if !strings.Contains(string(data), w+"\n") {
				t.Errorf("%s: %s lacks %q:\n%s", how, rel, w, data)
			}
		}
	}
	r := doREST(t, ts, "PUT", "/pages/Big%20Numbers%20REST", `{"content":"Numbers.\n","frontmatter":`+fm+`}`)
	if r.status != 201 {
		t.Fatalf("REST: %d %s", r.status, r.raw)
	}
	check("REST", r.body["path"].(string))
	// the same numbers again: nothing changes
	r = doREST(t, ts, "PUT", "/pages/Big%20Numbers%20REST", `{"content":"Numbers.\n","frontmatter":`+fm+`}`)
	if r.status != 200 || r.body["unchanged"] != true {
		t.Errorf("REST again: %d %s", r.status, r.raw)
	}
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_page","arguments":{"title":"Big Numbers MCP","content":"Numbers.\n","frontmatter":` + fm + `}}}`
	st, _, resp, _ := mcpPost(t, ts.URL, sid, body)
	if st != 200 || strings.Contains(resp, `"isError":true`) {
		t.Fatalf("MCP: %d %s", st, resp)
	}
	check("MCP", "wiki/concepts/big-numbers-mcp.md")
	// what get_page returns, written back, is no change (integers beyond
	// 2^53 come back as their digits in a string, which JavaScript clients
	// cannot round)
	g := doREST(t, ts, "GET", "/pages/Big%20Numbers%20MCP", "")
	if g.status != 200 || g.body["frontmatter"].(map[string]any)["big"] != "12345678901234567890" {
		t.Fatalf("get: %d %s", g.status, g.raw)
	}
	back, _ := json.Marshal(map[string]any{"content": g.body["content"], "frontmatter": g.body["frontmatter"]})
	if r := doREST(t, ts, "PUT", "/pages/Big%20Numbers%20MCP", string(back)); r.status != 200 || r.body["unchanged"] != true {
		t.Errorf("written back: %d %s", r.status, r.raw)
	}
	// one more than the file's number is a change, written exactly
	r = doREST(t, ts, "PUT", "/pages/Big%20Numbers%20MCP", `{"content":"Numbers.\n","frontmatter":{"big":12345678901234567891}}`)
	if r.status != 200 || r.body["unchanged"] == true {
		t.Errorf("changed number: %d %s", r.status, r.raw)
	}
	want = []string{"big: 12345678901234567891"}
	check("MCP then REST", "wiki/concepts/big-numbers-mcp.md")
}

// TestWrite_FrontmatterOnly: write_page over MCP and PUT /pages/{title}
// without content change only the frontmatter keys given and keep the
// body; without content and keys they are refused (invalid, 400).
func TestWrite_FrontmatterOnly(t *testing.T) {
	s, _ := newTestService(t, ops.Table())
	ts := newTestHTTP(t, s, true)
	sid := openSession(t, ts.URL, mcp.ProtocolVersion20250618)
	r := doREST(t, ts, "PUT", "/pages/Kept", `{"content":"# Kept\n\nThe body.\n"}`)
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	rel := r.body["path"].(string)
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_page","arguments":{"title":"Kept","frontmatter":{"summary":"Set over MCP","tags":["a"]}}}}`
	if st, _, resp, _ := mcpPost(t, ts.URL, sid, body); st != 200 || strings.Contains(resp, `"isError":true`) || !strings.Contains(resp, `"created":false`) {
		t.Fatalf("MCP: %d %s", st, resp)
	}
	r = doREST(t, ts, "PUT", "/pages/Kept", `{"frontmatter":{"summary":"Set over REST"},"aliases":["K"]}`)
	if r.status != 200 || r.body["unchanged"] == true {
		t.Fatalf("REST: %d %s", r.status, r.raw)
	}
	data, err := os.ReadFile(s.vault.Abs(rel))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"summary: Set over REST\n", "tags:\n  - a\n", "aliases:\n  - K\n", "---\n# Kept\n\nThe body.\n"} {
		if !strings.Contains(string(data), w) {
			t.Errorf("%s lacks %q:\n%s", rel, w, data)
		}
	}
	if r := doREST(t, ts, "PUT", "/pages/Kept", `{}`); r.status != 400 || !strings.Contains(r.raw, "content is empty") {
		t.Errorf("nothing to write: %d %s", r.status, r.raw)
	}
}
