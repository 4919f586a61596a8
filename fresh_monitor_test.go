//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/monitor"
	"github.com/synapse-wiki/synapse/internal/server/sock"
)

// TestFreshMonitor_HandEditJustBeforeSearch runs the built binary with
// the file monitor on: the first verb starts it, a later one finds it
// answering (status says so), and then a page edited by hand 10 ms
// before a search — in place, renamed, deleted — is in that search's
// answer, every time. With nothing changed, the monitor runs read-only
// verbs itself (status says how many it answered); one run right after
// an edit is declined and runs in the CLI, which indexes the edit. The
// monitor is stopped at the end, leaving nothing running.
func TestFreshMonitor_HandEditJustBeforeSearch(t *testing.T) {
	bin := synapseBinary(t)
	v := filepath.Join(t.TempDir(), "v")
	syn := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = v
		cmd.Env = append(os.Environ(), "SYNAPSE_FRESH_MONITOR=on", "SYNAPSE_VAULT="+v)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("synapse %v: %v\n%s", args, err, stderr.Bytes())
		}
		return out
	}
	if out, err := exec.Command(bin, "init", v).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	page := filepath.Join(v, "wiki", "concepts", "loom.md")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(page, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("# Loom\nA weaving machine.\n")
	syn("reindex")
	t.Cleanup(func() { stopMonitor(t, v) })

	type freshness struct {
		Mode    string `json:"mode"`
		PID     int    `json:"monitor_pid"`
		Changed int    `json:"changed"`
		Indexed bool   `json:"indexed"`
		By      string `json:"answered_by"`
		Answers int    `json:"monitor_answers"`
	}
	status := func() freshness {
		var st struct {
			Freshness freshness `json:"freshness"`
		}
		if err := json.Unmarshal(syn("status", "--json"), &st); err != nil {
			t.Fatal(err)
		}
		return st.Freshness
	}
	var pid int
	for deadline := time.Now().Add(time.Minute); pid == 0; {
		if f := status(); f.Mode == "monitor" {
			pid = f.PID
		} else if time.Now().After(deadline) {
			t.Fatal("the file monitor never answered")
		} else {
			time.Sleep(50 * time.Millisecond)
		}
	}

	hits := func(q string) []string {
		var out struct {
			Hits []struct{ Path string } `json:"hits"`
		}
		if err := json.Unmarshal(syn("search", "--json", "--", q), &out); err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, h := range out.Hits {
			paths = append(paths, h.Path)
		}
		return paths
	}
	// nothing changed: the monitor answers (status, then a search)
	answers := 0
	for deadline := time.Now().Add(time.Minute); answers == 0; {
		if f := status(); f.By == "monitor" && f.PID == pid {
			answers = f.Answers
		} else if time.Now().After(deadline) {
			t.Fatalf("the file monitor never answered a verb: %+v", f)
		}
	}
	if got := hits("weaving"); len(got) != 1 {
		t.Fatalf("search weaving → %v", got)
	}
	if f := status(); f.By != "monitor" || f.Answers != answers+2 {
		t.Fatalf("status after a search with nothing changed: %+v, want the search and status answered by the monitor (%d before)", f, answers)
	}
	for i := range 10 {
		word := fmt.Sprintf("zanzibar%d", i)
		write("# Loom\nA weaving machine, " + word + ".\n")
		time.Sleep(10 * time.Millisecond)
		if i%2 == 1 {
			// what the monitor reported, and nothing else, was checked
			if f := status(); f.Mode != "monitor" || f.PID != pid || f.Changed != 1 || !f.Indexed || f.By != "" {
				t.Fatalf("edit %d: status's freshness %+v, want the edit found by monitor %d and indexed by the CLI", i, f, pid)
			}
			continue
		}
		if got := hits(word); len(got) != 1 || got[0] != "wiki/concepts/loom.md" {
			t.Fatalf("edit %d: search %s → %v, want the page edited 10 ms before", i, word, got)
		}
		// indexed by that search: the monitor answers the next one
		if got := hits(word); len(got) != 1 || got[0] != "wiki/concepts/loom.md" {
			t.Fatalf("edit %d: search %s again → %v", i, word, got)
		}
	}
	if f := status(); f.By != "monitor" || f.Answers <= answers+2 {
		t.Fatalf("after the edits: %+v, want searches answered by the monitor", f)
	}
	moved := filepath.Join(v, "wiki", "entities", "loom.md")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(page, moved); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if got := hits("zanzibar9"); len(got) != 1 || got[0] != "wiki/entities/loom.md" {
		t.Fatalf("after a rename: %v", got)
	}
	if err := os.Remove(moved); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if got := hits("zanzibar9"); len(got) != 0 {
		t.Fatalf("after a delete: %v", got)
	}
	if pid <= 0 || !processExists(pid) {
		t.Fatalf("monitor pid %d is not running", pid)
	}
}

// stopMonitor asks the vault's file monitor to exit and waits until its
// socket is gone.
func stopMonitor(t *testing.T, v string) {
	_ = monitor.Quit(context.Background(), v, monitor.ClientOptions{CheckPeer: sock.CheckPeer, Addr: sock.Addr})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Lstat(filepath.Join(v, monitor.SockFile)); err != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Error("the file monitor did not exit")
			return
		}
	}
}

func processExists(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}
