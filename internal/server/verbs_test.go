package server

import (
	"net/url"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/synapse-wiki/synapse/ops"
)

// TestServe_PageVerbs: the page verbs on REST and MCP — write with a path
// and one section, get one section, move with every link rewritten,
// context within a budget — and the moves refused on a read-only server.
func TestServe_PageVerbs(t *testing.T) {
	s, _ := newTestService(t, ops.Table())
	ts := newTestHTTP(t, s, true)
	r := doREST(t, ts, "PUT", "/pages/Automated%20market%20maker", `{"content":"Pools.\n","path":"wiki/finance/amm.md","log":"from a talk"}`)
	if r.status != 201 || r.body["path"] != "wiki/finance/amm.md" {
		t.Fatalf("PUT with a path: %d %s", r.status, r.raw)
	}
	r = doREST(t, ts, "PUT", "/pages/Automated%20market%20maker", `{"content":"x*y = k\n","section":"Pricing"}`)
	if r.status != 200 {
		t.Fatalf("PUT a section: %d %s", r.status, r.raw)
	}
	r = doREST(t, ts, "GET", "/pages/Automated%20market%20maker?section=Pricing", "")
	if r.status != 200 || r.body["content"] != "## Pricing\n\nx*y = k\n" {
		t.Fatalf("GET a section: %d %s", r.status, r.raw)
	}
	r = doREST(t, ts, "POST", "/pages/Settings/move", `{"to":"Preferences"}`)
	if r.status != 200 || r.body["path"] != "wiki/User interface/Preferences.md" || len(r.body["changed"].([]any)) != 64 {
		t.Fatalf("POST move: %d %.300s", r.status, r.raw)
	}
	r = doREST(t, ts, "GET", "/pages/Preferences", "")
	if r.status != 200 || r.body["backlinks_total"].(float64) != 64 {
		t.Fatalf("the moved page: %d %.300s", r.status, r.raw)
	}
	r = doREST(t, ts, "GET", "/context?title=Preferences&budget=3000", "")
	if r.status != 200 || len(r.raw) > 3001 || r.body["budget"].(float64) != 3000 {
		t.Fatalf("GET context: %d, %d bytes: %.300s", r.status, len(r.raw), r.raw)
	}
	r = doREST(t, ts, "GET", "/context?query="+url.QueryEscape("sync between devices"), "")
	if r.status != 200 || len(r.body["pages"].([]any)) == 0 {
		t.Fatalf("GET context by query: %d %.300s", r.status, r.raw)
	}
	if first := r.body["pages"].([]any)[0].(map[string]any); first["passages"] == nil || first["content"] != nil {
		t.Errorf("GET context by query: the first hit is not given by its passages: %.300s", r.raw)
	}
	sid := openSession(t, ts.URL, mcp.ProtocolVersion20250618)
	st, _, resp, _ := mcpPost(t, ts.URL, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"move_page","arguments":{"title":"Preferences","path":"wiki/Settings.md"}}}`)
	if st != 200 || strings.Contains(resp, `"isError":true`) || !strings.Contains(resp, `wiki/Settings.md`) {
		t.Fatalf("MCP move_page: %d %.300s", st, resp)
	}
	ro := newTestHTTP(t, s, false)
	if r := doREST(t, ro, "POST", "/pages/Home/move", `{"to":"Start"}`); r.status != 403 {
		t.Fatalf("a move on a read-only server: %d %s", r.status, r.raw)
	}
	if r := doREST(t, ro, "GET", "/context?title=Home", ""); r.status != 200 {
		t.Fatalf("context on a read-only server: %d %s", r.status, r.raw)
	}
}
