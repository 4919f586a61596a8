// Command livebench measures synapse living beside its users
// with the real binary on a real vault:
//
//   - MCP initialize latency of `serve --mcp-stdio`, from spawning the
//     process to the initialize answer, on a never-indexed store (the
//     store file removed first) and on an indexed one, and the time to the
//     first tool answer (which waits for the store to open, and on a
//     never-indexed store for the first index);
//
//   - time from a file saved into wiki/ by another program (in place, or by
//     rename) to the page being found through the server: search_wiki for a
//     word only that page has when the server has search, else get_page;
//
//   - CLI verb latency with and without a running server.
//
//     go run ./tools/livebench -bin /tmp/synapse -vault /tmp/live-g100k
//
// The vault is modified: its store is rebuilt and pages are written to and
// removed from wiki/live-bench/. Use a vault of your own.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	bin := flag.String("bin", "synapse", "synapse binary")
	dir := flag.String("vault", "", "vault folder (modified)")
	initRuns := flag.Int("init", 5, "initialize measurements per store state")
	saves := flag.Int("saves", 100, "file saves timed")
	cliRuns := flag.Int("cli", 20, "runs per CLI verb and mode")
	only := flag.String("only", "init,save,cli", "measurements to run")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "livebench: -vault is required")
		os.Exit(2)
	}
	b := &bench{bin: *bin, vault: *dir}
	var err error
	for _, m := range strings.Split(*only, ",") {
		switch m {
		case "init":
			err = b.initialize(*initRuns)
		case "save":
			err = b.saveToFound(*saves)
		case "cli":
			err = b.cliLatency(*cliRuns)
		default:
			err = fmt.Errorf("unknown measurement %q", m)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "livebench:", err)
			os.Exit(1)
		}
	}
}

type bench struct {
	bin, vault string
}

// server is a running `serve --mcp-stdio` with a JSON-RPC session.
type server struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	nextID int
	stderr *strings.Builder
}

func (b *bench) spawn() (*server, error) {
	cmd := exec.Command(b.bin, "serve", "--mcp-stdio", "--vault", b.vault)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), nextID: 1, stderr: &strings.Builder{}}
	cmd.Stderr = s.stderr
	return s, cmd.Start()
}

// request sends one JSON-RPC request and waits for its answer.
func (s *server) request(method string, params any) (json.RawMessage, error) {
	id := s.nextID
	s.nextID++
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := s.in.Write(append(msg, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: %w (stderr: %s)", method, err, s.stderr.String())
		}
		var r struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &r) != nil || r.ID != id {
			continue
		}
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, r.Error)
		}
		return r.Result, nil
	}
}

func (s *server) notify(method string) {
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	s.in.Write(append(msg, '\n'))
}

// tool calls a tool; isError is the tool's error flag.
func (s *server) tool(name string, args any) (text string, isError bool, err error) {
	res, err := s.request("tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return "", false, err
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		return "", false, fmt.Errorf("%s: bad result %s", name, res)
	}
	return r.Content[0].Text, r.IsError, nil
}

func (s *server) initialize() error {
	_, err := s.request("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "livebench", "version": "1"},
	})
	if err == nil {
		s.notify("notifications/initialized")
	}
	return err
}

// stop closes stdin, as an MCP client does, and waits for the exit.
func (s *server) stop() error {
	s.in.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		return errors.New("server did not stop within 60 s")
	}
}

func (b *bench) run(args ...string) (string, error) {
	cmd := exec.Command(b.bin, append(args, "--vault", b.vault)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("synapse %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// initialize times spawn → initialize answer on a fresh and an indexed
// store.
func (b *bench) initialize(runs int) error {
	db := filepath.Join(b.vault, ".synapse", "synapse.db")
	measure := func(label string, fresh bool) error {
		var ds, first []time.Duration
		var listed time.Duration
		for i := 0; i < runs; i++ {
			if fresh {
				if err := os.Remove(db); err != nil && !errors.Is(err, os.ErrNotExist) {
					return err
				}
			}
			start := time.Now()
			s, err := b.spawn()
			if err != nil {
				return err
			}
			if err := s.initialize(); err != nil {
				s.stop()
				return err
			}
			ds = append(ds, time.Since(start))
			if _, err := s.request("tools/list", map[string]any{}); err != nil {
				s.stop()
				return err
			}
			listed += time.Since(start)
			if !fresh { // a never-indexed store answers after its first index, or unavailable
				if _, isErr, err := s.tool("list_pages", map[string]any{"limit": 1}); err != nil || isErr {
					s.stop()
					return fmt.Errorf("list_pages: %v", err)
				}
				first = append(first, time.Since(start))
			}
			if err := s.stop(); err != nil {
				return err
			}
		}
		fmt.Printf("initialize, %s: %s; tools/list answered after %v on average\n", label, dist(ds), (listed / time.Duration(runs)).Round(100*time.Microsecond))
		if !fresh {
			fmt.Printf("  first tool answer (list_pages), from spawn: %s\n", dist(first))
		}
		return nil
	}
	pages, _ := countPages(b.vault)
	fmt.Printf("vault %s: %d pages\n", b.vault, pages)
	if err := measure("never-indexed store", true); err != nil {
		return err
	}
	fmt.Println("indexing the vault (synapse reindex)…")
	start := time.Now()
	if _, err := b.run("reindex"); err != nil {
		return err
	}
	fmt.Printf("reindex took %v\n", time.Since(start).Round(time.Millisecond))
	return measure("indexed store", false)
}

func countPages(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(filepath.Join(dir, "wiki"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			n++
		}
		return nil
	})
	return n, err
}

// saveToFound times a save into wiki/ until the server finds the page.
func (b *bench) saveToFound(n int) error {
	if _, err := b.run("source", "rescan"); err != nil { // settle the store
		return err
	}
	s, err := b.spawn()
	if err != nil {
		return err
	}
	defer s.stop()
	if err := s.initialize(); err != nil {
		return err
	}
	hasSearch := false
	res, err := s.request("tools/list", map[string]any{})
	if err != nil {
		return err
	}
	hasSearch = strings.Contains(string(res), `"search_wiki"`)
	// wait for the start-up reconciliation: a rescan queues behind it
	if _, isErr, err := s.tool("trigger_source_rescan", map[string]any{}); err != nil || isErr {
		return fmt.Errorf("rescan: %v", err)
	}
	folder := filepath.Join(b.vault, "wiki", "live-bench")
	os.RemoveAll(folder)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(folder)
	// probe pages, indexed before timing starts: get_page on a missing
	// title looks for the closest titles, which costs far more than a hit
	// on a big vault and would hide the latency being measured
	const probes = 10
	title := func(i int) string { return fmt.Sprintf("Live bench probe %d", i) }
	page := func(i int, word string) string {
		// get_page reads content from the file but links from the index:
		// the link to [[word]] shows once the save is indexed
		return fmt.Sprintf("---\ntitle: %s\n---\n# %s\n\nSaved by another program, linking to [[%s]].\n", title(i), title(i), word)
	}
	for i := 0; i < probes; i++ {
		if err := os.WriteFile(filepath.Join(folder, fmt.Sprintf("probe-%d.md", i)), []byte(page(i, "start")), 0o644); err != nil {
			return err
		}
	}
	if _, isErr, err := s.tool("trigger_source_rescan", map[string]any{}); err != nil || isErr {
		return fmt.Errorf("rescan: %v", err)
	}
	var inPlace, renamed, created []time.Duration
	rng := rand.New(rand.NewPCG(1, 2))
	save := func(path, body string, byRename bool) error {
		if byRename {
			tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".swp")
			if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
				return err
			}
			return os.Rename(tmp, path)
		}
		return os.WriteFile(path, []byte(body), 0o644)
	}
	poll := func(start time.Time, tool string, args map[string]any, want string) error {
		for {
			text, isErr, err := s.tool(tool, args)
			if err != nil {
				return err
			}
			if !isErr && strings.Contains(text, want) {
				return nil
			}
			if time.Since(start) > 30*time.Second {
				return fmt.Errorf("%s %v: %q not found after 30 s", tool, args, want)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	for i := 0; i < n; i++ {
		word := fmt.Sprintf("zq%dx%d", i, rng.IntN(1e9))
		p := i % probes
		byRename := i%2 == 1
		start := time.Now()
		if err := save(filepath.Join(folder, fmt.Sprintf("probe-%d.md", p)), page(p, word), byRename); err != nil {
			return err
		}
		if err := poll(start, "get_page", map[string]any{"title": title(p)}, `"target":"`+word+`"`); err != nil {
			return err
		}
		if byRename {
			renamed = append(renamed, time.Since(start))
		} else {
			inPlace = append(inPlace, time.Since(start))
		}
		if hasSearch {
			// a new page, found by a word only it has
			start := time.Now()
			path := filepath.Join(folder, fmt.Sprintf("new-%d.md", i))
			body := fmt.Sprintf("# New page %d\n\nThe word %snew appears here only.\n", i, word)
			if err := save(path, body, byRename); err != nil {
				return err
			}
			if err := poll(start, "search_wiki", map[string]any{"query": word + "new", "k": 1}, fmt.Sprintf("new-%d.md", i)); err != nil {
				return err
			}
			created = append(created, time.Since(start))
		}
		time.Sleep(time.Duration(50+rng.IntN(150)) * time.Millisecond) // not one burst
	}
	fmt.Printf("edit saved in place → indexed (get_page links): %s\n", dist(inPlace))
	fmt.Printf("edit saved by rename → indexed (get_page links): %s\n", dist(renamed))
	if hasSearch {
		fmt.Printf("new page saved → search_wiki finds it:  %s\n", dist(created))
	}
	return nil
}

// cliLatency times CLI verbs alone and beside a running server.
func (b *bench) cliLatency(runs int) error {
	if _, err := b.run("source", "rescan"); err != nil {
		return err
	}
	out, err := b.run("page", "list", "--limit", "1", "--offset", "500", "--json")
	if err != nil {
		return err
	}
	var l struct {
		Pages []struct{ Title string } `json:"pages"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Pages) == 0 {
		return fmt.Errorf("page list: %s", out)
	}
	title := l.Pages[0].Title
	verbs := [][]string{
		{"page", "get", title, "--json"},
		{"status", "--json"},
		{"page", "list", "--limit", "50", "--json"},
		{"review", "list", "--json"},
	}
	if _, err := b.run("search", "--help"); err == nil {
		verbs = append(verbs, []string{"search", "history of the project", "--json"})
	}
	timeVerb := func(args []string) ([]time.Duration, error) {
		var ds []time.Duration
		for i := 0; i < runs; i++ {
			start := time.Now()
			if _, err := b.run(args...); err != nil {
				return nil, err
			}
			ds = append(ds, time.Since(start))
		}
		return ds, nil
	}
	alone := map[int][]time.Duration{}
	for i, v := range verbs {
		if alone[i], err = timeVerb(v); err != nil {
			return err
		}
	}
	s, err := b.spawn()
	if err != nil {
		return err
	}
	defer s.stop()
	if err := s.initialize(); err != nil {
		return err
	}
	if _, _, err := s.tool("trigger_source_rescan", map[string]any{}); err != nil {
		return err
	}
	for i, v := range verbs {
		beside, err := timeVerb(v)
		if err != nil {
			return err
		}
		fmt.Printf("synapse %s\n  alone:         %s\n  beside serve:  %s\n", strings.Join(v, " "), dist(alone[i]), dist(beside))
	}
	return nil
}

// dist summarizes durations: median, p90, p99 and max.
func dist(ds []time.Duration) string {
	if len(ds) == 0 {
		return "no samples"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	r := func(d time.Duration) string {
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("n=%d median %s, p90 %s, p99 %s, max %s", len(s), r(q(0.5)), r(q(0.9)), r(q(0.99)), r(s[len(s)-1]))
}
