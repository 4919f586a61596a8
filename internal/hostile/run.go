package hostile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Runner runs a synapse binary with a bound on each call.
type Runner struct {
	Bin string
	// Hang is how long a call may run before it is killed and reported as
	// a hang (default 60 s).
	Hang time.Duration
	// Env is added to the environment of every call.
	Env []string
	// Credential, when set, runs the calls as another user.
	Credential *syscall.Credential
	// Launcher, when set, is a program that runs the call for it and
	// reports the call's own peak RSS (see Launch): started straight from
	// this process, a child's peak RSS counts this process's (Linux
	// records the peak of the memory a vfork child shares with its parent
	// when it execs).
	Launcher string
}

// LaunchEnv names the file a launcher writes the peak RSS of its call to.
const LaunchEnv = "HOSTILE_RSS_FILE"

// Launch runs args as a launcher: the program with this process's stdin,
// stdout and stderr, its peak RSS in bytes written to the file named by
// $HOSTILE_RSS_FILE; it returns the program's exit code. A launcher is a
// small process, so its child's peak RSS is the child's own.
func Launch(args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "launch:", err)
		return 127
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		os.WriteFile(os.Getenv(LaunchEnv), []byte(fmt.Sprint(int64(ru.Maxrss)*1024, " ", int64(cpu))), 0o644)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// Result is one call of the binary.
type Result struct {
	Args   []string
	Code   int // -1 when killed or not started
	Stdout string
	Stderr string
	Took   time.Duration
	RSS    int64         // peak resident set in bytes (0 unknown)
	CPU    time.Duration // user + system CPU time (0 unknown)
	Hung   bool
}

// Run runs the binary in the vault at root (when root is not "") with
// stdin.
func (r Runner) Run(root, stdin string, args ...string) Result {
	return r.RunContext(context.Background(), root, stdin, args...)
}

// RunContext is Run with a context that kills the call when done.
func (r Runner) RunContext(ctx context.Context, root, stdin string, args ...string) Result {
	hang := r.Hang
	if hang <= 0 {
		hang = 60 * time.Second
	}
	full := args
	if root != "" {
		full = append([]string{"--vault", root}, args...)
	}
	ctx, cancel := context.WithTimeout(ctx, hang)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Bin, full...)
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1", "SYNAPSE_VAULT="), r.Env...)
	var rssFile string
	if r.Launcher != "" {
		f, err := os.CreateTemp("", "hostile-rss-")
		if err == nil {
			rssFile = f.Name()
			f.Close()
			defer os.Remove(rssFile)
		}
		cmd = exec.CommandContext(ctx, r.Launcher, append([]string{r.Bin}, full...)...)
		cmd.Env = append(append(os.Environ(), "NO_COLOR=1", "SYNAPSE_VAULT=", LaunchEnv+"="+rssFile), r.Env...)
		// the launcher and the call are one process group, killed together
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	}
	if r.Credential != nil {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Credential = r.Credential
	}
	cmd.Stdin = strings.NewReader(stdin)
	cmd.WaitDelay = 2 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	res := Result{Args: args, Stdout: out.String(), Stderr: errb.String(), Took: time.Since(t0)}
	if rssFile != "" {
		if data, err := os.ReadFile(rssFile); err == nil {
			var cpu int64
			fmt.Sscan(string(data), &res.RSS, &cpu)
			res.CPU = time.Duration(cpu)
		}
	} else if cmd.ProcessState != nil {
		res.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			res.RSS = int64(ru.Maxrss) * 1024
		}
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		res.Hung, res.Code = true, -1
	case err == nil:
	case cmd.ProcessState != nil:
		res.Code = cmd.ProcessState.ExitCode()
	default:
		res.Code = -1
		res.Stderr = err.Error()
	}
	return res
}

// Line is the first line of stderr, cut to n bytes.
func (res Result) Line(n int) string {
	msg := strings.TrimSpace(res.Stderr)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > n {
		msg = msg[:n] + "…"
	}
	return msg
}

// Brief is "T (CPU C) R MB exit E": wall time, CPU time, peak RSS and
// exit code.
func (res Result) Brief() string {
	if res.Hung {
		return fmt.Sprintf("HANG (killed at %s)", Secs(res.Took))
	}
	return fmt.Sprintf("%s (CPU %s) %d MB exit %d", Secs(res.Took), Secs(res.CPU), res.RSS>>20, res.Code)
}

// Secs formats a duration for tables.
func Secs(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// Init creates a vault at dir with the binary.
func (r Runner) Init(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if res := r.Run("", "", "init", dir); res.Code != 0 {
		return fmt.Errorf("synapse init %s: exit %d: %s", dir, res.Code, res.Stderr)
	}
	return nil
}

// Terminate runs the binary in the vault at root and sends it SIGTERM
// after the given time; it returns how long the call ran on after the
// signal (0 when it ended before) and its result.
func (r Runner) Terminate(root string, after time.Duration, args ...string) (time.Duration, Result) {
	return r.TerminateIn(root, "", after, args...)
}

// TerminateIn is Terminate with stdin.
func (r Runner) TerminateIn(root, stdin string, after time.Duration, args ...string) (time.Duration, Result) {
	cmd := exec.Command(r.Bin, append([]string{"--vault", root}, args...)...)
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1", "SYNAPSE_VAULT="), r.Env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, Result{Args: args, Code: -1, Stderr: err.Error()}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var sent time.Time
	select {
	case <-done:
	case <-time.After(after):
		sent = time.Now()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(r.hang()):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	res := Result{Args: args, Stdout: out.String(), Stderr: errb.String(), Took: time.Since(t0), Code: cmd.ProcessState.ExitCode()}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Code = 128 + int(ws.Signal())
	}
	if sent.IsZero() {
		return 0, res
	}
	return time.Since(sent), res
}

func (r Runner) hang() time.Duration {
	if r.Hang > 0 {
		return r.Hang
	}
	return 60 * time.Second
}
