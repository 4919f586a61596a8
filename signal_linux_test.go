package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/hostile"
)

// signalBound is how long a verb may run on after SIGTERM on an idle
// machine; signalCPU how much CPU it may use meanwhile, whatever the load.
const (
	signalBound = 500 * time.Millisecond
	signalCPU   = 250 * time.Millisecond
)

// TestSignal_HostilePage sends SIGTERM to verbs busy with a 16 MiB page
// of distinct words, half-way through the CPU time each takes whole: a
// read or a scan ends within signalBound (scaled by the load average per
// core when the machine is busier than that) using at most signalCPU of
// CPU after the signal, with exit 5 and "interrupted"; a write either
// finishes (exit 0, the page whole) or never starts (exit 5, no page).
// The vault is intact afterwards: the page unchanged, no write intent or
// temporary file, and a reindex and a search answer.
func TestSignal_HostilePage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := synapseBinary(t)
	root := filepath.Join(t.TempDir(), "v")
	r := hostile.Runner{Bin: bin, Hang: 2 * time.Minute}
	if err := r.Init(root); err != nil {
		t.Fatal(err)
	}
	var shape hostile.Shape
	for _, s := range hostile.Shapes(16 << 20) {
		if s.Name == "distinct-words" {
			shape = s
		}
	}
	if err := shape.Write(root); err != nil {
		t.Fatal(err)
	}
	if res := r.Run(root, "", "reindex"); res.Code != 0 {
		t.Fatalf("reindex: %s", res.Stderr)
	}
	db := filepath.Join(root, ".synapse", "synapse.db")
	indexed, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	const written = "A page written while SIGTERM comes, linking [[Words]].\n"
	bystander := filepath.Join(root, "wiki", "concepts", "bystander.md") // where a new concept page goes
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		touch bool      // the page changed: the verb indexes it first
		at    []float64 // when to send SIGTERM, as fractions of the CPU time of the whole run
	}{
		// half-way, and late (printing its answer)
		{name: "search", args: []string{"search", "zebu"}, at: []float64{0.5, 0.85}},
		{name: "page get --json", args: []string{"page", "get", "Words", "--json"}, at: []float64{0.5, 0.85}},
		{name: "lint", args: []string{"lint"}, touch: true, at: []float64{0.5}},
		{name: "reindex", args: []string{"reindex"}, at: []float64{0.5}},
		{name: "page write", args: []string{"page", "write", "Bystander"}, stdin: written, touch: true, at: []float64{0.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reset := func() {
				os.Remove(bystander)
				if err := os.WriteFile(db, indexed, 0o600); err != nil {
					t.Fatal(err)
				}
				if tc.touch {
					now := time.Now()
					for rel := range shape.Files {
						os.Chtimes(filepath.Join(root, rel), now, now)
					}
				}
			}
			reset()
			whole := r.Run(root, tc.stdin, tc.args...)
			if whole.Code != 0 {
				t.Fatalf("whole: exit %d %s", whole.Code, whole.Stderr)
			}
			for _, frac := range tc.at {
				// a run may use less CPU than the whole one did: one that
				// ends first is run again with the signal a fifth sooner
				cpu := time.Duration(float64(whole.CPU) * frac)
				for try := 1; ; try++ {
					reset()
					st, ok := terminateAtCPU(t, bin, root, tc.stdin, cpu, tc.args...)
					if ok {
						checkStopped(t, st, whole, tc.stdin, bystander, written)
						break
					}
					if try == 3 {
						t.Fatalf("ended before it had used %s of CPU, three times: exit %d %s", cpu, st.code, st.stderr)
					}
					cpu = cpu * 4 / 5
				}
			}
		})
	}
	for rel, data := range shape.Files {
		if got, err := os.ReadFile(filepath.Join(root, rel)); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s changed", rel)
		}
	}
	tmps, _ := filepath.Glob(filepath.Join(root, "wiki", ".*.tmp"))
	if len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
	if res := r.Run(root, "", "reindex"); res.Code != 0 {
		t.Errorf("reindex after: exit %d %s", res.Code, res.Stderr)
	}
	if res := r.Run(root, "", "search", "zebu", "--json"); res.Code != 0 || !strings.Contains(res.Stdout, `"Words"`) {
		t.Errorf("search after: exit %d %s %s", res.Code, res.Stdout, res.Stderr)
	}
}

// checkStopped checks one verb sent SIGTERM (TestSignal_HostilePage).
func checkStopped(t *testing.T, st stopped, whole hostile.Result, stdin, bystander, written string) {
	t.Helper()
	bound := signalBound * time.Duration(max(1, int(loadPerCore()+0.5)))
	t.Logf("whole %s (CPU %s); SIGTERM at CPU %s: exit %d %s later, CPU %s after it (bound %s, load %.1f per core)",
		hostile.Secs(whole.Took), hostile.Secs(whole.CPU), hostile.Secs(st.cpuAt), st.code, hostile.Secs(st.after), hostile.Secs(st.cpuAfter), hostile.Secs(bound), loadPerCore())
	if st.after > bound {
		t.Errorf("ran on %s after SIGTERM (bound %s)", st.after, bound)
	}
	if st.cpuAfter > signalCPU {
		t.Errorf("used %s of CPU after SIGTERM (bound %s)", st.cpuAfter, signalCPU)
	}
	page, perr := os.ReadFile(bystander)
	switch {
	case stdin != "" && st.code == 0:
		if !bytes.HasSuffix(page, []byte(written)) {
			t.Errorf("the write finished but the page holds %q (stdout %q, stderr %q)", page, st.stdout, st.stderr)
		}
	case st.code != 5 || !strings.Contains(st.stderr, "interrupted"):
		t.Errorf("exit %d, want 5 saying it was interrupted: %s", st.code, st.stderr)
	case stdin != "" && perr == nil:
		t.Errorf("the write was interrupted but left the page: %q", page)
	}
	if hostile.Crashed(st.stderr) {
		t.Errorf("crashed: %s", st.stderr)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(bystander))), ".synapse", "write-intent")); err == nil {
		t.Error("a write intent was left behind")
	}
}

// stopped is a verb sent SIGTERM.
type stopped struct {
	code            int
	stderr, stdout  string
	cpuAt, cpuAfter time.Duration // CPU time used before and after the signal
	after           time.Duration // wall time from the signal to the exit
}

// terminateAtCPU runs the binary and sends it SIGTERM once it has used
// cpu of CPU time (read from /proc, in clock ticks), so that the signal
// comes mid-work whatever the load. ok is false when the verb ended
// before.
func terminateAtCPU(t *testing.T, bin, root, stdin string, cpu time.Duration, args ...string) (st stopped, ok bool) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--vault", root}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "SYNAPSE_VAULT=")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	var at time.Duration
	for {
		select {
		case <-done:
			return stopped{code: cmd.ProcessState.ExitCode(), stderr: errb.String()}, false
		case <-time.After(2 * time.Millisecond):
		}
		if at = procCPU(cmd.Process.Pid); at >= cpu {
			break
		}
	}
	if procState(cmd.Process.Pid) == 'Z' {
		// it ended (not yet reaped) before it had used cpu: no signal
		<-done
		return stopped{code: cmd.ProcessState.ExitCode(), stderr: errb.String()}, false
	}
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running a minute after SIGTERM")
	}
	st = stopped{code: cmd.ProcessState.ExitCode(), stderr: errb.String(), stdout: out.String(), cpuAt: at, after: time.Since(sent)}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		st.code = 128 + int(ws.Signal())
	}
	st.cpuAfter = max(0, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime()-at)
	return st, true
}

// procCPU is the user and system CPU time a process has used so far
// (/proc/PID/stat, in clock ticks of 10 ms).
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// the fields after the command's name, which ends at the last ")"
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// procState is a process's state letter (/proc/PID/stat: R running, S
// sleeping, Z ended and not yet reaped…), 0 when it is gone.
func procState(pid int) byte {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(f) < 1 || f[0] == "" {
		return 0
	}
	return f[0][0]
}

// loadPerCore is the one-minute load average per CPU.
func loadPerCore() float64 {
	data, _ := os.ReadFile("/proc/loadavg")
	var l float64
	fmt.Sscan(string(data), &l)
	return l / float64(runtime.NumCPU())
}
