package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/ops"
)

// tmuxSession is a terminal driven through tmux: a shell in a pane of a
// server of its own (its own socket), so no tmux of the user's is touched.
type tmuxSession struct {
	t    *testing.T
	tmux string
	sock string
}

// needTmux returns tmux's path; without tmux the test is skipped, unless
// SYNAPSE_REQUIRE_TMUX=1 (CI sets it) makes that a failure.
func needTmux(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("SYNAPSE_REQUIRE_TMUX") == "1" {
			t.Fatal("tmux is not installed and SYNAPSE_REQUIRE_TMUX=1")
		}
		t.Skip("tmux is not installed (scripts/test installs it)")
	}
	return bin
}

func newTmux(t *testing.T, w, h int, dir string, env []string) *tmuxSession {
	t.Helper()
	bin := needTmux(t)
	s := &tmuxSession{t: t, tmux: bin, sock: fmt.Sprintf("synapse-desk-%d", os.Getpid())}
	args := []string{"-f", "/dev/null", "new-session", "-d", "-s", "desk", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-c", dir}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	s.run(append(args, "sh")...)
	t.Cleanup(func() { exec.Command(bin, "-L", s.sock, "kill-server").Run() })
	s.run("set-option", "-t", "desk", "status", "off")
	s.shell("PS1='$ '")
	s.shell("clear")
	return s
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command(s.tmux, append([]string{"-L", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys types keys (tmux key names: Enter, Space, Escape, or text).
func (s *tmuxSession) keys(ks ...string) {
	s.t.Helper()
	for _, k := range ks {
		s.run("send-keys", "-t", "desk", k)
	}
}

// shell types a command line and waits for the prompt to come back.
func (s *tmuxSession) shell(line string) {
	s.t.Helper()
	s.run("send-keys", "-t", "desk", "-l", line)
	s.keys("Enter")
	s.waitFor("$", func(screen string) bool { return strings.HasSuffix(strings.TrimRight(screen, "\n "), "$") })
}

// capture is the pane's text (tmux drops the spaces that end a line).
func (s *tmuxSession) capture() string {
	s.t.Helper()
	return s.run("capture-pane", "-p", "-t", "desk")
}

// waitFor waits until the screen shows text (and ok, when given, agrees).
func (s *tmuxSession) waitFor(text string, ok ...func(string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		screen := s.capture()
		if strings.Contains(screen, text) && (len(ok) == 0 || ok[0](screen)) {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the terminal does not show %q:\n%s", text, screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// deskVault is the Obsidian Help vault with 30 review items of four
// types: lint files a missing page, the duplicate titles, orphans and
// pages without links; review add files contradictions.
func deskVault(t *testing.T, bin string) string {
	t.Helper()
	v := testvault.WithCorpus(t)
	cli := func(args ...string) string {
		cmd := exec.Command(bin, append(args, "--vault", v.Root)...)
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("synapse %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	cli("reindex")
	for _, c := range []string{"broken_links", "duplicate_titles", "orphans", "no_outlinks"} {
		cli("lint", "--to-review", "--category", c, "--limit", "10")
	}
	for i := 1; ; i++ {
		var l ops.ListReviewsOut
		json.Unmarshal([]byte(cli("review", "list", "--json", "--limit", "1")), &l)
		if l.Total >= 30 {
			break
		}
		cli("review", "add", "--type", "contradiction", "--title", fmt.Sprintf("Two answers to question %d", i),
			"--ref", "Canvas", "--ref", "Sync", "--rationale", fmt.Sprintf("The pages disagree on point %d.", i))
	}
	return v.Root
}

// The desk in a real terminal (tmux, 80×24) on the Obsidian Help vault:
// decisions made with the keys are the queue's state afterwards, and q
// leaves the terminal as it was.
func TestDesk_Terminal(t *testing.T) {
	needTmux(t)
	bin := synapseBinary(t)
	root := deskVault(t, bin)
	list := func(status string) []ops.ReviewItem {
		out, err := exec.Command(bin, "review", "list", "--status", status, "--limit", "100", "--json", "--vault", root).Output()
		if err != nil {
			t.Fatal(err)
		}
		var l ops.ListReviewsOut
		if err := json.Unmarshal(out, &l); err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	before := list("pending")
	if len(before) != 30 {
		t.Fatalf("%d pending items", len(before))
	}
	var show ops.ShowReviewOut
	if out, err := exec.Command(bin, "review", "show", before[0].ID, "--json", "--vault", root).Output(); err != nil || json.Unmarshal(out, &show) != nil || show.Stub == nil {
		t.Fatalf("review show %s: %v %s", before[0].ID, err, out)
	}
	stubAt := show.Stub.Path
	s := newTmux(t, 80, 24, root, []string{"PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "TERM=xterm-256color"})
	s.shell("stty -g > /tmp/" + s.sock + ".before; echo ready")
	// what the terminal shows before, up to the prompt the desk starts from
	shellScreen := strings.TrimRight(s.capture(), "\n ")
	shellScreen = strings.TrimSuffix(shellScreen, "$")
	s.keys("synapse desk", "Enter")
	s.waitFor("30 pending")
	t.Logf("the desk at 80x24:\n%s", s.waitFor("keys: ")) // the first item's context

	// j, j, d, y dismisses the third item
	s.keys("j", "j", "d")
	s.waitFor("Dismiss " + before[2].ID)
	s.keys("y")
	t.Logf("after j j d y:\n%s", s.waitFor("dismissed "+before[2].ID))
	s.waitFor("29 pending")

	// space on three items (the cursor is on the fourth), then s, y
	s.keys("Space", "Space", "Space")
	s.waitFor("3 selected")
	s.keys("s")
	t.Logf("space ×3, s:\n%s", s.waitFor("Skip 3 selected items?"))
	s.keys("y")
	s.waitFor("skipped 3 items")
	s.waitFor("26 pending")

	// c, y on the missing page lint filed (the first item)
	s.keys("g")
	s.waitFor("Create writes " + stubAt)
	s.keys("c")
	s.waitFor("[y/n]")
	s.keys("y")
	t.Logf("after c y:\n%s", s.waitFor("created "+before[0].ID))
	s.waitFor("25 pending")
	s.keys("q")
	s.waitFor("$ synapse desk", func(screen string) bool {
		return !strings.Contains(screen, "pending") && strings.HasSuffix(strings.TrimRight(screen, "\n "), "synapse desk\n$")
	})
	s.shell("stty -g > /tmp/" + s.sock + ".after; echo done")
	after := s.capture()
	t.Logf("after q:\n%s", after)
	if !strings.HasPrefix(after, shellScreen+"$ synapse desk\n$") {
		t.Errorf("the terminal was not left as it was:\nbefore:\n%s\nafter:\n%s", shellScreen, after)
	}
	b1, _ := os.ReadFile("/tmp/" + s.sock + ".before")
	b2, _ := os.ReadFile("/tmp/" + s.sock + ".after")
	os.Remove("/tmp/" + s.sock + ".before")
	os.Remove("/tmp/" + s.sock + ".after")
	if len(b1) == 0 || string(b1) != string(b2) {
		t.Errorf("terminal settings changed: %q → %q", b1, b2)
	}

	checkDecided(t, list("all"), before)
	// the stub is where the item's context said create would write it
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(stubAt))); err != nil {
		t.Errorf("the stub is not where the desk said: %v", err)
	}
}

// checkDecided checks the queue after TestDesk_Terminal's keys: the first
// item created, the third dismissed, the next three skipped.
func checkDecided(t *testing.T, items []ops.ReviewItem, before []ops.ReviewItem) {
	t.Helper()
	want := map[string]string{before[0].ID: ops.StatusCreated, before[2].ID: ops.StatusDismissed,
		before[3].ID: ops.StatusSkipped, before[4].ID: ops.StatusSkipped, before[5].ID: ops.StatusSkipped}
	for _, it := range items {
		w := want[it.ID]
		if w == "" {
			w = ops.StatusPending
		}
		if it.Status != w {
			t.Errorf("%s (%s %q) is %s, want %s", it.ID, it.Type, it.Title, it.Status, w)
		}
	}
}

// In the desk's activity view the last page write shows its diff, and u, y
// restores the revision before it: the page is that revision's bytes
// again, and synapse recent lists the restore.
func TestDesk_TerminalActivity(t *testing.T) {
	needTmux(t)
	bin := synapseBinary(t)
	v := testvault.WithCorpus(t)
	jsonOf := func(out any, stdin string, args ...string) {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--json", "--vault", v.Root)...)
		cmd.Stdin = strings.NewReader(stdin)
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("synapse %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("synapse %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	var first, second ops.WritePageOut
	jsonOf(&first, "The first version.\n", "page", "write", "Desk note")
	jsonOf(&second, "The second version.\n", "page", "write", "Desk note")
	s := newTmux(t, 80, 24, v.Root, []string{"PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "TERM=xterm-256color"})
	s.keys("synapse desk", "Enter")
	s.waitFor("pending")
	s.keys("2")
	s.waitFor("+The second version.")
	s.waitFor("-The first version.")
	s.keys("u")
	s.waitFor("Restore \"Desk note\"")
	s.keys("y")
	s.waitFor("restored \"Desk note\"")
	s.keys("q")
	var p ops.GetPageOut
	jsonOf(&p, "", "page", "get", "Desk note")
	if p.SHA256 != first.SHA256 || !strings.Contains(p.Content, "The first version.") {
		t.Errorf("after the restore the page is %q (sha256 %s), want the first version's bytes (%s)", p.Content, p.SHA256, first.SHA256)
	}
	var r ops.RecentOut
	jsonOf(&r, "", "recent")
	if len(r.Items) == 0 || r.Items[0].Action != "restored" || r.Items[0].Rev != second.Revision+1 || r.Items[0].From != first.Revision {
		t.Errorf("recent after the restore: %+v", r.Items)
	}
}
