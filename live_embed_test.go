package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/server/servertest"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
)

// gateProvider is an embeddings endpoint whose answers can be held back:
// while closed, every request waits.
type gateProvider struct {
	srv    *httptest.Server
	open   atomic.Bool
	texts  atomic.Int64
	waiter atomic.Int64 // requests waiting at the gate now
}

func newGateProvider(t *testing.T) *gateProvider {
	g := &gateProvider{}
	g.open.Store(true)
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		json.NewDecoder(r.Body).Decode(&req)
		g.waiter.Add(1)
		for !g.open.Load() {
			select {
			case <-r.Context().Done():
				g.waiter.Add(-1)
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		g.waiter.Add(-1)
		g.texts.Add(int64(len(req.Input)))
		var data []string
		for i, s := range req.Input {
			v := make([]string, 16)
			for j := range v {
				v[j] = "0.01"
			}
			for _, w := range strings.Fields(strings.ToLower(s)) {
				v[len(w)%16] = fmt.Sprint(len(w))
			}
			data = append(data, fmt.Sprintf(`{"index":%d,"embedding":[%s]}`, i, strings.Join(v, ",")))
		}
		fmt.Fprintf(w, `{"data":[%s]}`, strings.Join(data, ","))
	}))
	t.Cleanup(func() { g.open.Store(true); g.srv.Close() })
	return g
}

func embedStatusVia(t *testing.T, s servertest.Service) *ops.EmbedStatus {
	t.Helper()
	out, err := servertest.CallOp(s, "status", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	return out.(*ops.StatusOut).Embeddings
}

// TestLive_BackgroundEmbedding: under serve, pages are embedded in the
// background once the lexical index is current; while the provider is
// stuck, a write and a search answer at once (the write is not held behind
// the embedding, the search answers lexically); a page written meanwhile
// is embedded when the provider answers again; `synapse embed` beside the
// server runs in it.
func TestLive_BackgroundEmbedding(t *testing.T) {
	g := newGateProvider(t)
	v, _, err := vault.Init(filepath.Join(t.TempDir(), "v"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		testvault.Write(t, v, fmt.Sprintf("wiki/concepts/topic-%02d.md", i), fmt.Sprintf("# Topic %d\n\nText about topic %d.\n\n## More\n\nDetails %d.\n", i, i, i))
	}
	cfg := "embeddings:\n  url: " + g.srv.URL + "/v1/embeddings\n  model: gate-16\n  batch: 4\n  query_timeout: 300ms\n"
	testvault.TrustedConfig(t, v, cfg)
	ls := startLive(t, v)
	servertest.Eventually(t, "the pages embedded in the background", func() bool {
		st := embedStatusVia(t, ls.s)
		return st.Embedded == 12 && st.Pending == 0
	})
	// the provider gets stuck; a new page makes the worker try again
	g.open.Store(false)
	if _, err := servertest.CallOp(ls.s, "write_page", map[string]any{"title": "Stuck", "content": "Written while the provider is stuck.\n"}); err != nil {
		t.Fatal(err)
	}
	servertest.Eventually(t, "the worker waiting on the provider", func() bool { return g.waiter.Load() > 0 })
	done := make(chan error, 1)
	go func() {
		_, err := servertest.CallOp(ls.s, "write_page", map[string]any{"title": "Second", "content": "Another page, while embedding waits.\n"})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write waited for the background embedding")
	}
	out, err := servertest.CallOp(ls.s, "search_wiki", map[string]any{"query": "topic details"})
	if err != nil {
		t.Fatal(err)
	}
	if r := out.(*ops.SearchOut); r.Mode != "lexical" || !strings.Contains(r.Note, "did not answer") || len(r.Hits) == 0 {
		t.Errorf("search while the provider is stuck: mode %s note %q hits %d", r.Mode, r.Note, len(r.Hits))
	}
	g.open.Store(true)
	servertest.Eventually(t, "the pages written meanwhile embedded", func() bool {
		// a rescan (as the watcher runs) asks the worker for a run
		if _, err := servertest.CallOp(ls.s, "trigger_source_rescan", map[string]any{}); err != nil {
			t.Fatal(err)
		}
		st := embedStatusVia(t, ls.s)
		return st.Embedded == 14 && st.Pending == 0
	})
	r := runCLI(v, "", "embed", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"current":14`) {
		t.Fatalf("synapse embed beside the server: %+v", r)
	}
	if !strings.Contains(ls.Logs.String(), "embedded 12 pages") {
		t.Errorf("no log line for the background run:\n%s", ls.Logs.String())
	}
}

// TestCLI_EmbedLeavesTheStoreFree: `synapse embed` run alone (no server)
// holds the store only while it commits, not while it waits on the
// provider: meanwhile other verbs read and write the vault at once, a
// second `synapse embed` is told a run is in progress, and the first run
// finishes with every page it set out to embed.
func TestCLI_EmbedLeavesTheStoreFree(t *testing.T) {
	g := newGateProvider(t)
	v, _, err := vault.Init(filepath.Join(t.TempDir(), "v"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		testvault.Write(t, v, fmt.Sprintf("wiki/concepts/topic-%02d.md", i), fmt.Sprintf("# Topic %d\n\nText about topic %d.\n", i, i))
	}
	cfg := "embeddings:\n  url: " + g.srv.URL + "/v1/embeddings\n  model: gate-16\n  batch: 2\n  concurrency: 1\n  timeout: 60s\n"
	testvault.TrustedConfig(t, v, cfg)
	if r := runCLI(v, "", "reindex"); r.code != 0 {
		t.Fatalf("reindex: %+v", r)
	}
	g.open.Store(false)
	done := make(chan cliResult, 1)
	go func() { done <- runCLI(v, "", "embed", "--json") }()
	servertest.Eventually(t, "the embed run waiting on the provider", func() bool { return g.waiter.Load() > 0 })
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"search", "topic", "--json"}, `"hits":[{`},
		{"Written while embed waits.\n", []string{"page", "write", "Meanwhile", "--json"}, `"path":"wiki/concepts/meanwhile.md"`},
		{"", []string{"status", "--json"}, `"pages":7`},
		{"", []string{"page", "get", "Meanwhile", "--json"}, `Written while embed waits.`},
	} {
		start := time.Now()
		r := runCLI(v, c.stdin, c.args...)
		if r.code != 0 || !strings.Contains(r.stdout, c.want) {
			t.Errorf("synapse %s while embed waits: exit %d, stdout %.300s, stderr %s", strings.Join(c.args, " "), r.code, r.stdout, r.stderr)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("synapse %s waited %v", strings.Join(c.args, " "), d)
		}
	}
	if r := runCLI(v, "", "embed"); r.code != 5 || !strings.Contains(r.stderr, "an embedding run is in progress") {
		t.Errorf("a second embed beside the first: %+v", r)
	}
	select {
	case r := <-done:
		t.Fatalf("embed ended before the provider answered: %+v", r)
	default:
	}
	g.open.Store(true)
	r := <-done
	if r.code != 0 || !strings.Contains(r.stdout, `"embedded":6`) {
		t.Fatalf("embed: %+v", r)
	}
	// the page written meanwhile is embedded by the next run
	if r := runCLI(v, "", "embed", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"embedded":1`) || !strings.Contains(r.stdout, `"complete":true`) {
		t.Errorf("second embed: %+v", r)
	}
}
