package server

import (
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/ops"
)

// The page history's routes: history and diff are reads, restore a write
// refused on a read-only server; recent lists what the writes did.
func TestServe_HistoryRoutes(t *testing.T) {
	s, _ := newTestService(t, ops.Table())
	ro := newTestHTTP(t, s, false)
	rw := newTestHTTP(t, s, true)
	for _, body := range []string{`{"content":"First.\n"}`, `{"content":"Second.\n"}`} {
		if r := doREST(t, rw, "PUT", "/pages/Heron", body); r.status/100 != 2 {
			t.Fatalf("PUT: %d %s", r.status, r.raw)
		}
	}
	for _, tt := range []struct {
		name   string
		srv    string
		method string
		path   string
		body   string
		status int
		want   string
	}{
		{"history", "ro", "GET", "/pages/Heron/history", "", 200, `"current":2,"total":2`},
		{"history paged", "ro", "GET", "/pages/Heron/history?limit=1&offset=1", "", 200, `"revisions":[{"rev":1,`},
		{"history of a path", "ro", "GET", "/pages/wiki%2Fconcepts%2Fheron.md/history", "", 200, `"title":"Heron"`},
		{"diff", "ro", "GET", "/pages/Heron/diff", "", 200, `-First.\n+Second.\n`},
		{"diff of a revision", "ro", "GET", "/pages/Heron/diff?rev=1", "", 200, `"from":null`},
		{"diff of no revision", "ro", "GET", "/pages/Heron/diff?rev=9", "", 404, "has no revision 9"},
		{"restore read-only", "ro", "POST", "/pages/Heron/restore", `{"rev":1}`, 403, "--write"},
		{"restore", "rw", "POST", "/pages/Heron/restore", `{"rev":1}`, 200, `"revision":3,`},
		{"restore stale", "rw", "POST", "/pages/Heron/restore", `{"rev":2,"if_match":"` + strings.Repeat("0", 64) + `"}`, 409, "changed since it was read"},
		{"restore needs a revision", "rw", "POST", "/pages/Heron/restore", `{}`, 400, "rev is required"},
		{"recent", "ro", "GET", "/recent?limit=2", "", 200, `"action":"restored","title":"Heron"`},
		{"recent since", "ro", "GET", "/recent?since=soon", "", 400, "since"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := ro
			if tt.srv == "rw" {
				srv = rw
			}
			r := doREST(t, srv, tt.method, tt.path, tt.body)
			if r.status != tt.status || !strings.Contains(r.raw, tt.want) {
				t.Fatalf("%s %s: %d %s\nwant %d containing %q", tt.method, tt.path, r.status, r.raw, tt.status, tt.want)
			}
		})
	}
}
