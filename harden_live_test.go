//go:build unix

package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/server"
	"github.com/synapse-wiki/synapse/internal/server/servertest"
	"github.com/synapse-wiki/synapse/internal/server/sock"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

// Hostile-vault reproductions against the built binary: a named pipe and
// symlinks out of the vault, over the CLI (alone and beside a server) and
// over HTTP. Every call answers within seconds and names what it refused;
// nothing outside the vault is read or written; SIGTERM stops the server
// at once.

// httpServe is `synapse serve --http --write` running as a process.
type httpServe struct {
	cmd  *exec.Cmd
	url  string
	logs *servertest.SyncBuffer
	done chan error
}

func startHTTPServe(t *testing.T, bin string, v *vault.Vault) *httpServe {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--http", "--write", "--addr", "127.0.0.1:0", "--vault", v.Root)
	cmd.Env = append(os.Environ(), server.TokenEnv+"="+servertest.Token)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hs := &httpServe{cmd: cmd, logs: &servertest.SyncBuffer{}, done: make(chan error, 1)}
	urlc := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			hs.logs.Write([]byte(sc.Text() + "\n"))
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
		hs.done <- cmd.Wait()
	}()
	select {
	case hs.url = <-urlc:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("serve did not start: %s", hs.logs.String())
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	servertest.Eventually(t, "the server's socket", func() bool { return fileExists(v.Abs(sock.File)) })
	return hs
}

// stop sends SIGTERM and returns how long the server took to exit.
func (hs *httpServe) stop(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	hs.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-hs.done:
		if err != nil {
			t.Errorf("serve exited with %v: %s", err, hs.logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("serve still running 15 s after SIGTERM: %s", hs.logs.String())
	}
	return time.Since(start)
}

func (hs *httpServe) rest(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, hs.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+servertest.Token)
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: 15 * time.Second}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(data)
}

// quickCLI runs a verb of the built binary, failing the test when it has
// not returned within seconds.
func quickCLI(t *testing.T, bin string, v *vault.Vault, stdin string, args ...string) cliResult {
	t.Helper()
	done := make(chan cliResult, 1)
	go func() { done <- binCLI(bin, v, stdin, args...) }()
	select {
	case r := <-done:
		return r
	case <-time.After(15 * time.Second):
		t.Fatalf("synapse %s hangs", strings.Join(args, " "))
	}
	return cliResult{}
}

func TestHardenLive_Fifo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := synapseBinary(t)
	for _, withServer := range []bool{false, true} {
		name := "alone"
		if withServer {
			name = "beside serve"
		}
		t.Run(name, func(t *testing.T) {
			v := testvault.New(t)
			if r := quickCLI(t, bin, v, "# Piped\n\nzebra words\n", "page", "write", "Piped"); r.code != 0 {
				t.Fatalf("page write: %+v", r)
			}
			var srv *httpServe
			if withServer {
				srv = startHTTPServe(t, bin, v)
			}
			page := v.Abs("wiki/concepts/piped.md")
			os.Remove(page)
			if err := syscall.Mkfifo(page, 0o644); err != nil {
				t.Fatal(err)
			}
			// beside serve, the watcher may have seen the fifo and dropped
			// the page from the index first: not found is as harmless
			gone := func(code int, msg string) bool {
				return withServer && code == 3 && strings.Contains(msg, "Piped")
			}
			r := quickCLI(t, bin, v, "", "page", "get", "Piped")
			if (r.code != 5 || !strings.Contains(r.stderr, "named pipe")) && !gone(r.code, r.stderr) {
				t.Errorf("page get of a fifo: %+v", r)
			}
			if srv != nil {
				if st, body := srv.rest(t, "GET", "/pages/Piped", ""); (st != 403 || !strings.Contains(body, "named pipe")) && !gone(st/100-1, body) {
					t.Errorf("REST get of a fifo: %d %s", st, body)
				}
			}
			if r := quickCLI(t, bin, v, "", "search", "zebra"); r.code != 0 {
				t.Errorf("search beside a fifo: %+v", r)
			}
			if r := quickCLI(t, bin, v, "new\n", "page", "write", "Piped"); r.code != 5 || !strings.Contains(r.stderr, "named pipe") {
				t.Errorf("page write to a fifo: %+v", r)
			}
			// and a fifo at log.md: every later write answers (main wedged
			// the write lock for good)
			os.Remove(v.Abs(vault.LogPage))
			syscall.Mkfifo(v.Abs(vault.LogPage), 0o644)
			for i := 0; i < 2; i++ {
				if r := quickCLI(t, bin, v, "x\n", "page", "write", "Logged"); r.code != 5 || !strings.Contains(r.stderr, vault.LogPage) {
					t.Errorf("page write with a fifo log.md: %+v", r)
				}
			}
			if r := quickCLI(t, bin, v, "", "source", "rescan"); r.code != 0 || !strings.Contains(r.stdout, "refused") {
				t.Errorf("rescan: %+v", r)
			}
			if r := quickCLI(t, bin, v, "", "status"); r.code != 0 || !strings.Contains(r.stdout, "named pipe") {
				t.Errorf("status: %+v", r)
			}
			if srv == nil {
				return
			}
			if st, body := srv.rest(t, "PUT", "/pages/Other", `{"content":"x\n"}`); st != 403 || !strings.Contains(body, "log.md") {
				t.Errorf("REST write with a fifo log.md: %d %s", st, body)
			}
			if d := srv.stop(t); d > 5*time.Second {
				t.Errorf("SIGTERM took %s", d)
			}
		})
	}
}

func TestHardenLive_Symlinks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := synapseBinary(t)
	v := testvault.New(t)
	outside := filepath.Join(filepath.Dir(v.Root), "outside")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte("# Secret\n\nOUTSIDE-SECRET\n"), 0o644)
	if r := quickCLI(t, bin, v, "# Mine\n", "page", "write", "Mine"); r.code != 0 {
		t.Fatalf("page write: %+v", r)
	}
	srv := startHTTPServe(t, bin, v)
	// a wiki/ folder that is a symlink out
	os.RemoveAll(v.Abs("wiki/concepts"))
	os.Symlink("../../outside", v.Abs("wiki/concepts"))
	if r := quickCLI(t, bin, v, "body\n", "page", "write", "Sym Concept"); r.code != 5 || !strings.Contains(r.stderr, "symlink") {
		t.Errorf("CLI write through a symlinked folder: %+v", r)
	}
	if st, body := srv.rest(t, "PUT", "/pages/Rest%20Concept", `{"content":"body\n"}`); st != 403 || !strings.Contains(body, "symlink") {
		t.Errorf("REST write through a symlinked folder: %d %s", st, body)
	}
	// a page that is a symlink to an outside file
	os.Remove(v.Abs("wiki/concepts"))
	os.MkdirAll(v.Abs("wiki/concepts"), 0o755)
	os.Symlink(filepath.Join(outside, "secret.md"), v.Abs("wiki/concepts/mine.md"))
	// forbidden while the index still holds the page; not found once the
	// watcher's rescan has refused the link (both read nothing)
	if r := quickCLI(t, bin, v, "", "page", "get", "Mine"); (r.code != 5 && r.code != 3) || strings.Contains(r.stdout+r.stderr, "OUTSIDE-SECRET") {
		t.Errorf("CLI get of a page linked out: %+v", r)
	}
	if st, body := srv.rest(t, "GET", "/pages/Mine", ""); (st != 403 && st != 404) || strings.Contains(body, "OUTSIDE-SECRET") {
		t.Errorf("REST get of a page linked out: %d %s", st, body)
	}
	// log.md a symlink to the outside file
	os.Remove(v.Abs(vault.LogPage))
	os.Symlink(filepath.Join(outside, "secret.md"), v.Abs(vault.LogPage))
	if r := quickCLI(t, bin, v, "x\n", "page", "write", "Logged"); r.code != 5 {
		t.Errorf("CLI write with log.md linked out: %+v", r)
	}
	if st, body := srv.rest(t, "PUT", "/pages/Logged%20Too", `{"content":"x\n"}`); st != 403 || !strings.Contains(body, "log.md") {
		t.Errorf("REST write with log.md linked out: %d %s", st, body)
	}
	// purpose.md a symlink: review create copies nothing in
	os.Remove(v.Abs(vault.PurposeFile))
	os.Symlink(filepath.Join(outside, "secret.md"), v.Abs(vault.PurposeFile))
	r := quickCLI(t, bin, v, "", "review", "add", "--type", "purpose-suggestion", "--title", "Widen it")
	id := strings.TrimSpace(r.stdout)
	if st, body := srv.rest(t, "POST", "/review/queue/"+id+"/create", ""); st != 403 || strings.Contains(body, "OUTSIDE-SECRET") {
		t.Errorf("REST review create with purpose.md linked out: %d %s", st, body)
	}
	if r := quickCLI(t, bin, v, "", "review", "resolve", id, "--action", "create"); r.code != 5 || strings.Contains(r.stdout+r.stderr, "OUTSIDE-SECRET") {
		t.Errorf("CLI review create with purpose.md linked out: %+v", r)
	}
	srv.stop(t)
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("files appeared outside the vault: %v", entries)
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "secret.md")); string(data) != "# Secret\n\nOUTSIDE-SECRET\n" {
		t.Errorf("the outside file changed: %q", data)
	}
}

// A CLI verb run by a user who may not open the store is told permission
// denied (main said the store "does not exist yet").
func TestHardenLive_PermissionDenied(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := synapseBinary(t)
	v := testvault.New(t)
	if r := quickCLI(t, bin, v, "", "status"); r.code != 0 {
		t.Fatalf("status: %+v", r)
	}
	cmd := exec.Command(bin, "status", "--vault", v.Root)
	if os.Geteuid() == 0 {
		// another user: the test's temporary folders must be reachable
		for d := v.Root; d != "/" && d != "."; d = filepath.Dir(d) {
			if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o005 != 0o005 {
				os.Chmod(d, st.Mode().Perm()|0o005)
			}
		}
		os.Chmod(filepath.Dir(bin), 0o755)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	} else {
		os.Chmod(v.Abs(vault.StateDir), 0)
		t.Cleanup(func() { os.Chmod(v.Abs(vault.StateDir), 0o700) })
	}
	out, err := cmd.CombinedOutput()
	ee, _ := err.(*exec.ExitError)
	if ee == nil || ee.ExitCode() != 5 || !strings.Contains(string(out), "permission denied") || strings.Contains(string(out), "does not exist") {
		t.Fatalf("a non-owner's status: %v %s", err, out)
	}
}

// The CLI stops at SIGTERM during a long read: a reindex hashing an
// 8 GiB (sparse) source exits at once, and a read of it answers at once
// (main hashed the whole file for both, ignoring the signal).
func TestHardenLive_CLIStopsOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := synapseBinary(t)
	v := testvault.New(t)
	if r := quickCLI(t, bin, v, "", "status"); r.code != 0 { // the first scan, before the huge file
		t.Fatalf("status: %+v", r)
	}
	f, err := os.Create(v.Abs("raw/sources/huge.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Repeat(`{"line":"text"}`+"\n", 1000))
	if err := f.Truncate(8 << 30); err != nil {
		t.Skip("no sparse files here:", err)
	}
	f.Close()
	if r := quickCLI(t, bin, v, "", "source", "read", "huge.jsonl", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"truncated":true`) || !strings.Contains(r.stdout, `"size_bytes":8589934592`) || !strings.Contains(r.stdout, `"sha256_of":"content"`) {
		t.Errorf("source read: %d %.300s %s", r.code, r.stdout, r.stderr)
	}
	cmd := exec.Command(bin, "reindex", "--vault", v.Root)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		ee, _ := err.(*exec.ExitError)
		if ee == nil || ee.ExitCode() != 5 || !strings.Contains(stderr.String(), "interrupted") {
			t.Errorf("reindex after SIGTERM: %v %s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("reindex ignores SIGTERM")
	}
}
