// Command loadserve is a bounded load generator for `synapse serve --http`
// on loopback: C concurrent clients mix a search (search_wiki when the
// server has it, else list_pages) with get_page for a fixed duration, over
// REST or MCP streamable HTTP, and report throughput, latency percentiles
// and errors. It refuses non-loopback targets.
//
//	go run ./tools/loadserve -url http://127.0.0.1:7411 -c 50 -d 30s -mode rest
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:7411", "server base URL (loopback only)")
	conc := flag.Int("c", 50, "concurrent clients")
	dur := flag.Duration("d", 30*time.Second, "duration")
	mode := flag.String("mode", "rest", "rest or mcp")
	maxReq := flag.Int("n", 5_000_000, "stop after this many requests in all")
	flag.Parse()
	token := os.Getenv("SYNAPSE_TOKEN")
	if err := run(*base, token, *conc, *dur, *mode, *maxReq); err != nil {
		fmt.Fprintln(os.Stderr, "loadserve:", err)
		os.Exit(1)
	}
}

type result struct {
	lat     []time.Duration
	errs    int
	lastErr string
}

func run(base, token string, conc int, dur time.Duration, mode string, maxReq int) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(u.Hostname()); (ip == nil || !ip.IsLoopback()) && u.Hostname() != "localhost" {
		return fmt.Errorf("refusing %s: load tests target loopback only", base)
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc * 2, MaxConnsPerHost: conc * 2}, Timeout: 30 * time.Second}
	get := func(path string) ([]byte, int, error) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := hc.Do(req)
		if err != nil {
			return nil, 0, err
		}
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		return data, res.StatusCode, err
	}
	// titles to read and whether search exists
	data, st, err := get("/pages?limit=1000")
	if err != nil || st != 200 {
		return fmt.Errorf("GET /pages: %d %v %s", st, err, data)
	}
	var list struct {
		Total int `json:"total"`
		Pages []struct {
			Title string `json:"title"`
		} `json:"pages"`
	}
	json.Unmarshal(data, &list)
	if len(list.Pages) == 0 {
		return fmt.Errorf("the vault has no pages")
	}
	data, _, _ = get("/openapi.json")
	hasSearch := strings.Contains(string(data), `"/search"`)
	words := []string{"sync", "plugin", "vault", "link", "graph", "publish", "note", "theme", "canvas", "search"}
	search := "list_pages"
	if hasSearch {
		search = "search_wiki"
	}
	fmt.Printf("target %s mode=%s clients=%d duration=%s pages=%d mix=50%% get_page + 50%% %s\n", base, mode, conc, dur, list.Total, search)

	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var (
		mu      sync.Mutex
		total   result
		started int
		wg      sync.WaitGroup
	)
	next := func() bool {
		mu.Lock()
		defer mu.Unlock()
		if started >= maxReq {
			return false
		}
		started++
		return true
	}
	t0 := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			var r result
			var call func(tool string, args map[string]any) error
			switch mode {
			case "rest":
				call = func(tool string, args map[string]any) error {
					var path string
					switch tool {
					case "get_page":
						path = "/pages/" + url.PathEscape(args["title"].(string))
					case "search_wiki":
						path = "/search?q=" + url.QueryEscape(args["query"].(string))
					default:
						path = fmt.Sprintf("/pages?limit=20&offset=%d", args["offset"])
					}
					body, st, err := get(path)
					if err != nil {
						return err
					}
					if st != 200 {
						return fmt.Errorf("%s: %d %.200s", path, st, body)
					}
					return nil
				}
			case "mcp":
				c, err := client.NewStreamableHttpClient(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}), transport.WithHTTPBasicClient(hc))
				if err == nil {
					err = c.Start(context.Background())
				}
				if err == nil {
					init := mcp.InitializeRequest{}
					init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
					init.Params.ClientInfo = mcp.Implementation{Name: "loadserve", Version: "1"}
					_, err = c.Initialize(context.Background(), init)
				}
				if err != nil {
					mu.Lock()
					total.errs++
					total.lastErr = err.Error()
					mu.Unlock()
					return
				}
				defer c.Close()
				call = func(tool string, args map[string]any) error {
					req := mcp.CallToolRequest{}
					req.Params.Name, req.Params.Arguments = tool, args
					res, err := c.CallTool(context.Background(), req)
					if err != nil {
						return err
					}
					if res.IsError {
						return fmt.Errorf("%s: %v", tool, res.Content)
					}
					return nil
				}
			default:
				panic("mode must be rest or mcp")
			}
			for ctx.Err() == nil && next() {
				var tool string
				args := map[string]any{}
				if rng.IntN(2) == 0 {
					tool = "get_page"
					args["title"] = list.Pages[rng.IntN(len(list.Pages))].Title
				} else if hasSearch {
					tool = "search_wiki"
					args["query"] = words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))]
				} else {
					tool = "list_pages"
					args["offset"] = rng.IntN(max(1, list.Total))
					if mode == "mcp" {
						delete(args, "offset") // not an MCP parameter
						args["limit"] = 20
					}
				}
				t := time.Now()
				err := call(tool, args)
				if err != nil {
					r.errs++
					r.lastErr = err.Error()
					continue
				}
				r.lat = append(r.lat, time.Since(t))
			}
			mu.Lock()
			total.lat = append(total.lat, r.lat...)
			total.errs += r.errs
			if r.lastErr != "" {
				total.lastErr = r.lastErr
			}
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(t0)
	sort.Slice(total.lat, func(i, j int) bool { return total.lat[i] < total.lat[j] })
	pct := func(p float64) time.Duration {
		if len(total.lat) == 0 {
			return 0
		}
		return total.lat[min(len(total.lat)-1, int(p*float64(len(total.lat))))]
	}
	fmt.Printf("requests %d ok, %d errors in %s: %.0f req/s; latency p50 %s p90 %s p99 %s max %s\n",
		len(total.lat), total.errs, elapsed.Round(time.Millisecond), float64(len(total.lat))/elapsed.Seconds(),
		pct(0.50).Round(10*time.Microsecond), pct(0.90).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), pct(1).Round(10*time.Microsecond))
	if total.errs > 0 {
		return fmt.Errorf("%d errors; last: %s", total.errs, total.lastErr)
	}
	return nil
}
