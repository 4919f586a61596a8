package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
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
	"github.com/synapse-wiki/synapse/internal/server/servertest"
	"github.com/synapse-wiki/synapse/internal/server/sock"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// liveServer is a Service running in this process as `serve --mcp-stdio`
// does, until Stop (or the end of the test).
type liveServer struct {
	*servertest.Live
	s *Service
}

// startLive opens v as serve does (primary, or proxy when a server holds
// it) and runs it.
func startLive(t testing.TB, v *vault.Vault) *liveServer {
	t.Helper()
	logs := &servertest.SyncBuffer{}
	s := New(ops.Table(), v, Config{Stdio: true, Holder: "synapse serve --mcp-stdio (test)"}, log.New(logs, "synapse: ", 0))
	return &liveServer{servertest.Run(t, s, v, logs), s}
}

func runLive(t testing.TB, s *Service, v *vault.Vault, logs *servertest.SyncBuffer) *liveServer {
	t.Helper()
	return &liveServer{servertest.Run(t, s, v, logs), s}
}

// serveIndexedHeld serves an indexed corpus vault whose next scans are
// held (the start-up reconciliation, finding nothing changed, indexes no
// page and is done when this returns).
func serveIndexedHeld(t *testing.T, timing sock.Timing) (*vault.Vault, *liveServer, *servertest.BlockingPages) {
	t.Helper()
	v := servertest.LiveVault(t, filepath.Join(t.TempDir(), "v"))
	reindex(t, v)
	env, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{Holder: "synapse serve (test)"})
	if err != nil {
		t.Fatal(err)
	}
	bp := servertest.HoldScans(env)
	logs := &servertest.SyncBuffer{}
	ls := runLive(t, Open(ops.Table(), env, Config{Stdio: true, Socket: timing}, log.New(logs, "synapse: ", 0)), v, logs)
	<-ls.s.watcher.Ready()
	return v, ls, bp
}

// reindex builds v's index as `synapse reindex` does without a server.
func reindex(t testing.TB, v *vault.Vault) {
	t.Helper()
	e, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{NoInitialScan: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := ops.Lookup("reindex").Call(context.Background(), e, nil); err != nil {
		t.Fatal(err)
	}
}

// The caller's environment configures deep-research, not the server's: a
// verb behaves as it would without a server.
func TestLive_ResearchUsesTheCallersEnvironment(t *testing.T) {
	v := servertest.LiveVault(t, filepath.Join(t.TempDir(), "v"))
	ls := startLive(t, v)
	added, err := servertest.CallOp(ls.s, "review.add", map[string]any{"type": "suggestion", "title": "Research me"})
	if err != nil {
		t.Fatal(err)
	}
	id := added.(*ops.AddReviewOut).Item.ID
	ctx := ops.WithEnviron(context.Background(), []string{"PATH=" + os.Getenv("PATH"), "SYNAPSE_RESEARCH_CMD=echo from-the-caller $SYNAPSE_REVIEW_ID"})
	out, err := ls.s.Call(ctx, false, ops.Lookup("review.resolve"), []byte(`{"id":"`+id+`","action":"deep-research"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*ops.ResolveReviewOut).Resolution; got != "from-the-caller "+id {
		t.Fatalf("resolution %q", got)
	}
}

// Pages saved into wiki/ by another program reach the server's answers:
// written in place, saved by rename, deleted, in a new folder.
func TestLive_WatcherFeedsTheServer(t *testing.T) {
	v := servertest.LiveVault(t, filepath.Join(t.TempDir(), "v"))
	ls := startLive(t, v)
	s := ls.s

	testvault.Write(t, v, "wiki/outside.md", "---\ntitle: Written Outside\n---\nby another program\n")
	servertest.Eventually(t, "a page written in place", func() bool { return servertest.PageVia(s, "Written Outside").Title != "" })

	tmp := v.Abs("wiki/.outside.md.swp")
	os.WriteFile(tmp, []byte("---\ntitle: Saved By Rename\n---\nagain\n"), 0o644)
	if err := os.Rename(tmp, v.Abs("wiki/outside.md")); err != nil {
		t.Fatal(err)
	}
	servertest.Eventually(t, "a rename-save", func() bool {
		return servertest.PageVia(s, "Saved By Rename").Title != "" && servertest.PageVia(s, "Written Outside").Title == ""
	})

	os.Remove(v.Abs("wiki/outside.md"))
	servertest.Eventually(t, "a delete", func() bool { return servertest.PageVia(s, "Saved By Rename").Title == "" })

	os.MkdirAll(v.Abs("wiki/projects/2026"), 0o755)
	testvault.Write(t, v, "wiki/projects/2026/plan.md", "# Plan\n")
	servertest.Eventually(t, "a page in a new folder", func() bool { return servertest.PageVia(s, "plan").Path == "wiki/projects/2026/plan.md" })
	testvault.Write(t, v, "wiki/projects/2026/later.md", "# Later\n")
	servertest.Eventually(t, "a later page in the new folder", func() bool { return servertest.PageVia(s, "later").Path == "wiki/projects/2026/later.md" })

	if ops.Lookup("search") != nil {
		testvault.Write(t, v, "wiki/projects/2026/quokka.md", "# Quokka habitat\n\nRottnest island marsupials.\n")
		servertest.Eventually(t, "a search hit for a saved page", func() bool {
			out, err := servertest.CallOp(s, "search_wiki", map[string]any{"query": "rottnest marsupials"})
			return err == nil && strings.Contains(servertest.ResultJSON(t, out), "quokka.md")
		})
	}
}

// trigger_source_rescan goes to the watcher: concurrent requests share
// scans, and none waits behind a write.
func TestLive_RescanCoalescesOnTheWatcher(t *testing.T) {
	v := servertest.LiveVault(t, filepath.Join(t.TempDir(), "v"))
	ls := startLive(t, v)
	s := ls.s
	<-s.watcher.Ready()
	before := s.scans.Load()
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := servertest.CallOp(s, "trigger_source_rescan", map[string]any{})
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
		_, err := servertest.CallOp(s, "trigger_source_rescan", map[string]any{})
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
		_, err := servertest.CallOp(s, "reindex", map[string]any{})
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

// A serve started while a CLI verb holds the store answers MCP at once and
// its calls unavailable, naming the holder, until the store is free; then
// it takes it.
func TestLive_ServeWaitsForAHeldStore(t *testing.T) {
	v := servertest.LiveVault(t, filepath.Join(t.TempDir(), "v"))
	st, err := store.Open(v.Abs(vault.DBFile), store.Options{Holder: "synapse reindex"})
	if err != nil {
		t.Fatal(err)
	}
	logs := &servertest.SyncBuffer{}
	timing := sock.DefaultTiming()
	timing.LockWait = 300 * time.Millisecond
	s := New(ops.Table(), v, Config{Holder: "synapse serve (test)", Socket: timing}, log.New(logs, "synapse: ", 0))
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.run(context.Background(), Config{Stdio: true}, "", pr, io.Discard) }()
	c, err := client.NewInProcessClient(s.newMCPServer(false))
	if err != nil {
		t.Fatal(err)
	}
	servertest.StartClient(t, c) // initialize answers while the store is held
	res, isErr := servertest.MCPCall(t, c, "get_page", map[string]any{"title": "Home"})
	if !isErr || !regexp.MustCompile(`unavailable: the vault's store is held by pid \d+ \(synapse reindex`).MatchString(fmt.Sprint(res["error"])) {
		t.Fatalf("a call while the store is held: %v", res)
	}
	// the opener logs from its own goroutine: the call may answer first
	servertest.Eventually(t, "the held store logged", func() bool {
		return strings.Contains(logs.String(), "calls answer unavailable until it is free")
	})
	st.Close()
	servertest.Eventually(t, "the store taken over", func() bool {
		_, isErr := servertest.MCPCall(t, c, "get_page", map[string]any{"title": "Home"})
		return !isErr
	})
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A store that cannot be opened for another reason than its lock stops
// the server with the error. (A damaged store file is no such reason: it
// is moved aside and rebuilt, docs/limits.md; a symlink in its place is
// refused, never followed.)
func TestLive_ServeStopsOnABrokenStore(t *testing.T) {
	v := servertest.LiveVault(t, filepath.Join(t.TempDir(), "v"))
	other := filepath.Join(t.TempDir(), "elsewhere.db")
	if err := os.WriteFile(other, []byte("a file outside the vault"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(v.Abs(vault.DBFile))
	if err := os.Symlink(other, v.Abs(vault.DBFile)); err != nil {
		t.Fatal(err)
	}
	s := New(ops.Table(), v, Config{Holder: "synapse serve (test)"}, log.New(io.Discard, "", 0))
	pr, pw := io.Pipe()
	defer pw.Close()
	done := make(chan error, 1)
	go func() { done <- s.run(context.Background(), Config{Stdio: true}, "", pr, io.Discard) }()
	select {
	case err := <-done:
		if err == nil || errs.Is(err, errs.Unavailable) {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("serve kept running on a store it cannot open")
	}
}

// While a reindex rebuilds the index, calls do not act on the half rebuilt
// index: they wait up to the socket timing's LockWait, as a verb alone
// waits for the lock a reindex holds, then answer unavailable.
func TestLive_NoAnswersFromAHalfRebuiltIndex(t *testing.T) {
	timing := sock.DefaultTiming()
	timing.LockWait = 200 * time.Millisecond
	_, ls, bp := serveIndexedHeld(t, timing)

	reindexed := make(chan error, 1)
	go func() {
		_, err := servertest.CallOp(ls.s, "reindex", map[string]any{})
		reindexed <- err
	}()
	<-bp.Entered
	if _, err := servertest.CallOp(ls.s, "get_page", map[string]any{"title": "Home"}); !errs.Is(err, errs.Unavailable) || !strings.Contains(errs.Message(err), "being rebuilt") {
		t.Fatalf("get_page during a reindex: %v", err)
	}
	if _, err := servertest.CallOp(ls.s, "review.add", map[string]any{"type": "suggestion", "title": "During a reindex"}); !errs.Is(err, errs.Unavailable) {
		t.Fatalf("review.add during a reindex: %v", err)
	}
	close(bp.Release)
	if err := <-reindexed; err != nil {
		t.Fatal(err)
	}
	if servertest.PageVia(ls.s, "Home").Title != "Home" {
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
	if !errors.Is(err, sock.ErrGone) {
		t.Fatalf("a silent server: %v, want sock.ErrGone", err)
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
func heldReindexOverSocket(t *testing.T, heartbeat, idle time.Duration, hold func(released chan<- struct{})) ([]sock.Progress, time.Duration, error) {
	t.Helper()
	timing := sock.DefaultTiming()
	timing.Heartbeat, timing.Idle = heartbeat, idle
	v, _, bp := serveIndexedHeld(t, timing)

	sc, err := sock.Dial(v, timing)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var mu sync.Mutex
	var seen []sock.Progress
	held := make(chan struct{})
	go func() {
		<-bp.Entered
		hold(bp.Release)
		close(held)
	}()
	t0 := time.Now()
	_, err = sc.Call(context.Background(), sock.Request{Op: "reindex", Progress: true, Patient: true}, func(p sock.Progress) {
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
