// Package replay is what the tools that replay reproductions against a
// built synapse binary share (tools/repro13, tools/hostilevault): a table
// of rows — each reproduction, what it did before, what happens now,
// whether it still does harm — and a `synapse serve --http` started as a
// child process, found by the address it logs.
package replay

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Row is one reproduction's outcome.
type Row struct {
	Name, Before, Now string
	OK                bool // no harm now
}

// Table collects rows, saying each on stderr as it is recorded.
type Table struct{ Rows []Row }

// Record adds a row.
func (t *Table) Record(name, before string, ok bool, format string, args ...any) {
	r := Row{Name: name, Before: before, Now: fmt.Sprintf(format, args...), OK: ok}
	t.Rows = append(t.Rows, r)
	mark := "ok  "
	if !ok {
		mark = "FAIL"
	}
	fmt.Fprintf(os.Stderr, "%s %s: %s\n", mark, name, r.Now)
}

// Harm counts the rows that still do harm.
func (t *Table) Harm() int {
	n := 0
	for _, r := range t.Rows {
		if !r.OK {
			n++
		}
	}
	return n
}

// Markdown writes the rows as a markdown table under the given headers of
// its first three columns (the fourth says whether a row does harm).
func (t *Table) Markdown(w io.Writer, what, before, now string) {
	fmt.Fprintf(w, "| %s | %s | %s | harm |\n|---|---|---|---|\n", what, before, now)
	for _, r := range t.Rows {
		verdict := "none"
		if !r.OK {
			verdict = "**YES**"
		}
		cell := func(s string) string { return strings.ReplaceAll(s, "|", "/") }
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", cell(r.Name), cell(r.Before), cell(r.Now), verdict)
	}
}

// Result is one run of the binary: its exit code (-1 when it hung or did
// not start), output and time.
type Result struct {
	Code           int
	Stdout, Stderr string
	Took           time.Duration
	Hung           bool // killed after the hang limit
}

// Exec runs bin with args, environment env and stdin; a run longer than
// hang is killed and marked Hung.
func Exec(bin string, env []string, stdin string, hang time.Duration, args ...string) Result {
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	cmd.WaitDelay = time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String(), Took: time.Since(t0)}
	if ctx.Err() != nil {
		r.Hung, r.Code = true, -1
		return r
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		r.Code, r.Stderr = -1, err.Error()
	}
	return r
}

// Server is a `synapse serve --http` child process.
type Server struct {
	Cmd *exec.Cmd
	// Addr is the address it serves on (host:port), "" when it exited or
	// did not start in time; Exited is closed when it has exited.
	Addr   string
	Exited chan struct{}

	mu   sync.Mutex
	logs strings.Builder
}

var servingRE = regexp.MustCompile(`serving http://(127\.0\.0\.1:\d+)`)

// StartServer starts cmd (a serve --http) and waits up to timeout for the
// address it logs on stderr; on timeout the process is killed.
func StartServer(cmd *exec.Cmd, timeout time.Duration) (*Server, error) {
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Cmd: cmd, Exited: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.mu.Lock()
			s.logs.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		cmd.Wait()
		close(s.Exited)
	}()
	select {
	case s.Addr = <-addr:
	case <-s.Exited:
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-s.Exited
		return s, fmt.Errorf("serve did not start within %s: %s", timeout, s.Log())
	}
	return s, nil
}

// Log is what the server wrote on stderr so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// Stop sends SIGTERM and returns the time to exit and whether it exited
// within wait (killed otherwise).
func (s *Server) Stop(wait time.Duration) (time.Duration, bool) {
	t0 := time.Now()
	s.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.Exited:
		return time.Since(t0), true
	case <-time.After(wait):
		s.Cmd.Process.Kill()
		<-s.Exited
		return time.Since(t0), false
	}
}
