package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/ops"
	"github.com/urfave/cli/v2"
)

var update = flag.Bool("update", false, "rewrite testdata/surface.golden")

// specTools are the nine MCP tools of SPEC §4, by exact name.
var specTools = []string{
	"get_graph_neighborhood", "get_page", "list_pages", "list_reviews", "read_source_file",
	"resolve_review", "search_wiki", "trigger_source_rescan", "write_page",
	"move_page", "get_context",
}

// surface renders every CLI path with its flags, every MCP tool with its
// full description, annotations and input schema, and every REST route,
// so that any change to what users see is a reviewable diff.
func surface() string {
	var b strings.Builder
	b.WriteString("# The public surface of synapse, generated from the operation table.\n")
	b.WriteString("# Refresh: go test -run TestSurface_Golden -update .\n\n## CLI\n")
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		sorted := append([]*cli.Command(nil), cmds...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
		for _, c := range sorted {
			path := strings.TrimSpace(prefix + " " + c.Name)
			var flags []string
			for _, f := range c.Flags {
				flags = append(flags, "--"+f.Names()[0])
			}
			sort.Strings(flags)
			fmt.Fprintf(&b, "cli %s", path)
			if len(flags) > 0 {
				fmt.Fprintf(&b, "  %s", strings.Join(flags, " "))
			}
			if c.UsageText != "" {
				fmt.Fprintf(&b, "  usage: %s", strings.Join(strings.Fields(c.UsageText), " "))
			}
			b.WriteString("\n")
			walk(path, c.Subcommands)
		}
	}
	var global []string
	for _, f := range app.Flags {
		global = append(global, "--"+f.Names()[0])
	}
	sort.Strings(global)
	fmt.Fprintf(&b, "cli synapse  %s\n", strings.Join(global, " "))
	walk("synapse", app.Commands)

	b.WriteString("\n## MCP tools (stdio: all; HTTP: read tools unless --write)\n")
	list := ops.Table()
	sort.Slice(list, func(i, j int) bool { return list[i].MCP < list[j].MCP })
	for _, op := range list {
		if op.MCP == "" {
			continue
		}
		t := mcpTool(op)
		data, _ := json.Marshal(t)
		var pretty bytes.Buffer
		json.Indent(&pretty, data, "  ", "  ")
		fmt.Fprintf(&b, "tool %s %s\n  %s\n", op.MCP, op.Access, pretty.String())
	}

	b.WriteString("\n## REST (write routes answer 403 unless --write; all but /healthz need the token)\n")
	routes := restRoutes(ops.Table())
	sort.Slice(routes, func(i, j int) bool {
		if routes[i].route.Path != routes[j].route.Path {
			return routes[i].route.Path < routes[j].route.Path
		}
		return routes[i].method < routes[j].method
	})
	for _, r := range routes {
		var query, body []string
		inPath := map[string]bool{}
		for _, s := range r.segs {
			if isParam(s) {
				inPath[s[1:len(s)-1]] = true
			}
		}
		for name, f := range r.fields {
			switch {
			case inPath[name]:
			case r.body[name]:
				body = append(body, name)
			default:
				query = append(query, f.Query)
			}
		}
		sort.Strings(query)
		sort.Strings(body)
		fmt.Fprintf(&b, "route %s %s  op=%s access=%s", r.method, r.route.Path, r.op.Name, strings.ReplaceAll(r.op.AccessText(), " ", "_"))
		if len(query) > 0 {
			fmt.Fprintf(&b, " query=%s", strings.Join(query, ","))
		}
		if len(body) > 0 {
			fmt.Fprintf(&b, " body=%s", strings.Join(body, ","))
		}
		var st []string
		for code, s := range r.op.RESTStatus {
			st = append(st, fmt.Sprintf("%s:%d", code, s))
		}
		sort.Strings(st)
		if len(st) > 0 {
			fmt.Fprintf(&b, " status=%s", strings.Join(st, ","))
		}
		b.WriteString("\n")
	}
	b.WriteString("route GET /healthz  (no token)\nroute GET /openapi.json\nroute GET|POST|DELETE /mcp  (MCP streamable HTTP)\n")
	return b.String()
}

func TestSurface_Golden(t *testing.T) {
	got := surface()
	path := filepath.Join("testdata", "surface.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run: go test -run TestSurface_Golden -update .)", err)
	}
	if got != string(want) {
		t.Errorf("the surface changed; review the diff and refresh with: go test -run TestSurface_Golden -update .\n%s", lineDiff(string(want), got))
	}
}

// lineDiff lists lines only in want (-) or only in got (+).
func lineDiff(want, got string) string {
	in := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if g[l] == 0 {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if w[l] == 0 {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}

// TestSurface_ToolsMatchTable pins the rule that the MCP surface is the
// table: every row with a tool name is served, nothing else is, and read
// rows are exactly the read tools. (The nine SPEC names are asserted by the
// end-to-end suite, which fails while a row is missing.)
func TestSurface_ToolsMatchTable(t *testing.T) {
	seen := map[string]bool{}
	for _, op := range ops.Table() {
		if op.MCP == "" {
			continue
		}
		if seen[op.MCP] {
			t.Errorf("tool %s is on two rows", op.MCP)
		}
		seen[op.MCP] = true
		known := false
		for _, n := range specTools {
			known = known || n == op.MCP
		}
		if !known {
			t.Errorf("tool %s is not one of the SPEC §4 names", op.MCP)
		}
	}
	var missing []string
	for _, n := range specTools {
		if !seen[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		t.Logf("SPEC §4 tools not in this build's table yet: %s", strings.Join(missing, ", "))
	}
}
