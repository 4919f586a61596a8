// Package servertest holds what the tests of a running server share, in
// package server and in the CLI's tests beside a server: a live service
// run in the test's process, its log sink, a vault with the corpus, a scan
// that can be held, and an MCP client's calls. It does not import package
// server (whose own tests use it): a service is reached through the small
// interfaces below.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/server/sock"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// Token is the bearer token of the tests' HTTP servers.
const Token = "test-token-0123456789"

// SyncBuffer is a log sink safe for concurrent writers.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Eventually polls cond until it holds (a liveness bound, not a timing
// assertion: latencies are measured by benchmarks and scripts).
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// LiveVault is a vault with the Obsidian Help corpus, a source and a
// never-scanned store, at a fixed path under dir.
func LiveVault(t testing.TB, dir string) *vault.Vault {
	t.Helper()
	os.RemoveAll(dir)
	v, _, err := vault.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := testvault.CopyTree(testvault.CorpusDir(), v.Abs(vault.WikiDir)); err != nil {
		t.Fatal(err)
	}
	testvault.Write(t, v, "raw/sources/notes/meeting.md", "# Meeting\n\nWe talked about <b>links</b> & graphs.\n")
	return v
}

// Service is what the helpers need of a server.Service.
type Service interface {
	Run(ctx context.Context, token string, stdin io.Reader, stdout io.Writer) error
	Call(ctx context.Context, readOnly bool, op *ops.Op, raw []byte) (any, error)
	Ready() <-chan struct{}
	Primary() bool
}

// Live is a service running in this process as `serve --mcp-stdio` does
// (its Config must say Stdio), until Stop (or the end of the test).
type Live struct {
	S     Service
	Logs  *SyncBuffer
	stdin *io.PipeWriter
	done  chan error
	once  sync.Once
	err   error
}

// Run runs s over v and waits until it holds the store (and listens on
// its socket) or forwards to a server that does.
func Run(t testing.TB, s Service, v *vault.Vault, logs *SyncBuffer) *Live {
	t.Helper()
	pr, pw := io.Pipe()
	ls := &Live{S: s, Logs: logs, stdin: pw, done: make(chan error, 1)}
	go func() { ls.done <- s.Run(context.Background(), "", pr, io.Discard) }()
	t.Cleanup(func() { ls.Stop(t) })
	select {
	case <-s.Ready():
	case err := <-ls.done:
		t.Fatalf("serve stopped: %v\n%s", err, logs.String())
	case <-time.After(15 * time.Second):
		t.Fatalf("the store was not opened: %s", logs.String())
	}
	if s.Primary() {
		Eventually(t, "the socket", func() bool {
			sc, err := sock.Dial(v)
			if err == nil {
				sc.Close()
			}
			return err == nil
		})
	}
	return ls
}

// Stop ends the stdio session, as an MCP client closing its pipe does.
func (ls *Live) Stop(t testing.TB) {
	ls.once.Do(func() {
		ls.stdin.Close()
		select {
		case ls.err = <-ls.done:
		case <-time.After(30 * time.Second):
			t.Errorf("server did not stop; logs:\n%s", ls.Logs.String())
		}
		if ls.err != nil {
			t.Errorf("server: %v", ls.err)
		}
	})
}

// CallOp runs an operation (by MCP tool or operation name) through a
// service's dispatch, as a transport does.
func CallOp(s Service, tool string, args any) (any, error) {
	raw, _ := json.Marshal(args)
	op := ops.ByTool(tool)
	if op == nil {
		op = ops.Lookup(tool)
	}
	return s.Call(context.Background(), false, op, raw)
}

// ResultJSON is a result as every surface encodes it.
func ResultJSON(t testing.TB, out any) string {
	t.Helper()
	data, err := ops.MarshalJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// PageVia reads a page through the service (zero when absent; a proxy's
// result is the primary's JSON).
func PageVia(s Service, title string) (p ops.GetPageOut) {
	out, err := CallOp(s, "get_page", map[string]any{"title": title})
	if err == nil {
		data, _ := ops.MarshalJSON(out)
		json.Unmarshal(data, &p)
	}
	return p
}

// BlockingPages holds the start-up reconciliation inside the scanner (the
// search indexer is called in the scan's write transactions) until
// Release is closed, so a test can look at a server while its first scan
// runs. Entered is closed when the scan reaches it.
type BlockingPages struct {
	index.PageIndexer
	once    sync.Once
	Entered chan struct{}
	Release chan struct{}
}

// HoldScans puts a BlockingPages in front of env's page indexer.
func HoldScans(env *ops.Env) *BlockingPages {
	bp := &BlockingPages{PageIndexer: env.Index.Pages, Entered: make(chan struct{}), Release: make(chan struct{})}
	env.Index.Pages = bp
	return bp
}

// IndexPages waits for Release, then indexes.
func (b *BlockingPages) IndexPages(tx *store.Tx, pages []index.IndexedPage) error {
	b.once.Do(func() { close(b.Entered) })
	<-b.Release
	if b.PageIndexer == nil {
		return nil
	}
	return b.PageIndexer.IndexPages(tx, pages)
}

// RemovePages passes through.
func (b *BlockingPages) RemovePages(tx *store.Tx, docs []uint32) error {
	if b.PageIndexer == nil {
		return nil
	}
	return b.PageIndexer.RemovePages(tx, docs)
}

// ReleaseOnce closes Release unless it is closed already.
func (b *BlockingPages) ReleaseOnce() {
	select {
	case <-b.Release:
	default:
		close(b.Release)
	}
}

// MCPCall calls a tool and returns the decoded text result and isError.
func MCPCall(t testing.TB, c *client.Client, tool string, args any) (map[string]any, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content items", tool, len(res.Content))
	}
	text := res.Content[0].(mcp.TextContent).Text
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("%s: text is not JSON: %s", tool, text)
	}
	// a result carries structuredContent (matching the output schema); an
	// error result does not, the schema being that of a success
	if (res.StructuredContent == nil) != res.IsError {
		t.Errorf("%s: isError %v with structuredContent %v", tool, res.IsError, res.StructuredContent != nil)
	}
	return out, res.IsError
}

// StartClient starts an MCP client and initializes its session.
func StartClient(t testing.TB, c *client.Client) {
	t.Helper()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "synapse-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
}

// ToolNames lists the tools the client's server offers, by name.
func ToolNames(t testing.TB, c *client.Client) map[string]mcp.Tool {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

// Response is a REST answer: its status, headers, body as JSON (nil when
// it is not an object) and as text.
type Response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

// REST sends one request to the server at url with the test token (hdr
// are header name and value pairs; an empty value removes the header).
func REST(t testing.TB, url, method, path, body string, hdr ...string) Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+Token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	r := Response{Status: res.StatusCode, Header: res.Header, Raw: string(data)}
	_ = json.Unmarshal(data, &r.Body)
	return r
}
