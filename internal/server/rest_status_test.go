package server

import (
	"testing"

	"github.com/synapse-wiki/synapse/ops"
)

// TestREST_CreatedIs201: PUT /pages/{title} answers 201 when it created the
// page and 200 when it updated it (not always 200); POST
// /review/queue likewise for a new item.
func TestREST_CreatedIs201(t *testing.T) {
	s, _ := newTestService(t, ops.Table())
	ts := newTestHTTP(t, s, true)
	for _, c := range []struct {
		what, method, path, body string
		status                   int
	}{
		{"a new page", "PUT", "/pages/Created%20here", `{"content":"First."}`, 201},
		{"the same content again", "PUT", "/pages/Created%20here", `{"content":"First."}`, 200},
		{"an update", "PUT", "/pages/Created%20here", `{"content":"Second."}`, 200},
		{"a new review item", "POST", "/review/queue", `{"type":"suggestion","title":"Split the page"}`, 201},
		{"the same item again", "POST", "/review/queue", `{"type":"suggestion","title":"Split the page"}`, 200},
	} {
		r := doREST(t, ts, c.method, c.path, c.body)
		if r.status != c.status {
			t.Errorf("%s: %d %s, want %d", c.what, r.status, r.raw, c.status)
		}
	}
}
