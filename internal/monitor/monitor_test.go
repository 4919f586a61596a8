//go:build linux

package monitor

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func anyPeer(net.Conn) error { return nil }

var testClient = ClientOptions{Version: "test", CheckPeer: anyPeer}

// newVault lays out the folders a monitor watches.
func newVault(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{".synapse", "wiki/concepts", "raw/sources"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// start runs a monitor on root until the test ends and waits for it to
// answer; it returns the token for now and the channel Run's error
// arrives on.
func start(t *testing.T, root string, idle time.Duration) (string, chan error) {
	t.Helper()
	return startWith(t, root, Options{Version: "test", Idle: idle, CheckPeer: anyPeer})
}

// startWith is start with the monitor's options.
func startWith(t *testing.T, root string, o Options) (string, chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, root, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the monitor did not stop")
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		a, err := Ask(context.Background(), root, "", testClient)
		if err == nil {
			if !a.Full {
				t.Fatalf("first answer %+v: want Full (no token yet)", a)
			}
			return a.Token, done
		}
		if !errors.Is(err, ErrNotRunning) || time.Now().After(deadline) {
			t.Fatalf("ask: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestMonitor_EditJustBeforeAsk: an edit finished just before the
// question is in its answer, every time (the cookie flush), and an
// answer lists only what changed after the token asked about.
func TestMonitor_EditJustBeforeAsk(t *testing.T) {
	root := newVault(t)
	write(t, root, "wiki/a.md", "a")
	tok, _ := start(t, root, time.Minute)
	for i := range 200 {
		rel := "wiki/concepts/p" + strconv.Itoa(i%7) + ".md"
		write(t, root, rel, "edit "+strconv.Itoa(i))
		a, err := Ask(context.Background(), root, tok, testClient)
		if err != nil {
			t.Fatal(err)
		}
		if a.Full || !slices.Equal(a.Paths, []string{rel}) {
			t.Fatalf("edit %d of %s: answer %+v", i, rel, a)
		}
		tok = a.Token
	}
	a, err := Ask(context.Background(), root, tok, testClient)
	if err != nil || a.Full || len(a.Paths) != 0 || a.Token != tok {
		t.Fatalf("nothing changed: answer %+v, %v (token %s)", a, err, tok)
	}
}

// TestMonitor_Changes: creates, deletes, renames, new folders (and files
// made in them at once), schema.md; hidden and temporary files and
// .synapse/ are not changes.
func TestMonitor_Changes(t *testing.T) {
	root := newVault(t)
	write(t, root, "wiki/old.md", "x")
	write(t, root, "wiki/gone.md", "x")
	write(t, root, "wiki/dir/in.md", "x")
	write(t, root, "wiki/dir/sub/in.md", "x")
	outside := t.TempDir()
	write(t, outside, "folder/sub/page.md", "x")
	tok, _ := start(t, root, time.Minute)
	write(t, root, "wiki/new/deep/page.md", "x")
	write(t, root, "raw/sources/s.txt", "x")
	write(t, root, "schema.md", "x")
	write(t, root, "wiki/.hidden.md", "x")
	write(t, root, "wiki/page.md~", "x")
	write(t, root, ".synapse/config.yaml", "x")
	write(t, root, "notes.md", "x")
	if err := os.Rename(filepath.Join(root, "wiki/old.md"), filepath.Join(root, "wiki/renamed.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "wiki/gone.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "wiki/dir"), filepath.Join(root, "wiki/moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(outside, "folder"), filepath.Join(root, "wiki/arrived")); err != nil {
		t.Fatal(err)
	}
	a, err := Ask(context.Background(), root, tok, testClient)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"raw/sources/s.txt", "schema.md", "wiki/arrived", "wiki/dir", "wiki/gone.md", "wiki/moved", "wiki/new", "wiki/old.md", "wiki/renamed.md"}
	for _, p := range want {
		if !slices.Contains(a.Paths, p) {
			t.Errorf("%s missing from %v", p, a.Paths)
		}
	}
	for _, p := range a.Paths {
		if filepath.Base(p) == ".hidden.md" || filepath.Base(p) == "page.md~" || p == "notes.md" || p == ".synapse/config.yaml" {
			t.Errorf("%s is no change of the vault's tracked files (%v)", p, a.Paths)
		}
	}
	// the moved folders are watched under their new names
	write(t, root, "wiki/moved/later.md", "x")
	write(t, root, "wiki/moved/sub/later.md", "x")
	write(t, root, "wiki/arrived/sub/later.md", "x")
	write(t, root, "wiki/new/deep/later.md", "x")
	b, err := Ask(context.Background(), root, a.Token, testClient)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Paths, []string{"wiki/arrived/sub/later.md", "wiki/moved/later.md", "wiki/moved/sub/later.md", "wiki/new/deep/later.md"}) {
		t.Errorf("after the moves: %v", b.Paths)
	}
}

// TestMonitor_OnePerVault: a second monitor on the same vault steps
// aside; a token of another run is answered Full.
func TestMonitor_OnePerVault(t *testing.T) {
	root := newVault(t)
	tok, _ := start(t, root, time.Minute)
	err := Run(context.Background(), root, Options{Version: "test", CheckPeer: anyPeer})
	if !errors.Is(err, ErrRunning) {
		t.Fatalf("second monitor: %v, want ErrRunning", err)
	}
	a, err := Ask(context.Background(), root, "0123:5", testClient)
	if err != nil || !a.Full {
		t.Fatalf("another run's token: %+v, %v", a, err)
	}
	if a, err := Ask(context.Background(), root, tok, testClient); err != nil || a.Full {
		t.Fatalf("its own token: %+v, %v", a, err)
	}
}

// TestMonitor_Exits: a monitor exits when idle, when asked by a CLI of
// another version, and when its socket is removed; nothing is left
// running.
func TestMonitor_Exits(t *testing.T) {
	for _, c := range []struct {
		name string
		do   func(t *testing.T, root string)
	}{
		{"idle", func(*testing.T, string) {}},
		{"version", func(t *testing.T, root string) {
			o := testClient
			o.Version = "other"
			if _, err := Ask(context.Background(), root, "", o); !errors.Is(err, ErrVersion) {
				t.Errorf("ask of another version: %v", err)
			}
		}},
		{"socket removed", func(t *testing.T, root string) { os.Remove(filepath.Join(root, SockFile)) }},
		{"state removed", func(t *testing.T, root string) { os.RemoveAll(filepath.Join(root, ".synapse")) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := newVault(t)
			idle := time.Minute
			if c.name == "idle" {
				idle = 300 * time.Millisecond
			}
			_, done := start(t, root, idle)
			c.do(t, root)
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
				done <- nil // for the cleanup
			case <-time.After(20 * time.Second):
				t.Fatal("the monitor is still running")
			}
			if _, err := os.Lstat(filepath.Join(root, SockFile)); err == nil {
				t.Error("the socket was left behind")
			}
		})
	}
}

// TestMonitor_SymlinkedFolder: a vault whose tracked tree holds a
// symlinked folder is not watched (edits behind the link raise no event
// on the vault's side); the reason is kept for the CLI.
func TestMonitor_SymlinkedFolder(t *testing.T) {
	root := newVault(t)
	if err := os.Symlink(filepath.Join(root, "raw/sources"), filepath.Join(root, "wiki/linked")); err != nil {
		t.Fatal(err)
	}
	err := Run(context.Background(), root, Options{Version: "test", CheckPeer: anyPeer})
	if err == nil {
		t.Fatal("Run watched a vault with a symlinked folder")
	}
	if why, ok := OffReason(root); !ok || why == "" {
		t.Errorf("no reason kept (%q, %v)", why, ok)
	}
}

func TestChangeLog(t *testing.T) {
	l := newChangeLog()
	t0 := l.token()
	l.note("wiki/a.md")
	l.note("wiki/b.md")
	t1 := l.token()
	l.note("wiki/a.md")
	if _, p, full := l.since(t0); full || !slices.Equal(p, []string{"wiki/a.md", "wiki/b.md"}) {
		t.Errorf("since t0: %v %v", p, full)
	}
	if _, p, full := l.since(t1); full || !slices.Equal(p, []string{"wiki/a.md"}) {
		t.Errorf("since t1: %v %v", p, full)
	}
	for _, bad := range []string{"", "x", "other:1", l.instance + ":99", l.instance + ":-1"} {
		if _, _, full := l.since(bad); !full {
			t.Errorf("since %q: not full", bad)
		}
	}
	l.lost()
	if _, _, full := l.since(t1); !full {
		t.Error("a token from before lost events is answered")
	}
	if tok, p, full := l.since(l.token()); full || len(p) != 0 || tok == t1 {
		t.Errorf("after the loss: %v %v %s", p, full, tok)
	}
}

// TestMonitor_SymlinkedFolderLater: a symlinked folder made while the
// monitor runs stops it (it could not vouch for edits behind the link),
// and the reason is kept.
func TestMonitor_SymlinkedFolderLater(t *testing.T) {
	root := newVault(t)
	_, done := start(t, root, time.Minute)
	if err := os.Symlink(filepath.Join(root, "raw/sources"), filepath.Join(root, "wiki/linked")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		done <- nil
	case <-time.After(20 * time.Second):
		t.Fatal("the monitor still runs beside a symlinked folder")
	}
	if why, ok := OffReason(root); !ok || !strings.Contains(why, "wiki/linked") {
		t.Errorf("reason %q (%v)", why, ok)
	}
}
