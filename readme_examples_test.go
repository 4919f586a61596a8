//go:build unix

package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeBlock is one ```sh block of the README: its first line's number,
// its lines, and the reason it is not run ("" when it is), from a comment
// `<!-- readme-test: skip: REASON -->` on the line before it.
type readmeBlock struct {
	line  int
	lines []string
	skip  string
}

func readmeShellBlocks(readme string) []readmeBlock {
	var blocks []readmeBlock
	lines := strings.Split(readme, "\n")
	skipRe := regexp.MustCompile(`^<!-- readme-test: skip: (.+) -->$`)
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```sh" {
			continue
		}
		b := readmeBlock{line: i + 2}
		if i > 0 {
			if m := skipRe.FindStringSubmatch(lines[i-1]); m != nil {
				b.skip = m[1]
			}
		}
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			b.lines = append(b.lines, lines[i])
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// TestREADME_Examples runs every shell example of the README, in order, as
// a newcomer would: in a fresh HOME, the set-up command first (it creates
// ~/synapse-demo from the Obsidian Help vault; `go install` is this test's
// binary and `go env GOPATH` a folder in that HOME), then each example in
// the demo vault it cd's into — sources written, pages written and read
// back, review items decided, a background server started, the CLI and
// curl talking to it. Each command must exit 0, or with the code its own
// comment states ("exit 4 if …"). A block is left out only with a
// `<!-- readme-test: skip: REASON -->` line above it (servers in the
// foreground, other programs, an embedding provider, the tests
// themselves); the README's port 7411 is replaced by a free one.
func TestREADME_Examples(t *testing.T) {
	for _, tool := range []string{"bash", "jq", "curl", "synapse"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README examples need %s: %v", tool, err)
		}
	}
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()

	exitRe := regexp.MustCompile(`\s#\s.*\bexit (\d)\b`)
	var sb strings.Builder
	sb.WriteString(`set -o pipefail
fails="$HOME/.readme-fails"; : >"$fails"
go() { # go install [-tags T] . and go env GOPATH, as a newcomer's go would answer them
  case "$*" in
  "install ." | "install -tags urfave_cli_no_docs .") mkdir -p "$HOME/go/bin" && cp "$(command -v synapse)" "$HOME/go/bin/synapse" ;;
  "env GOPATH") echo "$HOME/go" ;;
  *) echo "README test: unexpected go $*" >&2; return 1 ;;
  esac
}
check() { # check STATUS LINE ALLOWED...
  local st=$1 line=$2; shift 2
  for a in "$@"; do [ "$st" = "$a" ] && return 0; done
  echo "README.md:$line: exit status $st (want $*)" >>"$fails"
}
`)
	ran := 0
	for _, b := range readmeShellBlocks(string(data)) {
		if b.skip != "" {
			t.Logf("README.md:%d: not run: %s", b.line, b.skip)
			continue
		}
		for i := 0; i < len(b.lines); i++ {
			n := b.line + i
			cmd := b.lines[i]
			for strings.HasSuffix(cmd, "\\") && i+1 < len(b.lines) {
				i++
				cmd = cmd[:len(cmd)-1] + strings.TrimLeft(b.lines[i], " ")
			}
			if trimmed := strings.TrimSpace(cmd); trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			cmd = strings.ReplaceAll(cmd, "7411", port)
			allowed := "0"
			if m := exitRe.FindStringSubmatch(cmd); m != nil {
				allowed += " " + m[1]
			}
			fmt.Fprintf(&sb, "echo %s\n%s\ncheck $? %d %s\n", shellQuote(fmt.Sprintf("+ README.md:%d: %s", n, cmd)), cmd, n, allowed)
			ran++
		}
	}
	// the servers the examples started in the background
	sb.WriteString("for p in $(jobs -p); do kill \"$p\"; done; wait\ncat \"$fails\"\n")
	if ran < 40 {
		t.Fatalf("only %d README commands found to run", ran)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "bash", "-c", sb.String())
	// its own process group: a server an example leaves running (or a
	// command that hangs) is killed with it, and the pipes close
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	sh.Cancel = func() error { return syscall.Kill(-sh.Process.Pid, syscall.SIGKILL) }
	sh.WaitDelay = 5 * time.Second
	defer func() {
		if sh.Process != nil {
			syscall.Kill(-sh.Process.Pid, syscall.SIGKILL) // whatever is left of the group
		}
	}()
	sh.Dir = repo
	sh.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + t.TempDir(), "NO_COLOR=1", "LANG=C.UTF-8", "COLUMNS=80"}
	sh.Stdin = nil
	out, err := sh.CombinedOutput()
	fails, _ := os.ReadFile(filepath.Join(home, ".readme-fails"))
	if err != nil || len(fails) > 0 {
		t.Fatalf("the README examples (%d commands) failed: %v\n%s\n%s", ran, err, fails, out)
	}
	t.Logf("ran %d README commands", ran)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
