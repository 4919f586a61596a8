package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/server/servertest"
	"github.com/synapse-wiki/synapse/internal/server/sock"
	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/internal/vaultgen"
	"github.com/synapse-wiki/synapse/vault"
)

// stdioServe is the built binary running `serve --mcp-stdio`, driven as an
// MCP client drives it: JSON-RPC lines on its stdin and stdout.
type stdioServe struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *servertest.SyncBuffer
	mu     sync.Mutex
	id     int
}

func startStdioServe(t *testing.T, bin string, v *vault.Vault) *stdioServe {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--mcp-stdio", "--vault", v.Root)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &stdioServe{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), stderr: &servertest.SyncBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.kill() })
	if _, err := s.request("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "synapse-test", "version": "1"},
	}); err != nil {
		t.Fatalf("initialize: %v\n%s", err, s.stderr.String())
	}
	s.mu.Lock()
	io.WriteString(s.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	s.mu.Unlock()
	return s
}

func (s *stdioServe) request(method string, params any) (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.id++
	id := s.id
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := s.in.Write(append(msg, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var r struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &r) != nil || r.ID != id {
			continue
		}
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, r.Error)
		}
		return r.Result, nil
	}
}

// tool calls a tool and returns its text and error flag.
func (s *stdioServe) tool(name string, args any) (string, bool, error) {
	res, err := s.request("tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return "", false, err
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		return "", false, fmt.Errorf("%s: bad result %s", name, res)
	}
	return r.Content[0].Text, r.IsError, nil
}

func (s *stdioServe) mustTool(t *testing.T, name string, args any) string {
	t.Helper()
	text, isErr, err := s.tool(name, args)
	if err != nil || isErr {
		t.Fatalf("%s: %v %s\n%s", name, err, text, s.stderr.String())
	}
	return text
}

func (s *stdioServe) kill() {
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}

// stop closes stdin, as an MCP client does, and waits for a clean exit.
func (s *stdioServe) stop(t *testing.T) {
	t.Helper()
	s.in.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v\n%s", err, s.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not stop\n%s", s.stderr.String())
	}
}

// binCLI runs the built binary as a CLI verb against v.
func binCLI(bin string, v *vault.Vault, stdin string, args ...string) cliResult {
	cmd := exec.Command(bin, append(args, "--vault", v.Root)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	return cliResult{out.String(), errb.String(), code}
}

// The issue's first acceptance test, with real processes: while `serve
// --mcp-stdio` holds the vault, `synapse search`, `synapse page write` and
// `synapse review resolve` in other processes succeed, and the server's
// next tool call sees each change.
func TestLive_StdioServerAndCLIProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := synapseBinary(t)
	v := testvault.WithCorpus(t)
	srv := startStdioServe(t, bin, v)

	r := binCLI(bin, v, "", "review", "add", "--type", "suggestion", "--title", "Decide from the shell")
	if r.code != 0 {
		t.Fatalf("review add: %+v", r)
	}
	id := strings.TrimSpace(r.stdout)
	r = binCLI(bin, v, "", "review", "resolve", id, "--action", "dismiss")
	if r.code != 0 || !strings.Contains(r.stdout, "dismissed") {
		t.Fatalf("review resolve: %+v", r)
	}
	if text := srv.mustTool(t, "list_reviews", map[string]any{"status": "dismissed"}); !strings.Contains(text, id) {
		t.Fatalf("the server does not see the resolution: %s", text)
	}

	r = binCLI(bin, v, "Written by a CLI process beside the server: okapi savanna.\n", "page", "write", "Shell Okapi", "--tag", "live")
	if r.code != 0 {
		t.Fatalf("page write: %+v", r)
	}
	if text := srv.mustTool(t, "get_page", map[string]any{"title": "Shell Okapi"}); !strings.Contains(text, "okapi savanna") {
		t.Fatalf("the server does not see the page: %s", text)
	}
	if srch := binCLI(bin, v, "", "search", "--help"); srch.code == 0 {
		r = binCLI(bin, v, "", "search", "how do I link notes", "--json")
		if r.code != 0 || !strings.Contains(r.stdout, `"path"`) {
			t.Fatalf("search: %+v", r)
		}
		r = binCLI(bin, v, "", "search", "okapi savanna", "--json")
		if r.code != 0 || !strings.Contains(r.stdout, "Shell Okapi") {
			t.Fatalf("search for the page written beside the server: %+v", r)
		}
	}
	// an edit saved by another program
	testvault.Write(t, v, "wiki/edited-elsewhere.md", "---\ntitle: Edited Elsewhere\n---\nby an editor\n")
	servertest.Eventually(t, "the watched edit", func() bool {
		_, isErr, err := srv.tool("get_page", map[string]any{"title": "Edited Elsewhere"})
		return err == nil && !isErr
	})
	srv.stop(t)
	if _, err := os.Stat(v.Abs(sock.File)); !os.IsNotExist(err) {
		t.Errorf("socket left after a clean stop: %v", err)
	}
}

// TestCrash_KillServe kills `serve --mcp-stdio` with SIGKILL at random
// moments while CLI verbs and MCP calls write through it (review items,
// pages through write_page, rescans, a full reindex) and another program
// edits, creates, renames and deletes files under it. After each kill:
// every acknowledged review item and decision is there, every page
// written through write_page is whole (one version, never a mix), and the
// next start reconciles the store to exactly what a fresh reindex builds.
// SYNAPSE_CRASH_ROUNDS sets the number of kills (default 6).
func TestCrash_KillServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills servers")
	}
	bin := synapseBinary(t)
	v := generatedVault(t, vaultgen.Options{Pages: 800, Sources: 100, Seed: 11, BodyWords: 150})
	if r := binCLI(bin, v, "", "reindex"); r.code != 0 {
		t.Fatalf("reindex: %+v", r)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 8))

	var (
		mu       sync.Mutex
		acked    = map[string]string{}   // review title → id, acknowledged
		decided  = map[string]bool{}     // review ids acknowledged as dismissed
		versions = map[string][]string{} // page title → every body attempted, in order
		ackedVer = map[string]int{}      // page title → index of the last acknowledged body
	)
	page := func(i int) string { return fmt.Sprintf("Crash Page %d", i) }
	body := func(title string, n int) string {
		tok := fmt.Sprintf("%s v%d", title, n)
		return "BEGIN " + tok + "\n\n" + strings.Repeat("filler words for a page of some size. ", 400) + "\n\nEND " + tok + "\n"
	}

	rounds := 6
	if n, err := strconv.Atoi(os.Getenv("SYNAPSE_CRASH_ROUNDS")); err == nil && n > 0 {
		rounds = n // a longer soak: SYNAPSE_CRASH_ROUNDS=100 go test -run TestCrash_KillServe
	}
	killed := 0
	for round := 0; round < rounds; round++ {
		srv := startStdioServe(t, bin, v)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		worker := func(fn func(i int) bool) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if !fn(i) {
						return
					}
				}
			}()
		}
		// CLI processes writing review items and decisions through the server
		worker(func(i int) bool {
			title := fmt.Sprintf("Crash review r%d-%d", round, i)
			r := binCLI(bin, v, "", "review", "add", "--type", "suggestion", "--title", title)
			if r.code != 0 {
				return false // the server died mid-call, or after
			}
			id := strings.TrimSpace(r.stdout)
			mu.Lock()
			acked[title] = id
			mu.Unlock()
			if i%3 == 0 {
				if r := binCLI(bin, v, "", "review", "resolve", id, "--action", "dismiss"); r.code == 0 {
					mu.Lock()
					decided[id] = true
					mu.Unlock()
				}
			}
			return true
		})
		// write_page over MCP, and page write from the CLI
		{
			pick := rand.New(rand.NewPCG(seed, uint64(100+round)))
			worker(func(i int) bool {
				title := page(pick.IntN(6))
				mu.Lock()
				n := len(versions[title])
				b := body(title, n)
				versions[title] = append(versions[title], b)
				mu.Unlock()
				var ok bool
				if i%2 == 0 {
					_, isErr, err := srv.tool("write_page", map[string]any{"title": title, "content": b})
					ok = err == nil && !isErr
				} else {
					ok = binCLI(bin, v, b, "page", "write", title).code == 0
				}
				if !ok {
					return false
				}
				mu.Lock()
				ackedVer[title] = max(ackedVer[title], n+1) // 1-based: 0 means none acknowledged
				mu.Unlock()
				return true
			})
		}
		// rescans, now and then a full reindex
		worker(func(i int) bool {
			if i%4 == 3 {
				return binCLI(bin, v, "", "reindex").code == 0
			}
			_, isErr, err := srv.tool("trigger_source_rescan", map[string]any{})
			return err == nil && !isErr
		})
		// another program editing the files under the server
		churn := rand.New(rand.NewPCG(seed, uint64(round)))
		worker(func(i int) bool {
			n := churn.IntN(40)
			rel := fmt.Sprintf("wiki/churn/c%d.md", n)
			switch churn.IntN(5) {
			case 0:
				os.Remove(v.Abs(rel))
			case 1:
				os.MkdirAll(v.Abs(fmt.Sprintf("wiki/churn/d%d", n%4)), 0o755)
				os.Rename(v.Abs(rel), v.Abs(fmt.Sprintf("wiki/churn/d%d/c%d.md", n%4, n)))
			case 2:
				os.WriteFile(v.Abs(fmt.Sprintf("raw/sources/churn-%d.txt", n)), []byte(fmt.Sprint("source ", i)), 0o644)
			default:
				os.MkdirAll(v.Abs("wiki/churn"), 0o755)
				content := fmt.Sprintf("---\ntitle: Churn %d\n---\nLinks to [[Churn %d]], [[Crash Page %d]] and [[Home]]. Edit %d.\n", n, (n+1)%40, n%6, i)
				os.WriteFile(v.Abs(rel), []byte(content), 0o644)
			}
			time.Sleep(time.Duration(churn.IntN(20)) * time.Millisecond)
			return true
		})

		time.Sleep(time.Duration(100+rng.IntN(900)) * time.Millisecond)
		srv.kill()
		if srv.cmd.ProcessState != nil && !srv.cmd.ProcessState.Success() {
			killed++
		}
		close(stop)
		wg.Wait()

		// the next start reconciles in the background
		next := startStdioServe(t, bin, v)
		servertest.Eventually(t, "the start-up scan", func() bool { return strings.Contains(next.stderr.String(), "start-up scan:") })
		next.stop(t)
		db := v.Abs(vault.DBFile)
		got := fingerprint(t, db)
		if r := binCLI(bin, v, "", "reindex"); r.code != 0 {
			t.Fatalf("reindex: %+v", r)
		}
		want := fingerprint(t, db)
		if got != want {
			d := storecheck.DiffLines(want, got)
			t.Fatalf("round %d: after a kill and a restart the store differs from a fresh reindex (%d lines):\n%s",
				round, len(d), strings.Join(d[:min(len(d), 20)], "\n"))
		}

		// nothing acknowledged is lost
		var items []struct{ ID, Title, Status string }
		for offset := 0; ; offset += 100 {
			r := binCLI(bin, v, "", "review", "list", "--status", "all", "--limit", "100", "--offset", fmt.Sprint(offset), "--json")
			var l struct {
				Total int
				Items []struct{ ID, Title, Status string }
			}
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &l) != nil {
				t.Fatalf("review list: %+v", r)
			}
			items = append(items, l.Items...)
			if len(l.Items) == 0 || len(items) >= l.Total {
				break
			}
		}
		have := map[string]string{}
		for _, it := range items {
			have[it.Title] = it.ID
			if decided[it.ID] && it.Status != "dismissed" {
				t.Errorf("round %d: review %s was acknowledged dismissed, is %s", round, it.ID, it.Status)
			}
		}
		for title, id := range acked {
			if have[title] != id {
				t.Errorf("round %d: acknowledged review item %s (%q) is gone", round, id, title)
			}
		}
		// every page written through write_page is one whole version, at
		// least as new as the last acknowledged one
		for title, vs := range versions {
			out := binCLI(bin, v, "", "page", "get", title, "--json")
			var p struct{ Content string }
			if ackedVer[title] == 0 && out.code == 3 {
				continue // never acknowledged, never created
			}
			if out.code != 0 || json.Unmarshal([]byte(out.stdout), &p) != nil {
				t.Fatalf("round %d: page get %q: %+v", round, title, out)
			}
			at := -1
			for i, b := range vs {
				if strings.TrimSpace(p.Content) == strings.TrimSpace(b) {
					at = i
				}
			}
			if at < 0 {
				t.Fatalf("round %d: %q holds no version that was written (a mix?):\n%.200s", round, title, p.Content)
			}
			if at+1 < ackedVer[title] {
				t.Errorf("round %d: %q is at version %d, older than the acknowledged %d", round, title, at+1, ackedVer[title])
			}
		}
	}
	if killed == 0 {
		t.Fatal("no server was killed")
	}
	t.Logf("%d servers killed; %d review items and %d decisions acknowledged, %d page versions attempted; none lost",
		killed, len(acked), len(decided), func() int {
			n := 0
			for _, vs := range versions {
				n += len(vs)
			}
			return n
		}())
}
