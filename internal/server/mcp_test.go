package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/synapse-wiki/synapse/internal/server/servertest"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/ops"
)

// TestMCP_OutputSchemas calls every tool of the table on the corpus vault
// and validates each structuredContent against the tool's outputSchema
// (every tool declares one).
func TestMCP_OutputSchemas(t *testing.T) {
	t.Setenv(ops.ResearchCmdEnv, "cat >/dev/null; echo researched")
	s, _ := newTestService(t, ops.Table())
	testvault.Write(t, s.vault, "raw/sources/notes/schema.md", "# A source\n\ntext\n")
	p := startStdioPeer(t, s)
	p.initialize("2025-11-25")
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	var list struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				Title        string          `json:"title"`
				OutputSchema json.RawMessage `json:"outputSchema"`
				Annotations  struct {
					Title string `json:"title"`
				} `json:"annotations"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(p.next()), &list); err != nil {
		t.Fatal(err)
	}
	tools := map[string]bool{}
	schemas := map[string]*jsonschema.Schema{}
	for _, tl := range list.Result.Tools {
		name := tl.Name
		tools[name] = true
		if tl.Title == "" || tl.Annotations.Title != tl.Title {
			t.Errorf("%s: title %q, annotations.title %q", name, tl.Title, tl.Annotations.Title)
		}
		if tl.OutputSchema == nil {
			t.Fatalf("%s: no outputSchema", name)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tl.OutputSchema))
		if err != nil {
			t.Fatal(err)
		}
		comp := jsonschema.NewCompiler()
		if err := comp.AddResource(name+".json", doc); err != nil {
			t.Fatal(err)
		}
		var err2 error
		if schemas[name], err2 = comp.Compile(name + ".json"); err2 != nil {
			t.Fatalf("%s: outputSchema does not compile: %v", name, err2)
		}
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"search_wiki", map[string]any{"query": "sync notes across devices"}},
		{"search_wiki", map[string]any{"query": "zzzznothing"}},
		{"get_page", map[string]any{"title": "Home"}},
		{"list_pages", map[string]any{"limit": 3, "offset": 2}},
		{"list_pages", map[string]any{"type": "concept"}},
		{"get_graph_neighborhood", map[string]any{"title": "Home", "depth": 2}},
		{"read_source_file", map[string]any{"path": "notes/schema.md"}},
		{"write_page", map[string]any{"title": "Schema check", "content": "Links to [[Nowhere in particular]], [[Another missing page]] and [[Home]].\n", "frontmatter": map[string]any{"tags": []string{"x"}}}},
		{"write_page", map[string]any{"title": "Schema check", "content": "Links to [[Nowhere in particular]], [[Another missing page]] and [[Home]].\n", "frontmatter": map[string]any{"tags": []string{"x"}}}},
		{"get_page_history", map[string]any{"title": "Schema check"}},
		{"get_page_diff", map[string]any{"title": "Schema check"}},
		{"restore_page", map[string]any{"title": "Schema check", "rev": 1}},
		{"recent_activity", map[string]any{"since": "24h"}},
		{"list_reviews", map[string]any{"status": "all", "type": "missing-page", "limit": 5}},
		{"trigger_source_rescan", nil},
	}
	seen := map[string]bool{}
	id := 100
	// bare is a call of a tool this test has no arguments for (a row
	// added to the table since): without arguments it must answer, or
	// refuse them as invalid
	check := func(tool string, args map[string]any, bare ...bool) map[string]any {
		t.Helper()
		id++
		a, _ := json.Marshal(args)
		if args == nil {
			a = []byte("{}")
		}
		p.send(callMsg(id, tool, string(a)))
		var res struct {
			Result struct {
				IsError           bool              `json:"isError"`
				Content           []mcp.TextContent `json:"content"`
				StructuredContent json.RawMessage   `json:"structuredContent"`
			} `json:"result"`
		}
		line := p.next()
		if err := json.Unmarshal([]byte(line), &res); err != nil {
			t.Fatalf("%s: %v: %s", tool, err, line)
		}
		if res.Result.IsError && len(bare) > 0 && len(res.Result.Content) == 1 && strings.Contains(res.Result.Content[0].Text, `"code":"invalid"`) {
			t.Logf("%s needs arguments this test does not give: %s", tool, res.Result.Content[0].Text)
			seen[tool] = true
			return nil
		}
		if res.Result.IsError || res.Result.StructuredContent == nil {
			t.Fatalf("%s %v: %s", tool, args, line)
		}
		data := res.Result.StructuredContent
		if res.Result.Content[0].Text != string(data) {
			t.Errorf("%s: the text content is not the structured content", tool)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if err := schemas[tool].Validate(inst); err != nil {
			t.Errorf("%s %v: structuredContent does not match outputSchema: %v\n%s", tool, args, err, data)
		}
		seen[tool] = true
		var m map[string]any
		json.Unmarshal(data, &m)
		return m
	}
	for _, cl := range calls {
		check(cl.tool, cl.args)
	}
	pending := check("list_reviews", map[string]any{"limit": 2})
	items, _ := pending["items"].([]any)
	if len(items) < 2 {
		t.Fatalf("want two pending reviews: %v", pending)
	}
	check("resolve_review", map[string]any{"id": items[0].(map[string]any)["id"], "action": "dismiss"})
	check("resolve_review", map[string]any{"id": items[1].(map[string]any)["id"], "action": "deep-research"})
	for _, name := range tableTools(ops.Table(), "") {
		if !seen[name] {
			check(name, nil, true)
		}
	}
	for name := range tools {
		if !seen[name] {
			t.Errorf("%s was not called", name)
		}
	}
	if want := tableTools(ops.Table(), ""); len(seen) != len(want) {
		t.Errorf("%d tools called, want the %d of the table", len(seen), len(want))
	}
}

// TestMCP_OwnSchemasCoverResults: a result type that encodes itself
// (json.Marshaler) needs a schema in ownSchemas, or the generated schema
// would say nothing true about it.
func TestMCP_OwnSchemasCoverResults(t *testing.T) {
	marshaler := reflect.TypeFor[json.Marshaler]()
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, where string)
	walk = func(typ reflect.Type, where string) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		if typ.Implements(marshaler) || reflect.PointerTo(typ).Implements(marshaler) {
			base := typ
			for base.Kind() == reflect.Pointer {
				base = base.Elem()
			}
			if _, ok := ownSchemas[base]; !ok {
				t.Errorf("%s: %s encodes itself and has no entry in ownSchemas", where, typ)
			}
			return
		}
		switch typ.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(typ.Elem(), where)
		case reflect.Struct:
			for i := 0; i < typ.NumField(); i++ {
				walk(typ.Field(i).Type, where+"."+typ.Field(i).Name)
			}
		}
	}
	for _, op := range ops.Table() {
		if op.MCP != "" {
			walk(op.Out, op.MCP)
		}
	}
}

// TestMCP_SchemasHoldEveryParameter: what a tool accepts is in its input
// schema, and what is not in it is refused (list_pages offset and
// tag, list_reviews type and offset, write_page's top-level tags and type
// were accepted though hidden).
func TestMCP_SchemasHoldEveryParameter(t *testing.T) {
	for _, op := range ops.Table() {
		if op.MCP == "" {
			continue
		}
		props := inputSchema(op, false)["properties"].(map[string]any)
		for _, f := range ops.Fields(op.In) {
			if _, ok := props[f.Name]; ok == f.NoMCP {
				t.Errorf("%s: parameter %s in schema %v, mcp:\"-\" %v", op.MCP, f.Name, ok, f.NoMCP)
			}
		}
	}
	for tool, names := range map[string][]string{"list_pages": {"offset", "tag", "type", "limit"}, "list_reviews": {"type", "offset", "status", "limit"}} {
		props := inputSchema(ops.ByTool(tool), false)["properties"].(map[string]any)
		for _, n := range names {
			if props[n] == nil {
				t.Errorf("%s: %s is not in the input schema", tool, n)
			}
		}
	}
	s, _ := newTestService(t, ops.Table())
	c, err := client.NewInProcessClient(s.newMCPServer(false))
	if err != nil {
		t.Fatal(err)
	}
	servertest.StartClient(t, c)
	for _, name := range []string{"tags", "type", "sources", "aliases"} {
		out, isErr := servertest.MCPCall(t, c, "write_page", map[string]any{"title": "Hidden", "content": "x", name: []string{"a"}})
		if !isErr || out["code"] != "invalid" || !strings.Contains(fmt.Sprint(out["error"]), `unknown parameter "`+name+`" (give it inside frontmatter`) {
			t.Errorf("write_page with top-level %s: %v", name, out)
		}
	}
	if _, err := os.Stat(s.vault.Abs("wiki/concepts/hidden.md")); err == nil {
		t.Error("a refused write_page wrote its page")
	}
	out, isErr := servertest.MCPCall(t, c, "list_pages", map[string]any{"offset": 170, "limit": 10})
	if isErr || len(out["pages"].([]any)) != 3 {
		t.Errorf("list_pages offset=170: %v", out)
	}
}

// TestMCP_Annotations: every tool's annotations follow its row, and every
// row with an MCP name carries what a tool needs (a title); a failure
// names the row.
func TestMCP_Annotations(t *testing.T) {
	for _, op := range ops.Table() {
		if op.MCP == "" {
			if op.Title != "" || op.ToolHelp != "" {
				t.Errorf("row %s has a tool Title or ToolHelp but no MCP name", op.Name)
			}
			continue
		}
		a := toolAnnotations(op)
		if *a.ReadOnlyHint != (op.Access == ops.Read) {
			t.Errorf("%s: readOnlyHint %v", op.MCP, *a.ReadOnlyHint)
		}
		wantOpen := op.MCP == "resolve_review" // deep-research runs $SYNAPSE_RESEARCH_CMD
		if *a.OpenWorldHint != wantOpen {
			t.Errorf("%s: openWorldHint %v, want %v", op.MCP, *a.OpenWorldHint, wantOpen)
		}
		if op.Title == "" {
			t.Errorf("row %s: MCP tool %s has no Title (every tool has a display name)", op.Name, op.MCP)
		}
	}
}

// gateRows are test rows whose calls block until the test lets them go,
// to cancel them mid-flight.
type gateRows struct {
	list     []*ops.Op
	started  chan string   // the op's name, when a call starts
	release  chan struct{} // one receive lets one call finish
	sawDone  chan bool     // wait_test: whether it saw its context end
	finished atomic.Int32  // hold_test calls that ran to the end
	runs     atomic.Int32  // hold_test calls that started
}

func newGateRows() *gateRows {
	g := &gateRows{started: make(chan string, 8), release: make(chan struct{}), sawDone: make(chan bool, 8)}
	wait := ops.NewOp(ops.Op{Name: "test.wait", Summary: "Wait for release or cancellation", MCP: "wait_test", Access: ops.Read},
		func(ctx context.Context, e *ops.Env, in *emptyIn) (*bulkOut, error) {
			g.started <- "wait"
			select {
			case <-ctx.Done():
				g.sawDone <- true
				return nil, ctx.Err()
			case <-g.release:
				g.sawDone <- false
				return &bulkOut{Count: 1}, nil
			}
		})
	hold := ops.NewOp(ops.Op{Name: "test.hold", Summary: "A write that holds until released", MCP: "hold_test", Access: ops.Write},
		func(ctx context.Context, e *ops.Env, in *emptyIn) (*bulkOut, error) {
			g.runs.Add(1)
			g.started <- "hold"
			<-g.release
			if ctx.Err() != nil {
				return nil, fmt.Errorf("a started write saw its caller's cancellation")
			}
			g.finished.Add(1)
			return &bulkOut{Count: int(g.finished.Load())}, nil
		})
	g.list = append(ops.Table(), wait, hold)
	return g
}

// stdioPeer drives serveStdio over pipes, as an MCP client does.
type stdioPeer struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

func startStdioPeer(t *testing.T, s *Service) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, lines: make(chan string, 64), done: make(chan error, 1)}
	go func() {
		p.done <- s.serveStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	return p
}

func (p *stdioPeer) send(msg string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, msg+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

func (p *stdioPeer) next() string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatal("the server closed stdout")
		}
		return l
	case <-time.After(15 * time.Second):
		p.t.Fatal("no response")
	}
	return ""
}

// close ends stdin and returns everything written after; serveStdio
// answers every request it read before it returns.
func (p *stdioPeer) close() []string {
	p.t.Helper()
	p.in.Close()
	var rest []string
	for l := range p.lines {
		rest = append(rest, l)
	}
	if err := <-p.done; err != nil {
		p.t.Fatal(err)
	}
	return rest
}

func (p *stdioPeer) initialize(version string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	if l := p.next(); !strings.Contains(l, `"protocolVersion":"`+version+`"`) {
		p.t.Fatalf("initialize: %s", l)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func callMsg(id int, tool string, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

func cancelMsg(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"test"}}`, id)
}

func hasID(lines []string, id int) bool {
	re := regexp.MustCompile(fmt.Sprintf(`"id":%d[,}]`, id))
	for _, l := range lines {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

func waitStarted(t *testing.T, g *gateRows, want string) {
	t.Helper()
	select {
	case got := <-g.started:
		if got != want {
			t.Fatalf("%s started, want %s", got, want)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("%s did not start", want)
	}
}

// TestMCPStdio_Cancel: a cancelled read stops and sends no result; a
// cancelled write that has started finishes (with its caller's
// cancellation kept from it) and sends no result; one that has not
// started never starts (a cancelled call once was answered with
// "internal: context canceled").
func TestMCPStdio_Cancel(t *testing.T) {
	g := newGateRows()
	s, _ := newTestService(t, g.list)
	p := startStdioPeer(t, s)
	p.initialize("2025-06-18")

	p.send(callMsg(1, "wait_test", `{}`))
	waitStarted(t, g, "wait")
	p.send(cancelMsg(1))
	if saw := <-g.sawDone; !saw {
		t.Fatal("the cancelled read did not see its context end")
	}

	p.send(callMsg(2, "hold_test", `{}`))
	waitStarted(t, g, "hold")
	p.send(callMsg(3, "hold_test", `{}`)) // queued behind 2 on the write lock
	time.Sleep(50 * time.Millisecond)     // let 3 reach the lock (it may not start either way)
	p.send(cancelMsg(2))
	p.send(cancelMsg(3))
	p.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if l := p.next(); !strings.Contains(l, `"id":4`) {
		t.Fatalf("ping: %s", l)
	}
	g.release <- struct{}{} // 2 finishes
	p.send(callMsg(5, "hold_test", `{}`))
	waitStarted(t, g, "hold")
	g.release <- struct{}{}
	rest := p.close()
	for _, id := range []int{1, 2, 3} {
		if hasID(rest, id) {
			t.Errorf("cancelled request %d was answered: %v", id, rest)
		}
	}
	if !hasID(rest, 5) {
		t.Errorf("request 5 was not answered: %v", rest)
	}
	if g.runs.Load() != 2 || g.finished.Load() != 2 {
		t.Errorf("hold_test: %d started, %d finished; want 2 and 2 (2 finished, 3 never started, 5 ran)", g.runs.Load(), g.finished.Load())
	}
}

// TestMCPStdio_CancelDeepResearch: cancelling resolve_review deep-research
// stops the research command and leaves the item as it was (it once
// still ran and changed the item).
func TestMCPStdio_CancelDeepResearch(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	t.Setenv(ops.ResearchCmdEnv, "touch "+started+"; sleep 30; echo researched")
	s, _ := newTestService(t, ops.Table())
	if _, err := servertest.CallOp(s, "write_page", map[string]any{"title": "Research seed", "content": "See [[A topic to research]].\n"}); err != nil {
		t.Fatal(err)
	}
	out, err := servertest.CallOp(s, "list_reviews", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	items := out.(*ops.ListReviewsOut).Items
	if len(items) != 1 {
		t.Fatalf("reviews: %+v", items)
	}
	id := items[0].ID
	p := startStdioPeer(t, s)
	p.initialize("2025-11-25")
	t0 := time.Now()
	p.send(callMsg(1, "resolve_review", fmt.Sprintf(`{"id":%q,"action":"deep-research"}`, id)))
	servertest.Eventually(t, "the research command", func() bool { _, err := os.Stat(started); return err == nil })
	p.send(cancelMsg(1))
	rest := p.close()
	if hasID(rest, 1) {
		t.Errorf("the cancelled call was answered: %v", rest)
	}
	if d := time.Since(t0); d > 25*time.Second {
		t.Errorf("the research command was not stopped (%v)", d)
	}
	out, err = servertest.CallOp(s, "list_reviews", map[string]any{"status": "all"})
	if err != nil {
		t.Fatal(err)
	}
	after := out.(*ops.ListReviewsOut).Items
	if len(after) != 1 || after[0].Status != ops.StatusPending || after[0].Resolution != "" || after[0].ReviewedAt != nil {
		t.Errorf("the item changed: %+v", after)
	}
	// and it can be decided now: the claim was released
	if _, err := servertest.CallOp(s, "resolve_review", map[string]any{"id": id, "action": "skip"}); err != nil {
		t.Errorf("after the cancelled deep-research: %v", err)
	}
}

// mcpPost sends one POST /mcp and returns the status, the session header
// and the body.
func mcpPost(t *testing.T, url, session, body string, hdr ...string) (int, string, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set(sessionHeader, session)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get(sessionHeader), string(data), res.Header
}

func mcpDo(t *testing.T, method, url, session string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	if session != "" {
		req.Header.Set(sessionHeader, session)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func initBody(version string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`
}

const listBody = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

func openSession(t *testing.T, url, version string) string {
	t.Helper()
	st, sid, body, _ := mcpPost(t, url, "", initBody(version))
	if st != 200 || sid == "" || !strings.Contains(body, `"protocolVersion":"`+version+`"`) {
		t.Fatalf("initialize: %d %q %s", st, sid, body)
	}
	return sid
}

// newSessionHTTP serves the HTTP stack with a session table the test can
// reach.
func newSessionHTTP(t *testing.T, s *Service) (*httptest.Server, *sessionTable) {
	t.Helper()
	hs := s.newHTTPServer(Config{HTTP: true, Write: true}, testToken)
	ts := httptest.NewServer(hs.srv.Handler)
	t.Cleanup(ts.Close)
	return ts, hs.mcp.sessions
}

// TestMCPHTTP_Sessions: sessions are real: DELETE ends one and
// its id is 404 after, an unknown id is 404, a missing id is 400, GET is
// 405, and an unsupported protocol version header is 400.
func TestMCPHTTP_Sessions(t *testing.T) {
	s, _ := newTestService(t, ops.Table())
	ts, table := newSessionHTTP(t, s)
	if st, _, body, _ := mcpPost(t, ts.URL, "", listBody); st != 400 || !strings.Contains(body, "missing Mcp-Session-Id") {
		t.Errorf("no session id: %d %s", st, body)
	}
	if st, _, body, _ := mcpPost(t, ts.URL, "6d6370736573", listBody); st != 404 || !strings.Contains(body, `"code":-32600`) {
		t.Errorf("made-up session id: %d %s", st, body)
	}
	if st, _, body, _ := mcpPost(t, ts.URL, "mcp-session-2f1b2a8e-4b0e-4e7e-9d52-1c2d3e4f5a6b", listBody); st != 404 {
		t.Errorf("well-formed made-up session id: %d %s", st, body)
	}
	sid := openSession(t, ts.URL, "2025-06-18")
	if st, _, body, _ := mcpPost(t, ts.URL, sid, listBody, "MCP-Protocol-Version", "2025-06-18"); st != 200 || !strings.Contains(body, `"name":"write_page"`) {
		t.Errorf("tools/list in the session: %d %s", st, body)
	}
	if st, _, body, _ := mcpPost(t, ts.URL, sid, listBody, "MCP-Protocol-Version", "1999-01-01"); st != 400 || !strings.Contains(body, "unsupported MCP-Protocol-Version") {
		t.Errorf("bogus protocol version: %d %s", st, body)
	}
	if st, _, _, _ := mcpPost(t, ts.URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); st != 202 {
		t.Errorf("notification: %d, want 202", st)
	}
	if st := mcpDo(t, "GET", ts.URL, sid); st != 405 {
		t.Errorf("GET /mcp: %d, want 405", st)
	}
	if st := mcpDo(t, "DELETE", ts.URL, ""); st != 400 {
		t.Errorf("DELETE without a session: %d, want 400", st)
	}
	if st := mcpDo(t, "DELETE", ts.URL, sid); st != 204 {
		t.Errorf("DELETE: %d, want 204", st)
	}
	if st, _, body, _ := mcpPost(t, ts.URL, sid, listBody); st != 404 {
		t.Errorf("the deleted session still works: %d %s", st, body)
	}
	if st := mcpDo(t, "DELETE", ts.URL, sid); st != 404 {
		t.Errorf("DELETE of an ended session: %d, want 404", st)
	}
	if n := table.live(); n != 0 {
		t.Errorf("%d live sessions after DELETE", n)
	}
}

// TestMCPHTTP_SessionCapAndExpiry: at most max sessions live; a new one
// ends the one idle the longest; a session unused for the idle time ends.
func TestMCPHTTP_SessionCapAndExpiry(t *testing.T) {
	s, _ := newTestService(t, ops.Table())
	ts, table := newSessionHTTP(t, s)
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	table.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	table.max = 3
	a := openSession(t, ts.URL, "2025-06-18")
	advance(time.Second)
	b := openSession(t, ts.URL, "2025-06-18")
	advance(time.Second)
	c := openSession(t, ts.URL, "2025-06-18")
	advance(time.Second)
	if st, _, _, _ := mcpPost(t, ts.URL, a, listBody); st != 200 { // a is now the most recent
		t.Fatalf("a: %d", st)
	}
	advance(time.Second)
	d := openSession(t, ts.URL, "2025-11-25")
	for sid, want := range map[string]int{a: 200, b: 404, c: 200, d: 200} {
		if st, _, _, _ := mcpPost(t, ts.URL, sid, listBody); st != want {
			t.Errorf("session %s: %d, want %d", sid[:6], st, want)
		}
	}
	if n := table.live(); n != 3 {
		t.Errorf("%d live sessions, want the cap 3", n)
	}
	advance(mcpSessionIdle + time.Second)
	if st, _, _, _ := mcpPost(t, ts.URL, a, listBody); st != 404 {
		t.Errorf("a session idle past %v: %d, want 404", mcpSessionIdle, st)
	}
	if n := table.live(); n != 0 {
		t.Errorf("%d live sessions after the idle time", n)
	}
}

// TestMCPHTTP_BatchesAndCancel: a batch is served under 2025-03-26 and
// refused under 2025-06-18; a cancelled request's POST ends without its
// result.
func TestMCPHTTP_BatchesAndCancel(t *testing.T) {
	g := newGateRows()
	s, _ := newTestService(t, g.list)
	ts, _ := newSessionHTTP(t, s)
	old := openSession(t, ts.URL, "2025-03-26")
	batch := `[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_page","arguments":{"title":"Home"}}}]`
	st, _, body, _ := mcpPost(t, ts.URL, old, batch)
	var arr []map[string]any
	if st != 200 || json.Unmarshal([]byte(body), &arr) != nil || len(arr) != 2 {
		t.Fatalf("2025-03-26 batch: %d %s", st, body)
	}
	if st, _, body, _ := mcpPost(t, ts.URL, old, `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`); st != 202 || body != "" {
		t.Errorf("a batch of notifications: %d %q", st, body)
	}
	cur := openSession(t, ts.URL, "2025-06-18")
	if st, _, body, _ := mcpPost(t, ts.URL, cur, batch); st != 200 || !strings.Contains(body, `"id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not part of MCP 2025-06-18`) {
		t.Errorf("2025-06-18 batch: %d %s", st, body)
	}

	type reply struct {
		status int
		body   string
		hdr    http.Header
	}
	got := make(chan reply, 1)
	go func() {
		st, _, body, hdr := mcpPost(t, ts.URL, cur, callMsg(9, "wait_test", `{}`))
		got <- reply{st, body, hdr}
	}()
	waitStarted(t, g, "wait")
	if st, _, _, _ := mcpPost(t, ts.URL, cur, cancelMsg(9)); st != 202 {
		t.Errorf("cancel: %d", st)
	}
	r := <-got
	if !<-g.sawDone {
		t.Error("the cancelled call did not see its context end")
	}
	if r.status != 200 || r.body != "" || r.hdr.Get("Content-Type") != "text/event-stream" {
		t.Errorf("the cancelled call's POST: %d %q %q; want an event stream without a message", r.status, r.hdr.Get("Content-Type"), r.body)
	}
}

// TestMCPStdio_PipelinedOrder: messages written to stdin at once are
// decided in the order they arrive, however the requests are then
// scheduled. A request sent before initialize is refused even though
// initialize, right behind it, is served first; one sent after it is
// served; a cancellation right behind its request always finds it (the
// request is never run to its end nor answered). Before, the refusal was
// decided when the request's goroutine ran: it failed 1 in 3 under -race.
func TestMCPStdio_PipelinedOrder(t *testing.T) {
	g := newGateRows()
	s, _ := newTestService(t, g.list)
	initMsg := `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		callMsg(2, "get_page", `{"title":"Home"}`),
		initMsg,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		callMsg(4, "wait_test", `{}`),
		cancelMsg(4),
	}, "\n") + "\n"
	refused := regexp.MustCompile(`^\{"jsonrpc":"2.0","id":(1|2),"error":\{"code":-32600,"message":"the session is not initialized: send initialize first"\}\}$`)
	for i := 0; i < 60; i++ {
		var out servertest.SyncBuffer
		done := make(chan error, 1)
		go func() { done <- s.serveStdio(context.Background(), strings.NewReader(in), &out) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			g.release <- struct{}{}
			t.Fatalf("run %d: the cancelled wait_test was never cancelled: %s", i, shortLines(out.String()))
		}
		lines := strings.Split(strings.TrimSpace(shortLines(out.String())), "\n")
		n := 0
		for _, l := range lines {
			switch {
			case refused.MatchString(l):
				n++
			case strings.Contains(l, `"id":"init","result"`), strings.Contains(l, `"id":3,"result":{"tools":[`):
				n += 10
			case hasID([]string{l}, 4):
				t.Fatalf("run %d: the cancelled request was answered: %.200s", i, l)
			default:
				t.Fatalf("run %d: unexpected line %.200s\nall: %s", i, l, shortLines(out.String()))
			}
		}
		if n != 22 {
			t.Fatalf("run %d: want ids 1 and 2 refused, init and 3 answered:\n%s", i, shortLines(out.String()))
		}
		select {
		case <-g.started:
			if saw := <-g.sawDone; !saw {
				t.Fatalf("run %d: the cancelled read ran to its end", i)
			}
		default:
		}
	}
}

// shortLines cuts each line of s to 160 bytes (tool lists are long).
func shortLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if len(l) > 160 {
			lines[i] = l[:160] + "…"
		}
	}
	return strings.Join(lines, "\n")
}
