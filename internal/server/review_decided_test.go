package server

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/synapse-wiki/synapse/internal/server/servertest"
	"github.com/synapse-wiki/synapse/ops"
)

// TestReview_DecidedByOnEverySurface: who decided an item is recorded and
// shown by REST and MCP as by the CLI: MCP and REST decide as an agent
// unless told otherwise (decided_by), the web UI's bulk form as a person,
// and status counts them apart (docs/review.md).
func TestReview_DecidedByOnEverySurface(t *testing.T) {
	s, _ := newTestService(t, ops.Table())
	ts := newTestHTTP(t, s, true)
	var ids []string
	for i := 0; i < 4; i++ {
		r := doREST(t, ts, "POST", "/review/queue", fmt.Sprintf(`{"type":"confirm","title":"Surface item %d"}`, i))
		item, _ := r.body["item"].(map[string]any)
		if r.status != 201 || item["origin"] != "agent" {
			t.Fatalf("add: %d %s", r.status, r.raw)
		}
		ids = append(ids, item["id"].(string))
	}
	for _, c := range []struct {
		how, want string
		call      func(id string) map[string]any
	}{
		{"REST action", "agent", func(id string) map[string]any {
			return doREST(t, ts, "POST", "/review/queue/"+id+"/resolve", "").body
		}},
		{"REST PATCH by a person", "user", func(id string) map[string]any {
			return doREST(t, ts, "PATCH", "/review/queue/"+id, `{"status":"auto_resolved","decided_by":"user"}`).body
		}},
		{"MCP", "agent", func(id string) map[string]any {
			out, err := servertest.CallOp(s, "resolve_review", map[string]any{"id": id, "action": "resolve"})
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			json.Unmarshal([]byte(servertest.ResultJSON(t, out)), &m)
			return m
		}},
		{"the UI's bulk form", "user", func(id string) map[string]any {
			doREST(t, ts, "POST", "/review/queue/bulk", `{"ids":["`+id+`"],"action":"mark-resolved"}`)
			l := doREST(t, ts, "GET", "/review/queue?status=auto_resolved&limit=100", "")
			for _, it := range l.body["items"].([]any) {
				if m := it.(map[string]any); m["id"] == id {
					return m
				}
			}
			return nil
		}},
	} {
		got := c.call(ids[0])
		if got["status"] != "auto_resolved" || got["decided_by"] != c.want {
			t.Errorf("%s: %v", c.how, got)
		}
		ids = ids[1:]
	}
	st := doREST(t, ts, "GET", "/status", "")
	by, _ := st.body["reviews_decided_by"].(map[string]any)
	if ar, _ := by["auto_resolved"].(map[string]any); ar["agent"] != 2.0 || ar["user"] != 2.0 {
		t.Errorf("status reviews_decided_by %v", by)
	}
}
