// Command mcpsessions measures what MCP sessions cost `serve --http`:
// it starts the real binary on a fresh vault, sends N MCP
// initialize requests over streamable HTTP (each opens a session, none is
// ended) and reports the server's resident memory (VmRSS) before and
// after, how many of the sessions are still live, and whether a deleted
// and a made-up session id are refused.
//
//	go build -o /tmp/synapse . && go run ./tools/mcpsessions -bin /tmp/synapse -n 20000
//
// Linux only (it reads /proc/PID/status).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	bin := flag.String("bin", "synapse", "synapse binary")
	n := flag.Int("n", 20000, "initialize requests")
	conc := flag.Int("c", 8, "concurrent clients")
	flag.Parse()
	if err := run(*bin, *n, *conc); err != nil {
		fmt.Fprintln(os.Stderr, "mcpsessions:", err)
		os.Exit(1)
	}
}

func run(bin string, n, conc int) error {
	dir, err := os.MkdirTemp("", "mcpsessions-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	vault := filepath.Join(dir, "vault")
	if out, err := exec.Command(bin, "init", vault).CombinedOutput(); err != nil {
		return fmt.Errorf("init: %v: %s", err, out)
	}
	const token = "mcpsessions-token"
	cmd := exec.Command(bin, "--vault", vault, "serve", "--http", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "SYNAPSE_TOKEN="+token)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	urlc := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-urlc:
	case <-time.After(20 * time.Second):
		return fmt.Errorf("the server did not start")
	}
	endpoint := url + "/mcp"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	post := func(session, body string) (int, string, error) {
		req, _ := http.NewRequest("POST", endpoint, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		res, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode, res.Header.Get("Mcp-Session-Id"), nil
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcpsessions","version":"1"}}}`
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	// warm up: one session, so both measurements see a server that has
	// served MCP
	if st, _, err := post("", initialize); err != nil || st != 200 {
		return fmt.Errorf("initialize: %d %v", st, err)
	}
	time.Sleep(500 * time.Millisecond)
	before, err := rss(cmd.Process.Pid)
	if err != nil {
		return err
	}
	var (
		next   atomic.Int64
		failed atomic.Int64
		mu     sync.Mutex
		ids    []string
		wg     sync.WaitGroup
	)
	t0 := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				st, sid, err := post("", initialize)
				if err != nil || st != 200 {
					failed.Add(1)
					continue
				}
				mu.Lock()
				ids = append(ids, sid)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	took := time.Since(t0)
	time.Sleep(500 * time.Millisecond)
	after, err := rss(cmd.Process.Pid)
	if err != nil {
		return err
	}
	live := 0
	step := max(1, len(ids)/200) // sample 200 of the sessions opened
	sampled := 0
	for i := 0; i < len(ids); i += step {
		sampled++
		if st, _, _ := post(ids[i], list); st == 200 {
			live++
		}
	}
	first, last := ids[0], ids[len(ids)-1]
	stFirst, _, _ := post(first, list)
	stLast, _, _ := post(last, list)
	req, _ := http.NewRequest("DELETE", endpoint, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", last)
	res, err := client.Do(req)
	delStatus := 0
	if err == nil {
		delStatus = res.StatusCode
		res.Body.Close()
	}
	stDeleted, _, _ := post(last, list)
	stMadeUp, _, _ := post("mcp-session-2f1b2a8e-4b0e-4e7e-9d52-1c2d3e4f5a6b", list)
	fmt.Printf("initialize: %d requests (%d failed) in %.1f s with %d clients\n", n, failed.Load(), took.Seconds(), conc)
	fmt.Printf("resident memory: %.1f MiB before, %.1f MiB after (%+.1f MiB)\n", mib(before), mib(after), mib(after-before))
	fmt.Printf("sessions still live: %d of %d sampled (the first one opened: %d, the last: %d)\n", live, sampled, stFirst, stLast)
	fmt.Printf("DELETE of the last: %d; a request in it after: %d; a made-up session id: %d\n", delStatus, stDeleted, stMadeUp)
	return nil
}

func mib(kb int64) float64 { return float64(kb) / 1024 }

// rss reads VmRSS of a process, in KiB.
func rss(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:")), "%d", &kb)
			return kb, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}
