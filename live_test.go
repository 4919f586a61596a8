package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/server"
	"github.com/synapse-wiki/synapse/internal/server/servertest"
	"github.com/synapse-wiki/synapse/internal/server/sock"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// liveServer is a server.Service running in this process as `serve
// --mcp-stdio` does, until Stop (or the end of the test).
type liveServer struct {
	*servertest.Live
	s *server.Service
}

// startLive opens v as serve does (primary, or proxy when a server holds
// it) and runs it.
func startLive(t testing.TB, v *vault.Vault) *liveServer {
	t.Helper()
	logs := &servertest.SyncBuffer{}
	s := server.New(ops.Table(), v, server.Config{Stdio: true, Holder: "synapse serve --mcp-stdio (test)"}, log.New(logs, "synapse: ", 0))
	return &liveServer{servertest.Run(t, s, v, logs), s}
}

// serveBlocked opens v as serve does, with its first scan held; calls
// wait at most firstIndexWait for a first index.
func serveBlocked(t *testing.T, v *vault.Vault, firstIndexWait time.Duration) (*liveServer, *servertest.BlockingPages) {
	t.Helper()
	env, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{Holder: "synapse serve (test)", NoInitialScan: true})
	if err != nil {
		t.Fatal(err)
	}
	bp := servertest.HoldScans(env)
	logs := &servertest.SyncBuffer{}
	cfg := server.Config{Stdio: true, Holder: "synapse serve (test)", FirstIndexWait: firstIndexWait}
	s := server.Open(ops.Table(), env, cfg, log.New(logs, "synapse: ", 0))
	ls := &liveServer{servertest.Run(t, s, v, logs), s}
	t.Cleanup(bp.ReleaseOnce)
	<-bp.Entered
	return ls, bp
}

type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs a synapse command line in this process against v.
func runCLI(v *vault.Vault, stdin string, args ...string) cliResult {
	var out, errb bytes.Buffer
	full := append([]string{"synapse", "--vault", v.Root}, args...)
	code := run(full, strings.NewReader(stdin), &out, &errb)
	return cliResult{out.String(), errb.String(), code}
}

var (
	reTime     = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?`)
	reDuration = regexp.MustCompile(`("duration_ms":|in )\d+( ms)?`)
	reFresh    = regexp.MustCompile(`(?m)^changes: .*\n|,"freshness":\{[^}]*\}`)
	reStore    = regexp.MustCompile(`("store_(?:disk_)?bytes":)\d+|(store: +)[0-9.]+ [KMG]?i?B( on disk \(a [0-9.]+ [KMG]?i?B sparse file\))?`)
)

// normalize blanks what differs between any two runs: clock times, scan
// durations and the store file's size.
func normalize(s string) string {
	// what a verb without a server found of files changed by hand (a
	// server's watcher keeps the index current: it reports none)
	s = reFresh.ReplaceAllString(s, "")
	s = reTime.ReplaceAllString(s, "TIME")
	s = reDuration.ReplaceAllString(s, "${1}N${2}")
	return reStore.ReplaceAllString(s, "${1}${2}SIZE")
}

// TestLive_CLIBesideServer runs the same CLI session twice on the same
// vault — once alone, once while a server holds the store — and requires
// identical stdout, stderr and exit codes, human and --json output alike.
func TestLive_CLIBesideServer(t *testing.T) {
	type step struct {
		args  []string
		stdin string
		save  string // remember .id of the --json output under this name
	}
	steps := []step{
		{args: []string{"status"}},
		{args: []string{"status", "--json"}},
		{args: []string{"page", "get", "start here"}},
		{args: []string{"page", "get", "start here", "--json"}},
		{args: []string{"page", "get", "Formatting your notes"}},
		{args: []string{"page", "get", "No such page at all"}},
		{args: []string{"page", "get", "No such page at all", "--json"}},
		{args: []string{"page", "list", "--limit", "5"}},
		{args: []string{"page", "list", "--type", "note", "--limit", "3", "--offset", "2", "--json"}},
		{args: []string{"graph", "neighbors", "Home", "--depth", "2"}},
		{args: []string{"graph", "neighbors", "Home", "--json"}},
		{args: []string{"graph", "backlinks", "Home"}},
		{args: []string{"graph", "orphans"}},
		{args: []string{"graph", "missing", "--json"}},
		{args: []string{"source", "list"}},
		{args: []string{"source", "read", "notes/meeting.md"}},
		{args: []string{"source", "read", "raw/sources/notes/meeting.md", "--json"}},
		{args: []string{"source", "read", "../../etc/passwd"}},
		{args: []string{"source", "rescan"}},
		{args: []string{"source", "rescan", "--json"}},
		{args: []string{"review", "add", "--type", "suggestion", "--title", "Split the <Graph> page", "--rationale", "too long & dense", "--json"}, save: "a"},
		{args: []string{"review", "add", "--type", "confirm", "--title", "Check the canvas page"}},
		{args: []string{"review", "add", "--type", "duplicate", "--title", "Two pages on links", "--json"}, save: "b"},
		{args: []string{"review", "add", "--type", "bogus", "--title", "x"}},
		{args: []string{"review", "list"}},
		{args: []string{"review", "list", "--status", "all", "--json"}},
		{args: []string{"review", "list", "--status", "nonsense"}},
		{args: []string{"review", "resolve", "{a}", "--action", "skip"}},
		{args: []string{"review", "resolve", "{a}", "--action", "dismiss", "--json"}},
		{args: []string{"review", "resolve", "{b}", "--action", "deep-research"}},
		{args: []string{"review", "bulk-resolve", "--action", "dismiss", "-"}, stdin: "{a}\n{b}\nzzzzzz\n"},
		{args: []string{"lint"}},
		{args: []string{"lint", "--to-review", "--json"}},
		{args: []string{"review", "list", "--limit", "3"}},
		{args: []string{"reindex"}},
		{args: []string{"reindex", "--json"}},
		{args: []string{"status"}},
		{args: []string{"page", "get"}},
		{args: []string{"graph", "neighbors", "Home", "--depth", "x"}},
	}
	steps = append(steps,
		step{args: []string{"page", "write", "Live Note", "--type", "concept", "--tag", "Live"}, stdin: "Links to [[Home]] and [[Nowhere Yet]].\n"},
		step{args: []string{"page", "write", "Live Note", "--json"}, stdin: "Second version, <b>bold</b>.\n"},
		step{args: []string{"page", "get", "Live Note"}},
		step{args: []string{"page", "write", "Live Note", "--if-match", strings.Repeat("0", 64)}, stdin: "stale\n"},
		step{args: []string{"page", "write", "Empty"}, stdin: ""},
		step{args: []string{"review", "list", "--type", "missing-page", "--json"}},
		step{args: []string{"review", "list", "--type", "missing-page"}},
	)
	if ops.Lookup("search") != nil {
		steps = append(steps,
			step{args: []string{"search", "how", "do", "I", "link", "notes?"}},
			step{args: []string{"search", "canvas", "-k", "3", "--json"}},
		)
	}

	dir := filepath.Join(t.TempDir(), "v")
	session := func(server bool) []cliResult {
		v := servertest.LiveVault(t, dir)
		if server {
			ls := startLive(t, v)
			defer ls.Stop(t)
			// the server builds the vault's first index in the background,
			// and status beside it says so meanwhile (pages 0, indexing:
			// TestLive_FirstIndexInTheBackground); the verbs are compared
			// beside a server that has built it, as the alone session's
			// first verb built it before answering
			select {
			case <-ls.s.Reconciled():
			case <-time.After(2 * time.Minute):
				t.Fatal("the server did not build the first index")
			}
		}
		saved := map[string]string{}
		var out []cliResult
		for _, st := range steps {
			args := make([]string, len(st.args))
			for i, a := range st.args {
				args[i] = a
				for k, id := range saved {
					args[i] = strings.ReplaceAll(args[i], "{"+k+"}", id)
				}
			}
			stdin := st.stdin
			for k, id := range saved {
				stdin = strings.ReplaceAll(stdin, "{"+k+"}", id)
			}
			r := runCLI(v, stdin, args...)
			if st.save != "" {
				var x struct{ Item struct{ ID string } }
				if err := json.Unmarshal([]byte(r.stdout), &x); err != nil || x.Item.ID == "" {
					t.Fatalf("%v: no id in %q", st.args, r.stdout)
				}
				saved[st.save] = x.Item.ID
			}
			out = append(out, r)
		}
		return out
	}
	alone := session(false)
	beside := session(true)
	for i, st := range steps {
		a, b := alone[i], beside[i]
		if normalize(a.stdout) != normalize(b.stdout) || normalize(a.stderr) != normalize(b.stderr) || a.code != b.code {
			t.Errorf("synapse %s differs beside a server:\nalone  (exit %d):\n%s%s\nbeside (exit %d):\n%s%s",
				strings.Join(st.args, " "), a.code, a.stdout, a.stderr, b.code, b.stdout, b.stderr)
		}
	}
	// the session covers success and every failure kind
	codes := map[int]bool{}
	for _, r := range alone {
		codes[r.code] = true
	}
	for _, c := range []int{0, 2, 3, 4, 5} {
		if !codes[c] {
			t.Errorf("no step exits %d; the comparison should cover it", c)
		}
	}
}

// While a server holds the vault, a CLI verb never touches the store: it
// is answered over the socket, and the server's next call sees its change.
func TestLive_CLIChangeSeenByServer(t *testing.T) {
	v := servertest.LiveVault(t, filepath.Join(t.TempDir(), "v"))
	ls := startLive(t, v)
	r := runCLI(v, "", "review", "add", "--type", "suggestion", "--title", "Seen by the server", "--json")
	if r.code != 0 {
		t.Fatalf("review add: %+v", r)
	}
	out, err := servertest.CallOp(ls.s, "list_reviews", map[string]any{"status": "all"})
	if err != nil || !strings.Contains(servertest.ResultJSON(t, out), "Seen by the server") {
		t.Fatalf("the server does not see the CLI's item: %v %v", err, out)
	}
	var added struct{ Item struct{ ID string } }
	json.Unmarshal([]byte(r.stdout), &added)
	if r := runCLI(v, "", "review", "resolve", added.Item.ID, "--action", "dismiss"); r.code != 0 {
		t.Fatalf("review resolve: %+v", r)
	}
	out, _ = servertest.CallOp(ls.s, "list_reviews", map[string]any{"status": "dismissed"})
	if !strings.Contains(servertest.ResultJSON(t, out), added.Item.ID) {
		t.Fatalf("the server does not see the resolution: %s", servertest.ResultJSON(t, out))
	}
	if r := runCLI(v, "A page from the shell\n", "page", "write", "Shell Page"); r.code != 0 {
		t.Fatalf("page write: %+v", r)
	}
	if _, err := servertest.CallOp(ls.s, "get_page", map[string]any{"title": "Shell Page"}); err != nil {
		t.Fatalf("the server does not see the CLI's page: %v", err)
	}
}

// On a vault never indexed, MCP initialize and tools/list answer while the
// first scan runs; tool calls wait for it (an MCP call at most
// firstIndexWait, then unavailable); a CLI verb waits as it would alone,
// but for status, which answers at once with the progress.
func TestLive_FirstIndexInTheBackground(t *testing.T) {
	v := servertest.LiveVault(t, filepath.Join(t.TempDir(), "v"))
	ls, bp := serveBlocked(t, v, 100*time.Millisecond)

	c, err := client.NewInProcessClient(ls.s.MCPServer(false))
	if err != nil {
		t.Fatal(err)
	}
	servertest.StartClient(t, c) // initialize
	if len(servertest.ToolNames(t, c)) == 0 {
		t.Fatal("tools/list during the first scan: no tools")
	}
	res, isErr := servertest.MCPCall(t, c, "get_page", map[string]any{"title": "Home"})
	if !isErr || !strings.Contains(fmt.Sprint(res["error"]), "being indexed for the first time") {
		t.Fatalf("a tool call during the first index: %v", res)
	}
	// status (REST) answers at once, with the progress of the build
	st, err := servertest.CallOp(ls.s, "status", map[string]any{})
	if err != nil {
		t.Fatalf("status during the first index: %v", err)
	}
	if a := st.(*ops.StatusOut).Indexing; a == nil || !a.Rebuild || a.Phase != "scan" {
		t.Fatalf("status during the first index: indexing %+v", a)
	}

	// so does synapse status, at a shell: it says the index is being built
	// (a verb that needs the index waits, below)
	stDone := make(chan cliResult, 1)
	go func() { stDone <- runCLI(v, "", "status") }()
	select {
	case r := <-stDone:
		if r.code != 0 || !strings.Contains(r.stdout, "building the index") {
			t.Fatalf("synapse status during the first index: %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("synapse status waited for the first index to finish")
	}

	cliDone := make(chan cliResult, 1)
	go func() { cliDone <- runCLI(v, "", "page", "get", "Home", "--json") }()
	select {
	case r := <-cliDone:
		t.Fatalf("the CLI answered before the first index: %+v", r)
	case <-time.After(200 * time.Millisecond):
	}
	close(bp.Release)
	r := <-cliDone
	if r.code != 0 || !strings.Contains(r.stdout, `"title":"Home"`) {
		t.Fatalf("CLI after the first index: %+v", r)
	}
	if res, isErr := servertest.MCPCall(t, c, "get_page", map[string]any{"title": "Home"}); isErr {
		t.Fatalf("tool call after the first index: %v", res)
	}
	if st, err := servertest.CallOp(ls.s, "status", map[string]any{}); err != nil || st.(*ops.StatusOut).Indexing != nil {
		t.Fatalf("status after the first index: %+v %v", st, err)
	}
}

// On a vault indexed before, calls answer from the persisted index while
// the start-up reconciliation runs.
func TestLive_ReconcileDoesNotHoldUpCalls(t *testing.T) {
	v := servertest.LiveVault(t, filepath.Join(t.TempDir(), "v"))
	if r := runCLI(v, "", "reindex"); r.code != 0 {
		t.Fatal(r)
	}
	testvault.Write(t, v, "wiki/changed-offline.md", "---\ntitle: Changed offline\n---\n")
	ls, bp := serveBlocked(t, v, 0)
	if servertest.PageVia(ls.s, "Home").Title != "Home" {
		t.Fatal("get_page did not answer from the persisted index during reconciliation")
	}
	if r := runCLI(v, "", "status", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"pages":173`) {
		t.Fatalf("status during reconciliation: %+v", r)
	}
	close(bp.Release)
	servertest.Eventually(t, "the reconciled page", func() bool { return servertest.PageVia(ls.s, "Changed offline").Title != "" })
}

// A second serve on a held vault forwards its calls to the first; when the
// first stops, the second takes the store over and serves the CLI itself.
func TestLive_SecondServeProxiesThenTakesOver(t *testing.T) {
	v := servertest.LiveVault(t, filepath.Join(t.TempDir(), "v"))
	first := startLive(t, v)
	second := startLive(t, v)
	if second.s.Primary() {
		t.Fatal("the second serve opened the store")
	}
	servertest.Eventually(t, "the proxy's note", func() bool {
		return strings.Contains(second.Logs.String(), "holds this vault; calls are forwarded")
	})
	if servertest.PageVia(second.s, "start here").Title != "Home" {
		t.Fatal("the proxy did not answer get_page")
	}
	if _, err := servertest.CallOp(second.s, "review.add", map[string]any{"type": "suggestion", "title": "Through the proxy"}); err != nil {
		t.Fatal(err)
	}
	out, err := servertest.CallOp(first.s, "list_reviews", map[string]any{})
	if err != nil || !strings.Contains(servertest.ResultJSON(t, out), "Through the proxy") {
		t.Fatalf("the primary does not see the proxy's write: %v", err)
	}
	// a proxy keeps its own read-only filter
	if _, err := second.s.Call(context.Background(), true, ops.ByTool("trigger_source_rescan"), nil); !errs.Is(err, errs.Forbidden) {
		t.Errorf("read-only proxy ran a write: %v", err)
	}
	// errors travel with their code
	if _, err := servertest.CallOp(second.s, "get_page", map[string]any{"title": "Nope Nope"}); !errs.Is(err, errs.NotFound) {
		t.Errorf("proxy error: %v", err)
	}

	first.Stop(t)
	if servertest.PageVia(second.s, "start here").Title != "Home" {
		t.Fatalf("the proxy did not take over; logs:\n%s", second.Logs.String())
	}
	servertest.Eventually(t, "the takeover logged", func() bool {
		return strings.Contains(second.Logs.String(), "this one holds it now")
	})
	if r := runCLI(v, "", "review", "list", "--json"); r.code != 0 || !strings.Contains(r.stdout, "Through the proxy") {
		t.Fatalf("CLI against the new primary: %+v", r)
	}
	testvault.Write(t, v, "wiki/after-takeover.md", "---\ntitle: After takeover\n---\n")
	servertest.Eventually(t, "the new primary's watcher", func() bool { return servertest.PageVia(second.s, "After takeover").Title != "" })
}

// A socket file left by a killed server breaks nothing: the CLI opens the
// store itself, and the next server replaces the file.
func TestLive_StaleSocket(t *testing.T) {
	v := servertest.LiveVault(t, filepath.Join(t.TempDir(), "v"))
	ln, err := net.Listen("unix", v.Abs(sock.File))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Stat(v.Abs(sock.File)); err != nil {
		t.Fatal("no stale socket file to test with")
	}
	if r := runCLI(v, "", "status", "--json"); r.code != 0 {
		t.Fatalf("CLI with a stale socket: %+v", r)
	}
	ls := startLive(t, v)
	if r := runCLI(v, "", "page", "get", "Home", "--json"); r.code != 0 {
		t.Fatalf("CLI beside a server that replaced a stale socket: %+v", r)
	}
	fi, err := os.Stat(v.Abs(sock.File))
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v %v", fi.Mode(), err)
	}
	ls.Stop(t)
	if _, err := os.Stat(v.Abs(sock.File)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket outlived its server: %v", err)
	}
}

// Without a server to hand the verb to, a held store fails fast naming its
// holder; a server that does not answer on its socket is named too.
func TestLive_HeldStoreFailsFast(t *testing.T) {
	defer func(h, w time.Duration) { sock.HelloTimeout, sock.LockWait = h, w }(sock.HelloTimeout, sock.LockWait)
	sock.HelloTimeout, sock.LockWait = 200*time.Millisecond, 300*time.Millisecond
	v := servertest.LiveVault(t, filepath.Join(t.TempDir(), "v"))
	st, err := store.Open(v.Abs(vault.DBFile), store.Options{Holder: "synapse reindex"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := runCLI(v, "", "status")
	if r.code != 5 || !regexp.MustCompile(`held by pid \d+ \(synapse reindex, since`).MatchString(r.stderr) {
		t.Fatalf("held store: %+v", r)
	}
	r = runCLI(v, "", "status", "--json")
	if r.code != 5 || !strings.Contains(r.stderr, `"code":"unavailable"`) {
		t.Fatalf("held store, --json: %+v", r)
	}

	// a wedged server: it accepts and never says hello
	ln, err := net.Listen("unix", v.Abs(sock.File))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Chmod(v.Abs(sock.File), 0o600) // owner-only, as a server makes it
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	r = runCLI(v, "", "page", "get", "Home")
	if r.code != 5 || !strings.Contains(r.stderr, "held by pid") || !strings.Contains(r.stderr, "did not answer within") {
		t.Fatalf("wedged server: %+v", r)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("the CLI hung for %v", d)
	}
}

// A vault path too long for a socket address still gets a socket (Linux:
// through /proc/self/fd).
func TestLive_LongVaultPath(t *testing.T) {
	if sock.MaxPath > 104 && !fileExists("/proc/self/fd") {
		t.Skip("no /proc")
	}
	dir := filepath.Join(t.TempDir(), strings.Repeat("long-folder-name-", 6), "v")
	if len(filepath.Join(dir, sock.File)) <= sock.MaxPath {
		t.Fatal("path not long enough")
	}
	v := servertest.LiveVault(t, dir)
	ls := startLive(t, v)
	if !ls.s.Listening() {
		if sock.MaxPath > 104 {
			t.Fatalf("no socket: %s", ls.Logs.String())
		}
		t.Skip("long socket paths are not supported on this system")
	}
	if r := runCLI(v, "", "status", "--json"); r.code != 0 {
		t.Fatalf("CLI: %+v", r)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// BenchmarkLive_CLIVerb times CLI verbs run in this process, alone and
// handed to a server over the socket (the built binary's numbers, process
// start included, come from tools/livebench).
func BenchmarkLive_CLIVerb(b *testing.B) {
	v := servertest.LiveVault(b, filepath.Join(b.TempDir(), "v"))
	if r := runCLI(v, "", "reindex"); r.code != 0 {
		b.Fatal(r)
	}
	verbs := map[string][]string{
		"page-get":       {"page", "get", "start here", "--json"},
		"status":         {"status", "--json"},
		"page-get-human": {"page", "get", "start here"},
	}
	bench := func(mode string) {
		for name, args := range verbs {
			b.Run(mode+"/"+name, func(b *testing.B) {
				for b.Loop() {
					if r := runCLI(v, "", args...); r.code != 0 {
						b.Fatal(r)
					}
				}
			})
		}
	}
	bench("alone")
	ls := startLive(b, v)
	<-ls.s.Reconciled()
	bench("beside-serve")
}
