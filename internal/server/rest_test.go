package server

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/ops"
)

// FuzzServe_RESTRouter sends arbitrary methods, paths, query strings and
// bodies through the whole HTTP stack: it never panics, never answers 5xx
// (internal errors are bugs), and every error carries the envelope.
func FuzzServe_RESTRouter(f *testing.F) {
	v := testvault.WithCorpus(f)
	env, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{Holder: "fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	s := Open(ops.Table(), env, Config{}, log.New(io.Discard, "", 0))
	f.Cleanup(s.close)
	h := s.newHTTPServer(Config{HTTP: true}, testToken).srv.Handler
	for _, seed := range [][3]string{
		{"GET", "/pages/Home", ""}, {"GET", "/pages?limit=5&type=note", ""}, {"GET", "/graph/neighborhood?title=Home&depth=9", ""},
		{"POST", "/sources/rescan", "{}"}, {"GET", "/pages/%2e%2e%2Fetc", ""}, {"PATCH", "/status?x", "[1]"}, {"GET", "/pages?limit=1&limit=2", ""},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, method, target, body string) {
		switch method {
		case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD":
		default:
			method = "GET"
		}
		if !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "/mcp") {
			target = "/" + strings.TrimPrefix(target, "/mcp")
		}
		req, err := http.NewRequest(method, "http://127.0.0.1:7411"+target, strings.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+testToken)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, target, body, w.Code, w.Body.String())
		}
		if w.Code >= 400 && method != "HEAD" {
			var env ops.ErrorBody
			if json.Unmarshal(w.Body.Bytes(), &env) != nil || env.Error.Code == "" || env.Error.Message == "" {
				t.Fatalf("%s %s: %d without the envelope: %s", method, target, w.Code, w.Body.String())
			}
		}
	})
}
