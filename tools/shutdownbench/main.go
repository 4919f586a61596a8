// Command shutdownbench measures how long `synapse serve --http` takes to
// exit after SIGTERM while it is under load and holds the in-flight work a
// hostile client can hold: REST clients searching and reading pages, slow request bodies
// (with and without a token), reads of a huge sparse source, and a
// get_page of a page that has been replaced by a named pipe.
//
// It prepares a vault (the Obsidian Help corpus, a sparse source of -huge
// bytes, indexed by -prep so that the server under test finds the source
// unchanged and never has to read it at start-up), starts -bin on it,
// starts the load, sends SIGTERM and reports the time to exit. A server
// still running after -cap is killed and reported as such.
//
//	go run ./tools/shutdownbench -bin bin/synapse -prep bin/synapse -huge 8GiB
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/synapse", "the synapse binary under test")
	prep := flag.String("prep", "", "the binary that prepares the vault (default: -bin)")
	corpus := flag.String("corpus", "testdata/obsidian-help-en", "pages to copy into wiki/")
	huge := flag.String("huge", "8GiB", "size of the sparse source (e.g. 8GiB, 512MiB)")
	clients := flag.Int("c", 20, "REST clients searching and reading pages")
	slow := flag.Int("slow", 50, "slow-body connections (half without a token)")
	readers := flag.Int("readers", 4, "clients reading the huge source in a loop")
	warm := flag.Duration("warm", 3*time.Second, "load time before SIGTERM")
	capWait := flag.Duration("cap", 60*time.Second, "kill the server when it has not exited after this")
	keep := flag.Bool("keep", false, "keep the work folder")
	flag.Parse()
	if *prep == "" {
		*prep = *bin
	}
	size, err := parseSize(*huge)
	if err != nil {
		fail(err)
	}
	work, err := os.MkdirTemp("", "synapse-shutdownbench-")
	if err != nil {
		fail(err)
	}
	if !*keep {
		defer os.RemoveAll(work)
	}
	v := filepath.Join(work, "vault")
	must(run(*prep, "init", v))
	must(copyTree(*corpus, filepath.Join(v, "wiki")))
	must(os.WriteFile(filepath.Join(v, "wiki", "piped.md"), []byte("# Piped\n\nsoon a named pipe\n"), 0o644))
	hugePath := filepath.Join(v, "raw", "sources", "huge.jsonl")
	f, err := os.Create(hugePath)
	must(err)
	must(f.Truncate(size))
	f.Close()
	time.Sleep(2500 * time.Millisecond) // past the racy window: the record vouches for the file
	fmt.Printf("preparing: %s reindex (hashes the %s source once)\n", *prep, *huge)
	t0 := time.Now()
	must(run(*prep, "--vault", v, "reindex"))
	fmt.Printf("  reindex took %s\n", time.Since(t0).Round(time.Millisecond))

	const token = "shutdownbench-token"
	cmd := exec.Command(*bin, "--vault", v, "serve", "--http", "--write", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "SYNAPSE_TOKEN="+token)
	stderr, err := cmd.StderrPipe()
	must(err)
	must(cmd.Start())
	urlc := make(chan string, 1)
	var logMu sync.Mutex
	var logs strings.Builder
	exited := make(chan struct{})
	go func() {
		re := regexp.MustCompile(`serving http://(127\.0\.0\.1:\d+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			logs.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
		cmd.Wait()
		close(exited)
	}()
	var addr string
	select {
	case addr = <-urlc:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		fail(fmt.Errorf("the server did not start:\n%s", logs.String()))
	}
	base := "http://" + addr
	// the page becomes a named pipe once indexed
	os.Remove(filepath.Join(v, "wiki", "piped.md"))
	must(syscall.Mkfifo(filepath.Join(v, "wiki", "piped.md"), 0o644))

	stop := make(chan struct{})
	var ok, failed atomic.Int64
	client := &http.Client{Timeout: 2 * time.Minute}
	get := func(path string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := client.Do(req)
		if err != nil {
			failed.Add(1)
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		ok.Add(1)
	}
	var wg sync.WaitGroup
	loop := func(paths ...string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				get(paths[i%len(paths)])
			}
		}()
	}
	for i := 0; i < *clients; i++ {
		loop("/search?q=link+notes&k=5", "/pages/Obsidian", "/search?q=canvas", "/pages/Canvas")
	}
	for i := 0; i < *readers; i++ {
		loop("/sources/file?path=huge.jsonl")
	}
	loop("/pages/Piped") // a page that is a named pipe
	var conns []net.Conn
	for i := 0; i < *slow; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			continue
		}
		auth := ""
		if i%2 == 0 {
			auth = "Authorization: Bearer " + token + "\r\n"
		}
		fmt.Fprintf(c, "PUT /pages/Slow%d HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"content\":\"", i, addr, auth)
		conns = append(conns, c)
	}
	time.Sleep(*warm)
	fmt.Printf("load: %d clients, %d huge-source readers, a get_page of a named pipe, %d slow bodies; %d answered, %d failed so far\n",
		*clients, *readers, *slow, ok.Load(), failed.Load())
	fmt.Printf("sending SIGTERM to %s (pid %d)\n", *bin, cmd.Process.Pid)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		fmt.Printf("RESULT: exited %s after SIGTERM\n", time.Since(start).Round(time.Millisecond))
	case <-time.After(*capWait):
		cmd.Process.Kill()
		<-exited
		fmt.Printf("RESULT: still running %s after SIGTERM; killed\n", *capWait)
	}
	close(stop)
	for _, c := range conns {
		c.Close()
	}
	// the vault is whole: nothing lost (a reindex of the files matches)
	logMu.Lock()
	tail := logs.String()
	logMu.Unlock()
	if i := strings.LastIndex(tail, "shutting down"); i >= 0 {
		fmt.Printf("server log from shutdown:\n%s", tail[i:])
	}
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suf, m := range map[string]int64{"GiB": 1 << 30, "MiB": 1 << 20, "KiB": 1 << 10} {
		if strings.HasSuffix(s, suf) {
			s, mult = strings.TrimSuffix(s, suf), m
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

func run(bin string, args ...string) error {
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out)
	}
	return nil
}

func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		t := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(t, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(t, data, 0o644)
	})
}

func must(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "shutdownbench:", err)
	os.Exit(1)
}
