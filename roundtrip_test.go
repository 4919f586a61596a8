package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/synapse-wiki/synapse/internal/server"
	"github.com/synapse-wiki/synapse/internal/server/servertest"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/internal/wildgen"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
)

// The round trip: writing back exactly what `page get` printed
// succeeds on every page of a real vault and reports unchanged, and
// editing one body line changes only that line and `updated`. Walked on
// the wild-conventions vault (internal/wildgen: broken YAML, CRLF, BOM,
// no frontmatter, twins, duplicate titles, a page over 1 MB…) and on the
// Obsidian Help vault, through the CLI, MCP and REST.

type roundTripVault struct {
	name string
	make func(t *testing.T) *vault.Vault
}

var roundTripVaults = []roundTripVault{
	{"wild", func(t *testing.T) *vault.Vault {
		v := testvault.New(t)
		if _, err := wildgen.Generate(v.Root, wildgen.Options{Seed: 12}); err != nil {
			t.Fatal(err)
		}
		return v
	}},
	{"obsidian-help", func(t *testing.T) *vault.Vault { return testvault.WithCorpus(t) }},
}

// cliRun runs the CLI in-process on v with stdin and returns stdout,
// stderr and the exit code.
func cliRun(v *vault.Vault, stdin string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(append([]string{"synapse", "--vault", v.Root}, args...), strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// pagePaths lists every page of v (through the CLI, indexing it first).
func pagePaths(t *testing.T, v *vault.Vault) []string {
	t.Helper()
	if _, stderr, code := cliRun(v, "", "reindex"); code != 0 {
		t.Fatalf("reindex: %s", stderr)
	}
	out, stderr, code := cliRun(v, "", "page", "list", "--limit", "1000", "--json")
	if code != 0 {
		t.Fatalf("page list: %s", stderr)
	}
	var l ops.ListPagesOut
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	if l.Total != len(l.Pages) || l.Total < 150 {
		t.Fatalf("%d of %d pages listed", len(l.Pages), l.Total)
	}
	var paths []string
	for _, p := range l.Pages {
		paths = append(paths, p.Path)
	}
	return paths
}

func readVaultFile(t *testing.T, v *vault.Vault, p string) string {
	t.Helper()
	data, err := os.ReadFile(v.Abs(p))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// editLastLine appends " (edited)" to the last non-blank line of a body
// and returns the new body and that line as it was.
func editLastLine(body string) (string, string) {
	lines := strings.SplitAfter(body, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimRight(lines[i], "\r\n")
		if strings.TrimSpace(l) == "" {
			continue
		}
		lines[i] = l + " (edited)" + lines[i][len(l):]
		return strings.Join(lines, ""), l
	}
	return body, ""
}

var dateKeyRE = regexp.MustCompile(`^(updated|last_updated): `)

// fmDateLines splits a file into its lines with the updated/last_updated
// lines of its frontmatter taken out (returned apart).
func fmDateLines(file string) (rest []string, dates []string) {
	lines := strings.SplitAfter(strings.TrimPrefix(file, "\ufeff"), "\n")
	inFM := len(lines) > 0 && strings.TrimRight(lines[0], "\r\n") == "---"
	for i, l := range lines {
		if inFM && i > 0 && strings.TrimRight(l, "\r\n") == "---" {
			inFM = false
		} else if inFM && i > 0 && dateKeyRE.MatchString(l) {
			dates = append(dates, l)
			continue
		}
		rest = append(rest, l)
	}
	return rest, dates
}

var digitRE = regexp.MustCompile(`[0-9]`)

// checkEdit checks that after differs from before only by the edited line
// and the frontmatter's updated (or last_updated) line, written today in
// the format the page used; a page whose frontmatter is not valid YAML,
// or that has none, keeps its frontmatter exactly.
func checkEdit(t *testing.T, p, before, after, line string, today string) {
	t.Helper()
	want := strings.Replace(before, line, line+" (edited)", 1)
	if i := strings.LastIndex(before, line); i >= 0 {
		want = before[:i] + line + " (edited)" + before[i+len(line):]
	}
	wr, wd := fmDateLines(want)
	ar, ad := fmDateLines(after)
	// the edited line may gain a final newline (the CLI prints one)
	if strings.TrimRight(strings.Join(wr, ""), "\r\n") != strings.TrimRight(strings.Join(ar, ""), "\r\n") {
		t.Errorf("%s: the edit changed more than one body line and updated:\n--- want\n%s\n--- got\n%s", p, strings.Join(wr, ""), strings.Join(ar, ""))
		return
	}
	if strings.HasPrefix(before, "\ufeff") != strings.HasPrefix(after, "\ufeff") {
		t.Errorf("%s: BOM not kept", p)
	}
	hasFM := strings.HasPrefix(strings.TrimPrefix(before, "\ufeff"), "---")
	switch {
	case len(wd) > 0:
		if len(ad) != len(wd) {
			t.Errorf("%s: date lines %q became %q", p, wd, ad)
			return
		}
		for i := range wd {
			old, cur := wd[i], ad[i]
			if digitRE.ReplaceAllString(old, "9") != digitRE.ReplaceAllString(cur, "9") && !strings.Contains(old, "<<<") {
				t.Errorf("%s: %q rewritten in another format: %q", p, old, cur)
			}
			if old != cur && !strings.Contains(cur, today) {
				t.Errorf("%s: %q is not today (%s)", p, cur, today)
			}
		}
	case hasFM && len(ad) > 1:
		t.Errorf("%s: gained date lines %q", p, ad)
	case !hasFM && len(ad) > 0:
		t.Errorf("%s: a page without frontmatter gained %q", p, ad)
	}
	if strings.Contains(after, "\ncreated:") && !strings.Contains(before, "\ncreated:") {
		t.Errorf("%s: gained a created date", p)
	}
}

func TestRoundTrip_CLI(t *testing.T) {
	for _, rv := range roundTripVaults {
		t.Run(rv.name, func(t *testing.T) {
			v := rv.make(t)
			today := time.Now().Format("2006-01-02")
			paths := pagePaths(t, v)
			for _, p := range paths {
				before := readVaultFile(t, v, p)
				// --full: a page over page get's budget comes whole only when asked
				text, stderr, code := cliRun(v, "", "page", "get", "--full", p)
				if code != 0 {
					t.Fatalf("page get %s: %s", p, stderr)
				}
				out, stderr, code := cliRun(v, text, "page", "write", p, "--json")
				if code != 0 || !strings.Contains(out, `"unchanged":true`) {
					t.Errorf("page write %s of what page get printed: exit %d %s%s", p, code, out, stderr)
					continue
				}
				if readVaultFile(t, v, p) != before {
					t.Fatalf("%s: an unchanged write changed the file", p)
				}
				// edit one line of the body
				edited, line := editLastLine(text)
				_, stderr, code = cliRun(v, edited, "page", "write", p, "--json")
				after := readVaultFile(t, v, p)
				if len(before) > ops.MaxContentBytes {
					if code != 2 || !strings.Contains(stderr, "too_large") || after != before {
						t.Errorf("%s (%d bytes): edit gave exit %d %s; want too_large and the file unchanged", p, len(before), code, stderr)
					}
					continue
				}
				if code != 0 {
					t.Errorf("page write %s with one line edited: exit %d %s", p, code, stderr)
					continue
				}
				checkEdit(t, p, before, after, line, today)
			}
		})
	}
}

// startWriteServer serves v over HTTP with writes enabled and returns an
// MCP client and the server's URL.
func startWriteServer(t *testing.T, v *vault.Vault) (*client.Client, *httptest.Server) {
	t.Helper()
	env, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{Holder: "synapse serve (test)"})
	if err != nil {
		t.Fatal(err)
	}
	s := server.Open(ops.Table(), env, server.Config{}, log.New(&servertest.SyncBuffer{}, "synapse: ", 0))
	t.Cleanup(s.Close)
	h, shutdown := s.Handler(server.Config{HTTP: true, Write: true}, servertest.Token)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		shutdown()
		ts.Close()
	})
	c, err := client.NewStreamableHttpClient(ts.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + servertest.Token}))
	if err != nil {
		t.Fatal(err)
	}
	servertest.StartClient(t, c)
	return c, ts
}

func TestRoundTrip_MCPAndREST(t *testing.T) {
	for _, rv := range roundTripVaults {
		t.Run(rv.name, func(t *testing.T) {
			v := rv.make(t)
			today := time.Now().Format("2006-01-02")
			paths := pagePaths(t, v)
			c, ts := startWriteServer(t, v)
			for i, p := range paths {
				before := readVaultFile(t, v, p)
				g, isErr := servertest.MCPCall(t, c, "get_page", map[string]any{"title": p, "full": true})
				if isErr {
					t.Fatalf("get_page %s: %v", p, g)
				}
				w, isErr := servertest.MCPCall(t, c, "write_page", map[string]any{"title": p, "content": g["content"], "frontmatter": g["frontmatter"]})
				if isErr || w["unchanged"] != true {
					t.Errorf("write_page %s of what get_page returned: %v", p, w)
					continue
				}
				// REST: GET then PUT of the same, by id
				id := fmt.Sprint(g["id"])
				r := servertest.REST(t, ts.URL, "GET", "/pages/"+url.PathEscape(id)+"?full=true", "")
				if r.Status != 200 {
					t.Fatalf("GET /pages/%s: %d %s", id, r.Status, r.Raw)
				}
				body, _ := json.Marshal(map[string]any{"content": r.Body["content"], "frontmatter": r.Body["frontmatter"]})
				r = servertest.REST(t, ts.URL, "PUT", "/pages/"+url.PathEscape(id), string(body))
				if r.Status != 200 || r.Body["unchanged"] != true {
					t.Errorf("PUT /pages/%s of what GET returned: %d %s", id, r.Status, r.Raw)
				}
				if readVaultFile(t, v, p) != before {
					t.Fatalf("%s: an unchanged write changed the file", p)
				}
				if i%2 == 1 {
					continue // edit every other page (the CLI test edits them all)
				}
				edited, line := editLastLine(fmt.Sprint(g["content"]))
				w, isErr = servertest.MCPCall(t, c, "write_page", map[string]any{"title": p, "content": edited, "frontmatter": g["frontmatter"]})
				after := readVaultFile(t, v, p)
				if len(before) > ops.MaxContentBytes {
					if !isErr || w["code"] != "too_large" || after != before {
						t.Errorf("%s (%d bytes): edit gave %v; want too_large and the file unchanged", p, len(before), w)
					}
					continue
				}
				if isErr {
					t.Errorf("write_page %s with one line edited: %v", p, w)
					continue
				}
				checkEdit(t, p, before, after, line, today)
			}
		})
	}
}

// TestWild_TypesCLIAndREST: on the wild vault, `page list --type T` and
// `search 'x type:T'` work for every type present; a new question page
// lands beside the other questions, through the CLI and REST.
func TestWild_TypesCLIAndREST(t *testing.T) {
	v := testvault.New(t)
	m, err := wildgen.Generate(v.Root, wildgen.Options{Seed: 4, NoHuge: true})
	if err != nil {
		t.Fatal(err)
	}
	pagePaths(t, v)
	count := map[string]int{}
	for _, p := range m.Pages {
		count[p.Type]++
	}
	for _, typ := range m.Types() {
		out, stderr, code := cliRun(v, "", "page", "list", "--type", typ, "--limit", "1000", "--json")
		var l ops.ListPagesOut
		if code != 0 || json.Unmarshal([]byte(out), &l) != nil || l.Total != count[typ] {
			t.Errorf("page list --type %s: exit %d, %d pages (want %d) %s", typ, code, l.Total, count[typ], stderr)
		}
		out, stderr, code = cliRun(v, "", "search", "alpha type:"+typ, "--json")
		var s ops.SearchOut
		if code != 0 || json.Unmarshal([]byte(out), &s) != nil {
			t.Errorf("search 'alpha type:%s': exit %d %s", typ, code, stderr)
		}
		for _, h := range s.Hits {
			if h.Type != typ {
				t.Errorf("search 'alpha type:%s': hit %s is a %s", typ, h.Path, h.Type)
			}
		}
	}
	out, stderr, code := cliRun(v, "What is a new question?\n", "page", "write", "A fresh question", "--type", "question", "--json")
	if code != 0 || !strings.Contains(out, `"path":"wiki/questions/a-fresh-question.md"`) {
		t.Errorf("page write --type question: exit %d %s%s", code, out, stderr)
	}
	_, ts := startWriteServer(t, v)
	r := servertest.REST(t, ts.URL, "PUT", "/pages/"+url.PathEscape("Another question"), `{"content":"Why?\n","type":"question"}`)
	if r.Status/100 != 2 || r.Body["path"] != "wiki/questions/another-question.md" || r.Body["type"] != "question" {
		t.Errorf("PUT with type question: %d %s", r.Status, r.Raw)
	}
}
