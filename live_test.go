package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// liveServer is a service running in this process as `serve --mcp-stdio`
// does, until stop (or the end of the test).
type liveServer struct {
	s     *service
	logs  *syncBuffer
	stdin *io.PipeWriter
	done  chan error
	once  sync.Once
	err   error
}

// startLive opens v as serve does (primary, or proxy when a server holds
// it) and runs it.
func startLive(t testing.TB, v *vault.Vault) *liveServer {
	t.Helper()
	logs := &syncBuffer{}
	s := newServeService(ops.Table(), v, "synapse serve --mcp-stdio (test)", log.New(logs, "synapse: ", 0))
	return runLive(t, s, logs)
}

func runLive(t testing.TB, s *service, logs *syncBuffer) *liveServer {
	t.Helper()
	pr, pw := io.Pipe()
	ls := &liveServer{s: s, logs: logs, stdin: pw, done: make(chan error, 1)}
	go func() { ls.done <- s.run(context.Background(), serveConfig{stdio: true}, "", pr, io.Discard) }()
	t.Cleanup(func() { ls.stop(t) })
	select {
	case <-s.ready:
	case err := <-ls.done:
		t.Fatalf("serve stopped: %v\n%s", err, logs.String())
	case <-time.After(15 * time.Second):
		t.Fatalf("the store was not opened: %s", logs.String())
	}
	s.mu.RLock()
	primary := s.env != nil
	s.mu.RUnlock()
	if primary {
		eventually(t, "the socket", func() bool {
			sc, err := dialServer(s.vault)
			if err == nil {
				sc.close()
			}
			return err == nil
		})
	}
	return ls
}

// stop ends the stdio session, as an MCP client closing its pipe does.
func (ls *liveServer) stop(t testing.TB) {
	ls.once.Do(func() {
		ls.stdin.Close()
		select {
		case ls.err = <-ls.done:
		case <-time.After(30 * time.Second):
			t.Errorf("server did not stop; logs:\n%s", ls.logs.String())
		}
		if ls.err != nil {
			t.Errorf("server: %v", ls.err)
		}
	})
}

// eventually polls cond until it holds (a liveness bound, not a timing
// assertion: latencies are measured by benchmarks and scripts).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
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

// callOp runs an operation through a service's dispatch, as a transport
// does.
func callOp(s *service, tool string, args any) (any, error) {
	raw, _ := json.Marshal(args)
	op := ops.ByTool(tool)
	if op == nil {
		op = ops.Lookup(tool)
	}
	return s.call(context.Background(), s.envFor(false), op, raw)
}

func resultJSON(t testing.TB, out any) string {
	t.Helper()
	data, err := ops.MarshalJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// newLiveVault is a vault with the Obsidian Help corpus, a source and a
// never-scanned store, at a fixed path under dir.
func newLiveVault(t testing.TB, dir string) *vault.Vault {
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

var (
	reTime     = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?`)
	reDuration = regexp.MustCompile(`("duration_ms":|in )\d+( ms)?`)
	reFresh    = regexp.MustCompile(`(?m)^changes: .*\n|,"freshness":\{[^}]*\}`)
	reStore    = regexp.MustCompile(`("store_(?:disk_)?bytes":)\d+|(store: +)[0-9.]+ [KMG]?i?B`)
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
		v := newLiveVault(t, dir)
		if server {
			ls := startLive(t, v)
			defer ls.stop(t)
			// the server builds the vault's first index in the background,
			// and status beside it says so meanwhile (pages 0, indexing:
			// TestLive_FirstIndexInTheBackground); the verbs are compared
			// beside a server that has built it, as the alone session's
			// first verb built it before answering
			select {
			case <-ls.s.watcher.Ready():
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
	v := newLiveVault(t, filepath.Join(t.TempDir(), "v"))
	ls := startLive(t, v)
	r := runCLI(v, "", "review", "add", "--type", "suggestion", "--title", "Seen by the server", "--json")
	if r.code != 0 {
		t.Fatalf("review add: %+v", r)
	}
	out, err := callOp(ls.s, "list_reviews", map[string]any{"status": "all"})
	if err != nil || !strings.Contains(resultJSON(t, out), "Seen by the server") {
		t.Fatalf("the server does not see the CLI's item: %v %v", err, out)
	}
	var added struct{ Item struct{ ID string } }
	json.Unmarshal([]byte(r.stdout), &added)
	if r := runCLI(v, "", "review", "resolve", added.Item.ID, "--action", "dismiss"); r.code != 0 {
		t.Fatalf("review resolve: %+v", r)
	}
	out, _ = callOp(ls.s, "list_reviews", map[string]any{"status": "dismissed"})
	if !strings.Contains(resultJSON(t, out), added.Item.ID) {
		t.Fatalf("the server does not see the resolution: %s", resultJSON(t, out))
	}
	if r := runCLI(v, "A page from the shell\n", "page", "write", "Shell Page"); r.code != 0 {
		t.Fatalf("page write: %+v", r)
	}
	if _, err := callOp(ls.s, "get_page", map[string]any{"title": "Shell Page"}); err != nil {
		t.Fatalf("the server does not see the CLI's page: %v", err)
	}
}

// The caller's environment configures deep-research, not the server's: a
// verb behaves as it would without a server.
func TestLive_ResearchUsesTheCallersEnvironment(t *testing.T) {
	v := newLiveVault(t, filepath.Join(t.TempDir(), "v"))
	ls := startLive(t, v)
	added, err := callOp(ls.s, "review.add", map[string]any{"type": "suggestion", "title": "Research me"})
	if err != nil {
		t.Fatal(err)
	}
	id := added.(*ops.AddReviewOut).Item.ID
	ctx := ops.WithEnviron(context.Background(), []string{"PATH=" + os.Getenv("PATH"), "SYNAPSE_RESEARCH_CMD=echo from-the-caller $SYNAPSE_REVIEW_ID"})
	out, err := ls.s.call(ctx, ls.s.envFor(false), ops.Lookup("review.resolve"), []byte(`{"id":"`+id+`","action":"deep-research"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*ops.ResolveReviewOut).Resolution; got != "from-the-caller "+id {
		t.Fatalf("resolution %q", got)
	}
}

// pageTitleVia reads a page's title through the service ("" when absent).
// (a proxy's result is the primary's JSON)
func pageTitleVia(s *service, title string) string {
	return pageVia(s, title).Title
}

func pagePathVia(s *service, title string) string {
	return pageVia(s, title).Path
}

func pageVia(s *service, title string) (p ops.GetPageOut) {
	out, err := callOp(s, "get_page", map[string]any{"title": title})
	if err == nil {
		data, _ := ops.MarshalJSON(out)
		json.Unmarshal(data, &p)
	}
	return p
}

// Pages saved into wiki/ by another program reach the server's answers:
// written in place, saved by rename, deleted, in a new folder.
func TestLive_WatcherFeedsTheServer(t *testing.T) {
	v := newLiveVault(t, filepath.Join(t.TempDir(), "v"))
	ls := startLive(t, v)
	s := ls.s

	testvault.Write(t, v, "wiki/outside.md", "---\ntitle: Written Outside\n---\nby another program\n")
	eventually(t, "a page written in place", func() bool { return pageTitleVia(s, "Written Outside") != "" })

	tmp := v.Abs("wiki/.outside.md.swp")
	os.WriteFile(tmp, []byte("---\ntitle: Saved By Rename\n---\nagain\n"), 0o644)
	if err := os.Rename(tmp, v.Abs("wiki/outside.md")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a rename-save", func() bool {
		return pageTitleVia(s, "Saved By Rename") != "" && pageTitleVia(s, "Written Outside") == ""
	})

	os.Remove(v.Abs("wiki/outside.md"))
	eventually(t, "a delete", func() bool { return pageTitleVia(s, "Saved By Rename") == "" })

	os.MkdirAll(v.Abs("wiki/projects/2026"), 0o755)
	testvault.Write(t, v, "wiki/projects/2026/plan.md", "# Plan\n")
	eventually(t, "a page in a new folder", func() bool { return pagePathVia(s, "plan") == "wiki/projects/2026/plan.md" })
	testvault.Write(t, v, "wiki/projects/2026/later.md", "# Later\n")
	eventually(t, "a later page in the new folder", func() bool { return pagePathVia(s, "later") == "wiki/projects/2026/later.md" })

	if ops.Lookup("search") != nil {
		testvault.Write(t, v, "wiki/projects/2026/quokka.md", "# Quokka habitat\n\nRottnest island marsupials.\n")
		eventually(t, "a search hit for a saved page", func() bool {
			out, err := callOp(s, "search_wiki", map[string]any{"query": "rottnest marsupials"})
			return err == nil && strings.Contains(resultJSON(t, out), "quokka.md")
		})
	}
}

// trigger_source_rescan goes to the watcher: concurrent requests share
// scans, and none waits behind a write.
func TestLive_RescanCoalescesOnTheWatcher(t *testing.T) {
	v := newLiveVault(t, filepath.Join(t.TempDir(), "v"))
	ls := startLive(t, v)
	s := ls.s
	<-s.watcher.Ready()
	before := s.scans.Load()
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := callOp(s, "trigger_source_rescan", map[string]any{})
			if err != nil || out.(*index.Report).Scanned == 0 {
				t.Errorf("rescan: %v %v", out, err)
			}
		}()
	}
	wg.Wait()
	if n := s.scans.Load() - before; n < 1 || n >= 20 {
		t.Errorf("20 concurrent rescans ran %d scans on the watcher; want them coalesced", n)
	}

	// a rescan does not queue behind a write in progress
	s.writeMu.Lock()
	done := make(chan error, 1)
	go func() {
		_, err := callOp(s, "trigger_source_rescan", map[string]any{})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(15 * time.Second):
		t.Error("a rescan waited for a write to finish")
	}
	// a reindex, which empties the index first, does wait for it
	go func() {
		_, err := callOp(s, "reindex", map[string]any{})
		done <- err
	}()
	select {
	case err := <-done:
		t.Errorf("a reindex ran during a write (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	s.writeMu.Unlock()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// blockingPages holds the start-up reconciliation inside the scanner (the
// search indexer is called in the scan's write transactions) until
// released, so a test can look at a server while its first scan runs.
type blockingPages struct {
	index.PageIndexer
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (b *blockingPages) IndexPages(tx *store.Tx, pages []index.IndexedPage) error {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	if b.PageIndexer == nil {
		return nil
	}
	return b.PageIndexer.IndexPages(tx, pages)
}

func (b *blockingPages) RemovePages(tx *store.Tx, docs []uint32) error {
	if b.PageIndexer == nil {
		return nil
	}
	return b.PageIndexer.RemovePages(tx, docs)
}

// serveBlocked opens v as serve does, with its first scan held.
func serveBlocked(t *testing.T, v *vault.Vault) (*liveServer, *blockingPages) {
	t.Helper()
	env, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{Holder: "synapse serve (test)", NoInitialScan: true})
	if err != nil {
		t.Fatal(err)
	}
	bp := &blockingPages{PageIndexer: env.Index.Pages, entered: make(chan struct{}), release: make(chan struct{})}
	env.Index.Pages = bp
	logs := &syncBuffer{}
	s := newService(ops.Table(), env, log.New(logs, "synapse: ", 0))
	s.holder = "synapse serve (test)"
	ls := runLive(t, s, logs)
	t.Cleanup(func() {
		select {
		case <-bp.release:
		default:
			close(bp.release)
		}
	})
	<-bp.entered
	return ls, bp
}

// On a vault never indexed, MCP initialize and tools/list answer while the
// first scan runs; tool calls wait for it (an MCP call at most
// firstIndexWait, then unavailable); a CLI verb waits as it would alone,
// but for status, which answers at once with the progress.
func TestLive_FirstIndexInTheBackground(t *testing.T) {
	defer func(d time.Duration) { firstIndexWait = d }(firstIndexWait)
	firstIndexWait = 100 * time.Millisecond
	v := newLiveVault(t, filepath.Join(t.TempDir(), "v"))
	ls, bp := serveBlocked(t, v)

	c, err := client.NewInProcessClient(ls.s.newMCPServer(false))
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, c) // initialize
	if len(toolNames(t, c)) == 0 {
		t.Fatal("tools/list during the first scan: no tools")
	}
	res, isErr := mcpCall(t, c, "get_page", map[string]any{"title": "Home"})
	if !isErr || !strings.Contains(fmt.Sprint(res["error"]), "being indexed for the first time") {
		t.Fatalf("a tool call during the first index: %v", res)
	}
	// status (REST) answers at once, with the progress of the build
	st, err := callOp(ls.s, "status", map[string]any{})
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
	close(bp.release)
	r := <-cliDone
	if r.code != 0 || !strings.Contains(r.stdout, `"title":"Home"`) {
		t.Fatalf("CLI after the first index: %+v", r)
	}
	if res, isErr := mcpCall(t, c, "get_page", map[string]any{"title": "Home"}); isErr {
		t.Fatalf("tool call after the first index: %v", res)
	}
	if st, err := callOp(ls.s, "status", map[string]any{}); err != nil || st.(*ops.StatusOut).Indexing != nil {
		t.Fatalf("status after the first index: %+v %v", st, err)
	}
}

// On a vault indexed before, calls answer from the persisted index while
// the start-up reconciliation runs.
func TestLive_ReconcileDoesNotHoldUpCalls(t *testing.T) {
	v := newLiveVault(t, filepath.Join(t.TempDir(), "v"))
	if r := runCLI(v, "", "reindex"); r.code != 0 {
		t.Fatal(r)
	}
	testvault.Write(t, v, "wiki/changed-offline.md", "---\ntitle: Changed offline\n---\n")
	ls, bp := serveBlocked(t, v)
	if pageTitleVia(ls.s, "Home") != "Home" {
		t.Fatal("get_page did not answer from the persisted index during reconciliation")
	}
	if r := runCLI(v, "", "status", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"pages":173`) {
		t.Fatalf("status during reconciliation: %+v", r)
	}
	close(bp.release)
	eventually(t, "the reconciled page", func() bool { return pageTitleVia(ls.s, "Changed offline") != "" })
}

// A second serve on a held vault forwards its calls to the first; when the
// first stops, the second takes the store over and serves the CLI itself.
func TestLive_SecondServeProxiesThenTakesOver(t *testing.T) {
	v := newLiveVault(t, filepath.Join(t.TempDir(), "v"))
	first := startLive(t, v)
	second := startLive(t, v)
	if second.s.env != nil {
		t.Fatal("the second serve opened the store")
	}
	eventually(t, "the proxy's note", func() bool {
		return strings.Contains(second.logs.String(), "holds this vault; calls are forwarded")
	})
	if pageTitleVia(second.s, "start here") != "Home" {
		t.Fatal("the proxy did not answer get_page")
	}
	if _, err := callOp(second.s, "review.add", map[string]any{"type": "suggestion", "title": "Through the proxy"}); err != nil {
		t.Fatal(err)
	}
	out, err := callOp(first.s, "list_reviews", map[string]any{})
	if err != nil || !strings.Contains(resultJSON(t, out), "Through the proxy") {
		t.Fatalf("the primary does not see the proxy's write: %v", err)
	}
	// a proxy keeps its own read-only filter
	ro := second.s.envFor(true)
	if _, err := second.s.call(context.Background(), ro, ops.ByTool("trigger_source_rescan"), nil); !errs.Is(err, errs.Forbidden) {
		t.Errorf("read-only proxy ran a write: %v", err)
	}
	// errors travel with their code
	if _, err := callOp(second.s, "get_page", map[string]any{"title": "Nope Nope"}); !errs.Is(err, errs.NotFound) {
		t.Errorf("proxy error: %v", err)
	}

	first.stop(t)
	if pageTitleVia(second.s, "start here") != "Home" {
		t.Fatalf("the proxy did not take over; logs:\n%s", second.logs.String())
	}
	eventually(t, "the takeover logged", func() bool {
		return strings.Contains(second.logs.String(), "this one holds it now")
	})
	if r := runCLI(v, "", "review", "list", "--json"); r.code != 0 || !strings.Contains(r.stdout, "Through the proxy") {
		t.Fatalf("CLI against the new primary: %+v", r)
	}
	testvault.Write(t, v, "wiki/after-takeover.md", "---\ntitle: After takeover\n---\n")
	eventually(t, "the new primary's watcher", func() bool { return pageTitleVia(second.s, "After takeover") != "" })
}

// A socket file left by a killed server breaks nothing: the CLI opens the
// store itself, and the next server replaces the file.
func TestLive_StaleSocket(t *testing.T) {
	v := newLiveVault(t, filepath.Join(t.TempDir(), "v"))
	ln, err := net.Listen("unix", v.Abs(sockFile))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Stat(v.Abs(sockFile)); err != nil {
		t.Fatal("no stale socket file to test with")
	}
	if r := runCLI(v, "", "status", "--json"); r.code != 0 {
		t.Fatalf("CLI with a stale socket: %+v", r)
	}
	ls := startLive(t, v)
	if r := runCLI(v, "", "page", "get", "Home", "--json"); r.code != 0 {
		t.Fatalf("CLI beside a server that replaced a stale socket: %+v", r)
	}
	fi, err := os.Stat(v.Abs(sockFile))
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v %v", fi.Mode(), err)
	}
	ls.stop(t)
	if _, err := os.Stat(v.Abs(sockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket outlived its server: %v", err)
	}
}

// Without a server to hand the verb to, a held store fails fast naming its
// holder; a server that does not answer on its socket is named too.
func TestLive_HeldStoreFailsFast(t *testing.T) {
	defer func(h, w time.Duration) { sockHelloTimeout, lockWait = h, w }(sockHelloTimeout, lockWait)
	sockHelloTimeout, lockWait = 200*time.Millisecond, 300*time.Millisecond
	v := newLiveVault(t, filepath.Join(t.TempDir(), "v"))
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
	ln, err := net.Listen("unix", v.Abs(sockFile))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
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

// A serve started while a CLI verb holds the store answers MCP at once and
// its calls unavailable, naming the holder, until the store is free; then
// it takes it.
func TestLive_ServeWaitsForAHeldStore(t *testing.T) {
	defer func(w time.Duration) { lockWait = w }(lockWait)
	lockWait = 300 * time.Millisecond
	v := newLiveVault(t, filepath.Join(t.TempDir(), "v"))
	st, err := store.Open(v.Abs(vault.DBFile), store.Options{Holder: "synapse reindex"})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	s := newServeService(ops.Table(), v, "synapse serve (test)", log.New(logs, "synapse: ", 0))
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.run(context.Background(), serveConfig{stdio: true}, "", pr, io.Discard) }()
	c, err := client.NewInProcessClient(s.newMCPServer(false))
	if err != nil {
		t.Fatal(err)
	}
	startClient(t, c) // initialize answers while the store is held
	res, isErr := mcpCall(t, c, "get_page", map[string]any{"title": "Home"})
	if !isErr || !regexp.MustCompile(`unavailable: the vault's store is held by pid \d+ \(synapse reindex`).MatchString(fmt.Sprint(res["error"])) {
		t.Fatalf("a call while the store is held: %v", res)
	}
	// the opener logs from its own goroutine: the call may answer first
	eventually(t, "the held store logged", func() bool {
		return strings.Contains(logs.String(), "calls answer unavailable until it is free")
	})
	st.Close()
	eventually(t, "the store taken over", func() bool {
		_, isErr := mcpCall(t, c, "get_page", map[string]any{"title": "Home"})
		return !isErr
	})
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A store that cannot be opened for another reason than its lock stops
// the server with the error.
func TestLive_ServeStopsOnABrokenStore(t *testing.T) {
	v := newLiveVault(t, filepath.Join(t.TempDir(), "v"))
	os.WriteFile(v.Abs(vault.DBFile), []byte("not a bbolt file, not at all, and long enough to be read as one....................................................................................."), 0o600)
	s := newServeService(ops.Table(), v, "synapse serve (test)", log.New(io.Discard, "", 0))
	pr, _ := io.Pipe()
	err := s.run(context.Background(), serveConfig{stdio: true}, "", pr, io.Discard)
	if err == nil || errs.Is(err, errs.Unavailable) {
		t.Fatalf("run: %v", err)
	}
}

// A vault path too long for a socket address still gets a socket (Linux:
// through /proc/self/fd).
func TestLive_LongVaultPath(t *testing.T) {
	if maxSockPath > 104 && !fileExists("/proc/self/fd") {
		t.Skip("no /proc")
	}
	dir := filepath.Join(t.TempDir(), strings.Repeat("long-folder-name-", 6), "v")
	if len(filepath.Join(dir, sockFile)) <= maxSockPath {
		t.Fatal("path not long enough")
	}
	v := newLiveVault(t, dir)
	ls := startLive(t, v)
	if ls.s.sock == nil {
		if maxSockPath > 104 {
			t.Fatalf("no socket: %s", ls.logs.String())
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

// The frontmatter sent alongside a result restores YAML styles the JSON
// cannot carry, for every page of the corpus.
func TestLive_FrontmatterRoundTrip(t *testing.T) {
	v := newLiveVault(t, filepath.Join(t.TempDir(), "v"))
	testvault.Write(t, v, "wiki/styled.md", "---\n# a comment\ntitle: 'Styled'\ncreated: 2024-05-01\naliases: [One, \"Two\"]\nn: 012\nblock: |\n  kept\n  as is\n---\nbody\n")
	e, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	list, err := ops.Lookup("page.list").Call(context.Background(), e, []byte(`{"limit":1000}`))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range list.(*ops.ListPagesOut).Pages {
		out, err := ops.Lookup("page.get").Call(context.Background(), e, []byte(fmt.Sprintf(`{"title":%q}`, p.Path)))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := ops.MarshalJSON(out)
		fms := frontmatterYAML(out)
		back := &ops.GetPageOut{}
		if err := json.Unmarshal(data, back); err != nil {
			t.Fatal(err)
		}
		if err := restoreFrontmatter(back, fms); err != nil {
			t.Fatal(err)
		}
		want, _ := out.(*ops.GetPageOut).Frontmatter.YAML()
		got, _ := back.Frontmatter.YAML()
		if got != want {
			t.Errorf("%s: frontmatter\n%s\nbecame\n%s", p.Path, want, got)
		}
		again, _ := ops.MarshalJSON(back)
		if !bytes.Equal(again, data) {
			t.Errorf("%s: JSON changed in the round trip", p.Path)
		}
		n++
	}
	if n < 170 {
		t.Fatalf("only %d pages checked", n)
	}
}

// BenchmarkLive_CLIVerb times CLI verbs run in this process, alone and
// handed to a server over the socket (the built binary's numbers, process
// start included, come from tools/livebench).
func BenchmarkLive_CLIVerb(b *testing.B) {
	v := newLiveVault(b, filepath.Join(b.TempDir(), "v"))
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
	<-ls.s.watcher.Ready()
	bench("beside-serve")
}

// While a reindex rebuilds the index, calls do not act on the half rebuilt
// index: they wait up to lockWait, as a verb alone waits for the lock a
// reindex holds, then answer unavailable.
func TestLive_NoAnswersFromAHalfRebuiltIndex(t *testing.T) {
	defer func(w time.Duration) { lockWait = w }(lockWait)
	lockWait = 200 * time.Millisecond
	v := newLiveVault(t, filepath.Join(t.TempDir(), "v"))
	if r := runCLI(v, "", "reindex"); r.code != 0 {
		t.Fatal(r)
	}
	env, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{Holder: "synapse serve (test)"})
	if err != nil {
		t.Fatal(err)
	}
	bp := &blockingPages{PageIndexer: env.Index.Pages, entered: make(chan struct{}), release: make(chan struct{})}
	env.Index.Pages = bp
	logs := &syncBuffer{}
	ls := runLive(t, newService(ops.Table(), env, log.New(logs, "synapse: ", 0)), logs)
	<-ls.s.watcher.Ready() // nothing changed: the reconciliation indexed no page

	reindexed := make(chan error, 1)
	go func() {
		_, err := callOp(ls.s, "reindex", map[string]any{})
		reindexed <- err
	}()
	<-bp.entered
	if _, err := callOp(ls.s, "get_page", map[string]any{"title": "Home"}); !errs.Is(err, errs.Unavailable) || !strings.Contains(errs.Message(err), "being rebuilt") {
		t.Fatalf("get_page during a reindex: %v", err)
	}
	if _, err := callOp(ls.s, "review.add", map[string]any{"type": "suggestion", "title": "During a reindex"}); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("review.add during a reindex: %v", err)
	}
	close(bp.release)
	if err := <-reindexed; err != nil {
		t.Fatal(err)
	}
	if pageTitleVia(ls.s, "Home") != "Home" {
		t.Fatal("get_page after the reindex")
	}
}

// A long operation handed to a server reports the server's scan progress
// to the waiting verb (drawn on a terminal), and heartbeats keep a verb
// waiting on a slow operation from giving up on a live server: held for
// three times the idle bound, the reindex still answers. The margins are
// wide (a heartbeat every 10 ms against an idle bound of 1 s), so a loaded
// machine that leaves a goroutine unscheduled for a while cannot fail it;
// TestLive_SilentServerTimesOut shows the same call fails without the
// heartbeats.
func TestLive_ForwardedProgressAndHeartbeats(t *testing.T) {
	idle := time.Second
	seen, elapsed, err := heldReindexOverSocket(t, 10*time.Millisecond, idle, func(released chan<- struct{}) {
		time.Sleep(3 * idle)
		close(released)
	})
	if err != nil {
		t.Fatalf("reindex over the socket: %v", err)
	}
	if elapsed < 3*idle {
		t.Fatalf("the reindex was held %v, less than three idle bounds", elapsed)
	}
	if len(seen) == 0 || seen[len(seen)-1].Phase == "" {
		t.Fatalf("no progress reported: %v", seen)
	}
}

// TestLive_SilentServerTimesOut is the control of the test above: a server
// that sends no heartbeat while its operation runs is given up on after
// the idle bound.
func TestLive_SilentServerTimesOut(t *testing.T) {
	idle := 300 * time.Millisecond
	var release chan<- struct{}
	_, elapsed, err := heldReindexOverSocket(t, time.Hour, idle, func(released chan<- struct{}) { release = released })
	close(release)
	if !errors.Is(err, errServerGone) {
		t.Fatalf("a silent server: %v, want errServerGone", err)
	}
	if elapsed < idle {
		t.Fatalf("gave up after %v, before the idle bound %v", elapsed, idle)
	}
}

// heldReindexOverSocket serves a vault whose reindex blocks until hold
// closes the channel it is given (hold runs in its own goroutine once the
// reindex is blocked; if it returns without closing, the caller closes it
// after the call), and runs that reindex over the socket with the given
// heartbeat and idle bound. It returns the progress seen, how long the
// call took and its error.
func heldReindexOverSocket(t *testing.T, heartbeat, idle time.Duration, hold func(released chan<- struct{})) ([]sockProgress, time.Duration, error) {
	t.Helper()
	h0, i0 := sockHeartbeat, sockIdle
	t.Cleanup(func() { sockHeartbeat, sockIdle = h0, i0 }) // after the server stops
	sockHeartbeat, sockIdle = heartbeat, idle
	v := newLiveVault(t, filepath.Join(t.TempDir(), "v"))
	if r := runCLI(v, "", "reindex"); r.code != 0 {
		t.Fatal(r)
	}
	env, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{Holder: "synapse serve (test)"})
	if err != nil {
		t.Fatal(err)
	}
	bp := &blockingPages{PageIndexer: env.Index.Pages, entered: make(chan struct{}), release: make(chan struct{})}
	env.Index.Pages = bp
	logs := &syncBuffer{}
	ls := runLive(t, newService(ops.Table(), env, log.New(logs, "synapse: ", 0)), logs)
	<-ls.s.watcher.Ready()

	sc, err := dialServer(v)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.close()
	var mu sync.Mutex
	var seen []sockProgress
	held := make(chan struct{})
	go func() {
		<-bp.entered
		hold(bp.release)
		close(held)
	}()
	t0 := time.Now()
	_, err = sc.call(context.Background(), sockRequest{Op: "reindex", Progress: true, Patient: true}, func(p sockProgress) {
		mu.Lock()
		seen = append(seen, p)
		mu.Unlock()
	})
	elapsed := time.Since(t0)
	<-held
	mu.Lock()
	defer mu.Unlock()
	return seen, elapsed, err
}
