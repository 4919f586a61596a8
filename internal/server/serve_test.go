package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/server/servertest"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// Test-only rows: they exercise adapter mechanisms (renamed query
// parameters, per-code REST status, panics, slow writes) that no product
// row may have yet.

type echoIn struct {
	Name  string   `json:"name" required:"true" desc:"Path parameter"`
	Query string   `json:"query,omitempty" query:"q" desc:"Renamed to q in the query string"`
	Limit int      `json:"limit,omitempty" default:"5" min:"1" max:"10" desc:"How many"`
	Tags  []string `json:"tags,omitempty" desc:"Repeatable"`
	Flag  bool     `json:"flag,omitempty" desc:"A switch"`
	Extra string   `json:"extra,omitempty" mcp:"-" desc:"REST and CLI only"`
}

type echoOut struct {
	Got echoIn `json:"got"`
}

type bulkIn struct {
	IDs    []string `json:"ids" desc:"At most 3"`
	Action string   `json:"action" required:"true" desc:"What to do"`
}

type bulkOut struct {
	Count int `json:"count"`
}

type emptyIn struct{}

type testRows struct {
	list    []*ops.Op
	release chan struct{} // closes to let test.slow finish
	started chan struct{} // receives when test.slow starts
	writes  int           // test.bulk calls that ran
	mu      sync.Mutex
}

func newTestRows() *testRows {
	tr := &testRows{release: make(chan struct{}), started: make(chan struct{}, 1)}
	echo := ops.NewOp(ops.Op{Name: "test.echo", Summary: "Echo the input", MCP: "echo_test",
		REST: []ops.Route{{Method: "GET", Path: "/echo/{name}"}}, Access: ops.Read, Limits: "limit 1..10"},
		func(ctx context.Context, e *ops.Env, in *echoIn) (*echoOut, error) { return &echoOut{Got: *in}, nil })
	bulk := ops.NewOp(ops.Op{Name: "test.bulk", Summary: "Bulk write", MCP: "bulk_test",
		REST:       []ops.Route{{Method: "POST", Path: "/bulk"}, {Method: "POST", Path: "/bulk/{action}"}},
		Access:     ops.Write,
		RESTStatus: map[errs.Code]int{errs.TooLarge: http.StatusUnprocessableEntity}},
		func(ctx context.Context, e *ops.Env, in *bulkIn) (*bulkOut, error) {
			if len(in.IDs) > 3 {
				return nil, errs.E(errs.TooLarge, "%d ids; at most 3", len(in.IDs))
			}
			tr.mu.Lock()
			tr.writes++
			tr.mu.Unlock()
			return &bulkOut{Count: len(in.IDs)}, nil
		})
	slow := ops.NewOp(ops.Op{Name: "test.slow", Summary: "Block until released", REST: []ops.Route{{Method: "POST", Path: "/slow"}}, Access: ops.Write},
		func(ctx context.Context, e *ops.Env, in *emptyIn) (*bulkOut, error) {
			tr.started <- struct{}{}
			<-tr.release
			return &bulkOut{Count: 1}, nil
		})
	boom := ops.NewOp(ops.Op{Name: "test.boom", Summary: "Panic", MCP: "boom_test", REST: []ops.Route{{Method: "GET", Path: "/boom"}}, Access: ops.Read},
		func(ctx context.Context, e *ops.Env, in *emptyIn) (*bulkOut, error) { panic("boom") })
	tr.list = append(ops.Table(), echo, bulk, slow, boom)
	return tr
}

const testToken = servertest.Token

// newTestService opens the corpus vault with the given rows.
func newTestService(t *testing.T, list []*ops.Op) (*Service, *servertest.SyncBuffer) {
	t.Helper()
	v := testvault.WithCorpus(t)
	env, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{Holder: "synapse serve (test)"})
	if err != nil {
		t.Fatal(err)
	}
	logs := &servertest.SyncBuffer{}
	s := Open(list, env, Config{}, log.New(logs, "synapse: ", 0))
	t.Cleanup(s.close)
	return s, logs
}

// newTestHTTP serves the full HTTP stack (guards, auth, MCP, REST).
func newTestHTTP(t *testing.T, s *Service, write bool) *httptest.Server {
	t.Helper()
	hs := s.newHTTPServer(Config{HTTP: true, Write: write}, testToken)
	ts := httptest.NewServer(hs.srv.Handler)
	t.Cleanup(func() {
		hs.shutdown()
		ts.Close()
	})
	return ts
}

type restResult struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func doREST(t *testing.T, ts *httptest.Server, method, path, body string, hdr ...string) restResult {
	t.Helper()
	r := servertest.REST(t, ts.URL, method, path, body, hdr...)
	return restResult{status: r.Status, header: r.Header, body: r.Body, raw: r.Raw}
}

func TestServe_REST(t *testing.T) {
	tr := newTestRows()
	s, _ := newTestService(t, tr.list)
	ro := newTestHTTP(t, s, false)
	rw := newTestHTTP(t, s, true)

	tests := []struct {
		name       string
		ts         *httptest.Server
		method     string
		path, body string
		hdr        []string
		status     int
		want       string // substring of the body
	}{
		{"healthz needs no token", ro, "GET", "/healthz", "", []string{"Authorization", ""}, 200, `"status":"ok"`},
		{"no token", ro, "GET", "/status", "", []string{"Authorization", ""}, 401, `"code":"unauthorized","message":"missing 'Authorization: Bearer`},
		{"wrong token", ro, "GET", "/status", "", []string{"Authorization", "Bearer nope"}, 401, `"code":"unauthorized","message":"wrong bearer token`},
		{"basic scheme", ro, "GET", "/status", "", []string{"Authorization", "Basic " + testToken}, 401, "missing"},
		{"openapi needs a token", ro, "GET", "/openapi.json", "", []string{"Authorization", ""}, 401, ""},
		{"mcp needs a token", ro, "POST", "/mcp", `{}`, []string{"Authorization", ""}, 401, ""},
		{"status", ro, "GET", "/status", "", nil, 200, `"pages":173`},
		{"page by path param", ro, "GET", "/pages/Home", "", nil, 200, `"title":"Home"`},
		{"escaped path param", ro, "GET", "/pages/wiki%2FHome.md", "", nil, 200, `"title":"Home"`},
		{"not found", ro, "GET", "/pages/No%20Such%20Page", "", nil, 404, "no page titled"},
		{"clamped depth", ro, "GET", "/graph/neighborhood?title=Home&depth=5", "", nil, 200, `"depth":2`},
		{"unknown query parameter", ro, "GET", "/pages?limit=2&bogus=1&zap=2", "", nil, 400, `unknown query parameter \"bogus\", \"zap\"; valid: limit, match, offset, tag, type`},
		{"bad integer", ro, "GET", "/pages?limit=many", "", nil, 400, `\"limit\" must be an integer`},
		{"pages by match", ro, "GET", "/pages?match=no-such-page", "", nil, 200, `"total":0,"all":`},
		{"sources by path", ro, "GET", "/sources?path=no-such-source", "", nil, 200, `"total":0,`},
		{"repeated scalar", ro, "GET", "/pages?limit=1&limit=2", "", nil, 400, "given 2 times"},
		{"no route", ro, "GET", "/nope", "", nil, 404, "no route GET /nope"},
		{"wrong method", ro, "DELETE", "/status", "", nil, 405, "DELETE is not allowed on /status"},
		{"write route read-only", ro, "POST", "/sources/rescan", "", nil, 403, "restart it with `synapse serve --http --write`"},
		{"write route refused before input checks", ro, "POST", "/bulk?bogus=1", `{"nope":1}`, nil, 403, "--write"},
		// lint is a read: it answers on a read-only server; only to_review writes
		{"lint on a read-only server", ro, "GET", "/lint", "", nil, 200, `"counts":{"broken_links":1,`},
		{"lint scoped and paged", ro, "GET", "/lint?page=Internal+links&limit=1", "", nil, 200, `"page":{"id":`},
		{"lint by POST on a read-only server", ro, "POST", "/lint", `{"category":"broken_links"}`, nil, 200, `"findings":1,`},
		{"lint to_review on a read-only server", ro, "POST", "/lint", `{"to_review":true}`, nil, 403, "--to-review changes the vault"},
		{"a GET never writes", rw, "GET", "/lint?to_review=true", "", nil, 400, "to_review"},
		{"lint to_review with --write", rw, "POST", "/lint", `{"to_review":true,"category":"broken_links"}`, nil, 200, `"filed":{"added":1,`},
		{"graph missing scoped", ro, "GET", "/graph/missing?page=Internal+links", "", nil, 200, `"total":1,"page":`},
		{"write route with --write", rw, "POST", "/sources/rescan", "", nil, 200, `"scanned":`},
		{"renamed query parameter", ro, "GET", "/echo/x?q=hello&tags=a&tags=b&flag", "", nil, 200, `"query":"hello"`},
		{"json name is not the query name", ro, "GET", "/echo/x?query=hello", "", nil, 400, `unknown query parameter \"query\"; valid: extra, flag, limit, q, tags`},
		{"query clamp and default", ro, "GET", "/echo/x?limit=99", "", nil, 200, `"limit":10`},
		{"body", rw, "POST", "/bulk", `{"ids":["a","b"],"action":"skip"}`, nil, 200, `"count":2`},
		{"path param and body", rw, "POST", "/bulk/skip", `{"ids":["a"]}`, nil, 200, `"count":1`},
		{"path param repeated in body", rw, "POST", "/bulk/skip", `{"ids":["a"],"action":"dismiss"}`, nil, 400, "is given in the path"},
		{"unknown body parameter", rw, "POST", "/bulk", `{"ids":[],"action":"skip","bogus":true}`, nil, 400, `unknown parameter \"bogus\"`},
		{"query on a body route", rw, "POST", "/bulk?action=skip", `{"ids":[]}`, nil, 400, "send parameters in the JSON body"},
		{"body not an object", rw, "POST", "/bulk", `["a"]`, nil, 400, "must be a JSON object, not a list"},
		{"body not JSON", rw, "POST", "/bulk", `{"ids":`, nil, 400, "not valid JSON"},
		{"wrong content type", rw, "POST", "/bulk", `{"action":"x"}`, []string{"Content-Type", "text/plain"}, 400, "must be JSON"},
		{"missing required", rw, "POST", "/bulk", `{"ids":["a"]}`, nil, 400, "action is required"},
		{"per-row status for too_large", rw, "POST", "/bulk", `{"ids":["1","2","3","4"],"action":"skip"}`, nil, 422, `"code":"too_large","message":"4 ids; at most 3"`},
		{"panic is a 500", ro, "GET", "/boom", "", nil, 500, "internal error in test.boom"},
		{"foreign Host", ro, "GET", "/status", "", []string{"Host", "evil.example:7411"}, 403, "DNS rebinding"},
		{"foreign Origin", ro, "GET", "/status", "", []string{"Origin", "http://evil.example"}, 403, "Origin"},
		{"localhost Origin", ro, "GET", "/status", "", []string{"Origin", "http://localhost:3000"}, 200, `"pages"`},
		{"localhost Host", ro, "GET", "/status", "", []string{"Host", "localhost:7411"}, 200, `"pages"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := doREST(t, tt.ts, tt.method, tt.path, tt.body, tt.hdr...)
			if r.status != tt.status || !strings.Contains(r.raw, tt.want) {
				t.Fatalf("%s %s: got %d %s\nwant %d containing %q", tt.method, tt.path, r.status, r.raw, tt.status, tt.want)
			}
			if r.status >= 400 && tt.status != 401 && r.body["error"] == nil {
				t.Errorf("error without the envelope: %s", r.raw)
			}
			if r.status == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without WWW-Authenticate: Bearer: %v", r.header)
			}
		})
	}
	if tr.writes != 2 {
		t.Errorf("test.bulk ran %d times; want 2 (rejected calls must not run)", tr.writes)
	}
}

func TestServe_RESTBodyLimit(t *testing.T) {
	tr := newTestRows()
	s, _ := newTestService(t, tr.list)
	rw := newTestHTTP(t, s, true)
	big := `{"action":"skip","ids":["` + strings.Repeat("x", maxBodyBytes) + `"]}`
	r := doREST(t, rw, "POST", "/bulk", big)
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.raw, "too_large") {
		t.Fatalf("got %d %s", r.status, r.raw)
	}
}

func TestServe_OpenAPIListsEveryRoute(t *testing.T) {
	tr := newTestRows()
	s, _ := newTestService(t, tr.list)
	r := doREST(t, newTestHTTP(t, s, false), "GET", "/openapi.json", "")
	if r.status != 200 {
		t.Fatalf("got %d %s", r.status, r.raw)
	}
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal([]byte(r.raw), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	for _, op := range tr.list {
		for _, rt := range op.REST {
			o, ok := doc.Paths[rt.Path][strings.ToLower(rt.Method)]
			if !ok {
				t.Errorf("%s %s (%s) missing from /openapi.json", rt.Method, rt.Path, op.Name)
				continue
			}
			if o["x-synapse-access"] != string(op.Access) {
				t.Errorf("%s %s: access %v", rt.Method, rt.Path, o["x-synapse-access"])
			}
		}
	}
	bulk := doc.Paths["/bulk"]["post"]["responses"].(map[string]any)
	if _, ok := bulk["422"]; !ok {
		t.Errorf("RESTStatus 422 not documented: %v", bulk)
	}
	echo := doc.Paths["/echo/{name}"]["get"]["parameters"].([]any)
	var names []string
	for _, p := range echo {
		names = append(names, fmt.Sprint(p.(map[string]any)["name"]))
	}
	sort.Strings(names)
	if got := strings.Join(names, ","); got != "extra,flag,limit,name,q,tags" {
		t.Errorf("echo parameters %s", got)
	}
	if _, ok := doc.Paths["/healthz"]["get"]; !ok {
		t.Error("/healthz missing")
	}
}

func tableTools(list []*ops.Op, access ops.Access) []string {
	var out []string
	for _, op := range list {
		if op.MCP != "" && (access == "" || op.Access == access) {
			out = append(out, op.MCP)
		}
	}
	sort.Strings(out)
	return out
}

func keys(m map[string]mcp.Tool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestServe_MCPStdioServerListsEveryTool(t *testing.T) {
	tr := newTestRows()
	s, _ := newTestService(t, tr.list)
	c, err := client.NewInProcessClient(s.newMCPServer(false))
	if err != nil {
		t.Fatal(err)
	}
	servertest.StartClient(t, c)
	tools := servertest.ToolNames(t, c)
	if got, want := strings.Join(keys(tools), ","), strings.Join(tableTools(tr.list, ""), ","); got != want {
		t.Fatalf("tools %s; want every tool of the table: %s", got, want)
	}
	for name, tl := range tools {
		op := toolOp(tr.list, name)
		ro := tl.Annotations.ReadOnlyHint
		if ro == nil || *ro != (op.Access == ops.Read) {
			t.Errorf("%s: readOnlyHint %v for a %s op", name, ro, op.Access)
		}
		var schema map[string]any
		if err := json.Unmarshal(tl.RawInputSchema, &schema); err != nil {
			data, _ := json.Marshal(tl.InputSchema)
			json.Unmarshal(data, &schema)
		}
		if schema["additionalProperties"] != false || schema["type"] != "object" {
			t.Errorf("%s: schema not strict: %v", name, schema)
		}
	}
	// ranges are described, never declared: a client must be able to send
	// depth=5 and have the server clamp it
	echo := tools["echo_test"].RawInputSchema
	if echo == nil {
		echo, _ = json.Marshal(tools["echo_test"].InputSchema)
	}
	for _, bad := range []string{`"maximum"`, `"minimum"`, `"extra"`} {
		if strings.Contains(string(echo), bad) {
			t.Errorf("echo_test schema has %s: %s", bad, echo)
		}
	}
	if !strings.Contains(string(echo), `1..10, values outside are clamped`) || !strings.Contains(string(echo), `"default":5`) {
		t.Errorf("echo_test schema lacks the range or default: %s", echo)
	}

	out, isErr := servertest.MCPCall(t, c, "get_graph_neighborhood", map[string]any{"title": "Home", "depth": 5})
	if isErr || out["depth"] != float64(2) {
		t.Errorf("depth=5: %v (error %v); want depth 2", out, isErr)
	}
	out, isErr = servertest.MCPCall(t, c, "get_page", map[string]any{"title": "Home", "bogus": 1})
	if !isErr || out["code"] != "invalid" || !strings.Contains(fmt.Sprint(out["error"]), `unknown parameter "bogus"`) {
		t.Errorf("unknown parameter: %v", out)
	}
	out, isErr = servertest.MCPCall(t, c, "get_page", map[string]any{"title": "No such page at all"})
	if !isErr || out["code"] != "not_found" || !strings.HasPrefix(fmt.Sprint(out["error"]), "not_found: ") {
		t.Errorf("not found: %v", out)
	}
	out, isErr = servertest.MCPCall(t, c, "get_page", map[string]any{"title": 7})
	if !isErr || !strings.Contains(fmt.Sprint(out["error"]), `"title" must be a string`) {
		t.Errorf("wrong type: %v", out)
	}
	out, isErr = servertest.MCPCall(t, c, "trigger_source_rescan", map[string]any{})
	if isErr || out["scanned"] == nil {
		t.Errorf("rescan on stdio: %v", out)
	}
	out, isErr = servertest.MCPCall(t, c, "boom_test", nil)
	if !isErr || out["code"] != "internal" {
		t.Errorf("panic: %v", out)
	}
	out, isErr = servertest.MCPCall(t, c, "echo_test", map[string]any{"name": "x", "limit": 999})
	if isErr || out["got"].(map[string]any)["limit"] != float64(10) {
		t.Errorf("clamp: %v", out)
	}
}

func TestServe_MCPHTTPReadOnly(t *testing.T) {
	tr := newTestRows()
	s, _ := newTestService(t, tr.list)
	for _, write := range []bool{false, true} {
		t.Run(fmt.Sprintf("write=%v", write), func(t *testing.T) {
			ts := newTestHTTP(t, s, write)
			c, err := client.NewStreamableHttpClient(ts.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + testToken}))
			if err != nil {
				t.Fatal(err)
			}
			servertest.StartClient(t, c)
			want := tableTools(tr.list, ops.Read)
			if write {
				want = tableTools(tr.list, "")
			}
			if got := keys(servertest.ToolNames(t, c)); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("tools %v; want %v", got, want)
			}
			for _, tool := range tableTools(tr.list, ops.Write) {
				args := map[string]any{}
				if tool == "bulk_test" {
					args = map[string]any{"ids": []string{"a"}, "action": "skip"}
				}
				before := tr.writes
				out, isErr := servertest.MCPCall(t, c, tool, args)
				if write {
					if tool == "bulk_test" && (isErr || tr.writes != before+1) {
						t.Errorf("%s with --write: %v", tool, out)
					}
					continue
				}
				if !isErr || out["code"] != "forbidden" || !strings.Contains(fmt.Sprint(out["error"]), "--write") || tr.writes != before {
					t.Errorf("%s without --write: %v (ran: %v)", tool, out, tr.writes != before)
				}
			}
		})
	}
}

func TestServe_ShutdownFinishesInFlight(t *testing.T) {
	tr := newTestRows()
	s, logs := newTestService(t, tr.list)
	ctx, cancel := context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	done := make(chan error, 1)
	go func() {
		done <- s.run(ctx, Config{HTTP: true, Write: true, Addr: addr}, testToken, nil, io.Discard)
	}()
	url := "http://" + addr
	for i := 0; ; i++ {
		if res, err := http.Get(url + "/healthz"); err == nil {
			res.Body.Close()
			break
		}
		if i > 200 {
			t.Fatal("server did not start: " + logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	type result struct {
		status int
		body   string
		err    error
	}
	resc := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("POST", url+"/slow", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			resc <- result{err: err}
			return
		}
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		resc <- result{status: res.StatusCode, body: string(data)}
	}()
	<-tr.started
	cancel() // SIGINT
	time.Sleep(50 * time.Millisecond)
	if _, err := http.Get(url + "/healthz"); err == nil {
		t.Error("server still accepts connections while shutting down")
	}
	close(tr.release)
	r := <-resc
	if r.err != nil || r.status != 200 || !strings.Contains(r.body, `"count":1`) {
		t.Fatalf("in-flight request: %+v", r)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// the store is closed: another process may take it at once
	st, err := store.Open(s.env.Vault.Abs(vault.DBFile), store.Options{Timeout: time.Second, Holder: "test"})
	if err != nil {
		t.Fatalf("store not released after shutdown: %v", err)
	}
	st.Close()
	if !strings.Contains(logs.String(), "stopped") {
		t.Errorf("logs: %s", logs.String())
	}
}

// Benchmarks: the cost the adapters add to get_page, in process (the
// transports' own cost over a real socket is measured by scripts/loadtest).
func BenchmarkServe_GetPage(b *testing.B) {
	v := testvault.WithCorpus(b)
	env, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{Holder: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	s := Open(ops.Table(), env, Config{}, log.New(io.Discard, "", 0))
	defer s.close()
	op := ops.ByTool("get_page")
	raw := []byte(`{"title":"Home"}`)
	b.Run("op.Call", func(b *testing.B) {
		for b.Loop() {
			if _, err := op.Call(context.Background(), env, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("REST", func(b *testing.B) {
		h := s.newHTTPServer(Config{HTTP: true}, testToken).srv.Handler
		for b.Loop() {
			req := httptest.NewRequest("GET", "http://127.0.0.1:7411/pages/Home", nil)
			req.Header.Set("Authorization", "Bearer "+testToken)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Fatal(w.Code, w.Body.String())
			}
		}
	})
	b.Run("MCP", func(b *testing.B) {
		c, _ := client.NewInProcessClient(s.newMCPServer(false))
		servertest.StartClient(&testing.T{}, c)
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "get_page", map[string]any{"title": "Home"}
		for b.Loop() {
			if res, err := c.CallTool(context.Background(), req); err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
}
