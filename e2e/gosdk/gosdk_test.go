// Package gosdk drives the built synapse binary with the official Go MCP
// SDK client (github.com/modelcontextprotocol/go-sdk) over stdio and
// streamable HTTP: every tool is listed with a title and an output schema,
// every tool is called, and each structuredContent validates against its
// tool's outputSchema. It is a module of its own so that the SDK stays out
// of synapse's go.mod; scripts/e2e runs it (SYNAPSE_BIN names the binary;
// without it the test builds one).
package gosdk

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var bin string

func TestMain(m *testing.M) {
	bin = os.Getenv("SYNAPSE_BIN")
	if bin == "" {
		dir, err := os.MkdirTemp("", "synapse-gosdk-")
		if err != nil {
			panic(err)
		}
		bin = filepath.Join(dir, "synapse")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Dir = filepath.Join("..", "..")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
	}
	code := m.Run()
	os.Exit(code)
}

// tableTools are the MCP tools of the operation table and which of them
// write, as testdata/surface.golden lists them (generated from the table).
func tableTools(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "surface.golden"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^tool (\S+) (read|write)$`).FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = m[2] == "write"
	}
	if len(out) == 0 {
		t.Fatal("no tools in testdata/surface.golden")
	}
	return out
}

func synapse(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("synapse %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// makeVault is a vault with the Obsidian Help corpus and one source.
func makeVault(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	synapse(t, "init", dir)
	if err := os.CopyFS(filepath.Join(dir, "wiki"), os.DirFS(filepath.Join("..", "..", "testdata", "obsidian-help-en"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "raw", "sources", "note.md"), []byte("# A source\n\nSource text.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	synapse(t, "--vault", dir, "reindex")
	return dir
}

func connect(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "synapse-e2e-gosdk", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// exercise lists the tools and calls each of them (the write tools when
// write), validating every structured result against its tool's schema.
func exercise(t *testing.T, cs *mcp.ClientSession, write bool) {
	t.Helper()
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := tableTools(t)
	schemas := map[string]*jsonschema.Resolved{}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.Title == "" {
			t.Errorf("%s has no title", tl.Name)
		}
		if tl.Annotations == nil || tl.Annotations.ReadOnlyHint == tools[tl.Name] {
			t.Errorf("%s: annotations %+v", tl.Name, tl.Annotations)
		}
		data, err := json.Marshal(tl.OutputSchema)
		if err != nil || tl.OutputSchema == nil {
			t.Fatalf("%s: no outputSchema", tl.Name)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: outputSchema: %v", tl.Name, err)
		}
		if schemas[tl.Name], err = s.Resolve(nil); err != nil {
			t.Fatalf("%s: outputSchema does not resolve: %v", tl.Name, err)
		}
	}
	sort.Strings(names)
	var want []string
	for n, w := range tools {
		if write || !w {
			want = append(want, n)
		}
	}
	sort.Strings(want)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("tools %v, want %v", names, want)
	}
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s %v: error result %v", name, args, res.Content)
		}
		data, _ := json.Marshal(res.StructuredContent)
		var inst map[string]any
		if err := json.Unmarshal(data, &inst); err != nil || inst == nil {
			t.Fatalf("%s: structuredContent %s", name, data)
		}
		if err := schemas[name].Validate(inst); err != nil {
			t.Errorf("%s: structuredContent does not validate against outputSchema: %v\n%s", name, err, data)
		}
		if text, ok := res.Content[0].(*mcp.TextContent); !ok || strings.TrimSpace(text.Text) != string(data) && !jsonEqual(text.Text, data) {
			t.Errorf("%s: the text content is not the structured JSON", name)
		}
		return inst
	}
	call("search_wiki", map[string]any{"query": "how do I sync my notes", "k": 3})
	call("get_page", map[string]any{"title": "start here"})
	page := call("list_pages", map[string]any{"limit": 2, "offset": 1})
	if n := len(page["pages"].([]any)); n != 2 {
		t.Errorf("list_pages limit 2: %d pages", n)
	}
	nb := call("get_graph_neighborhood", map[string]any{"title": "Home", "depth": 0})
	if nb["depth"].(float64) != 1 {
		t.Errorf("depth=0 is clamped to 1, got %v", nb["depth"])
	}
	call("read_source_file", map[string]any{"path": "note.md"})
	call("get_context", map[string]any{"title": "Home", "budget": 2048})
	call("list_reviews", map[string]any{"status": "all"})
	if !write {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_page", Arguments: map[string]any{"title": "No", "content": "x"}})
		if err != nil || !res.IsError || res.StructuredContent != nil {
			t.Errorf("write_page on a read-only server: %+v %v", res, err)
		}
		return
	}
	w := call("write_page", map[string]any{"title": "Go SDK page", "content": "Written by the Go SDK. See [[Go SDK missing one]] and [[Go SDK missing two]].\n"})
	if len(w["dangling"].([]any)) != 2 {
		t.Errorf("write_page dangling: %v", w["dangling"])
	}
	reviews := call("list_reviews", map[string]any{"type": "missing-page", "limit": 100})
	var id string
	for _, it := range reviews["items"].([]any) {
		if m := it.(map[string]any); m["title"] == "Go SDK missing one" {
			id = m["id"].(string)
		}
	}
	if id == "" {
		t.Fatalf("the review filed by write_page is not listed: %v", reviews)
	}
	r := call("resolve_review", map[string]any{"id": id, "action": "skip"})
	if r["status"] != "skipped" {
		t.Errorf("resolve_review skip: %v", r)
	}
	mv := call("move_page", map[string]any{"title": "Go SDK page", "to": "Go SDK page moved"})
	if mv["path"] != "wiki/concepts/go-sdk-page-moved.md" {
		t.Errorf("move_page: %v", mv)
	}
	call("trigger_source_rescan", nil)
}

func jsonEqual(a string, b []byte) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal(b, &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}

func TestGoSDK_Stdio(t *testing.T) {
	vault := makeVault(t)
	cmd := exec.Command(bin, "--vault", vault, "serve", "--mcp-stdio")
	cs := connect(t, &mcp.CommandTransport{Command: cmd})
	exercise(t, cs, true)
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

// server is `synapse serve --http` on a free port.
type server struct {
	url, token string
	cmd        *exec.Cmd
}

func startHTTP(t *testing.T, vault string, write bool) *server {
	t.Helper()
	token := fmt.Sprintf("gosdk-%d", os.Getpid())
	args := []string{"--vault", vault, "serve", "--http", "--addr", "127.0.0.1:0"}
	if write {
		args = append(args, "--write")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "SYNAPSE_TOKEN="+token)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	s := &server{token: token, cmd: cmd}
	select {
	case s.url = <-found:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the server did not start")
	}
	return s
}

func (s *server) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(os.Interrupt)
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("server: %v", err)
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func (s *server) transport() *mcp.StreamableClientTransport {
	return &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", HTTPClient: &http.Client{Transport: bearer{s.token}}}
}

func TestGoSDK_HTTP(t *testing.T) {
	vault := makeVault(t)
	ro := startHTTP(t, vault, false)
	cs := connect(t, ro.transport())
	exercise(t, cs, false)
	cs.Close()
	ro.stop(t)

	rw := startHTTP(t, vault, true)
	defer rw.stop(t)
	cs = connect(t, rw.transport())
	exercise(t, cs, true)
	id := cs.ID()
	if id == "" {
		t.Fatal("no session id")
	}
	if err := cs.Close(); err != nil { // sends DELETE /mcp
		t.Errorf("close: %v", err)
	}
	// the ended session is gone
	req, _ := http.NewRequest("POST", rw.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	res, err := (&http.Client{Transport: bearer{rw.token}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("a request in the closed session: %d %s; want 404", res.StatusCode, body)
	}
}
