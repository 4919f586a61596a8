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

	"github.com/synapse-wiki/synapse/internal/server"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/urfave/cli/v2"
)

var update = flag.Bool("update", false, "rewrite testdata/surface.golden")

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
		t := server.MCPTool(op)
		data, _ := json.Marshal(t)
		var pretty bytes.Buffer
		json.Indent(&pretty, data, "  ", "  ")
		fmt.Fprintf(&b, "tool %s %s\n  %s\n", op.MCP, op.Access, pretty.String())
	}

	b.WriteString("\n## REST (write routes answer 403 unless --write; all but /healthz need the token)\n")
	routes := server.RESTRoutes(ops.Table())
	sort.Slice(routes, func(i, j int) bool {
		if routes[i].Path != routes[j].Path {
			return routes[i].Path < routes[j].Path
		}
		return routes[i].Method < routes[j].Method
	})
	for _, r := range routes {
		fmt.Fprintf(&b, "route %s %s  op=%s access=%s", r.Method, r.Path, r.Op.Name, strings.ReplaceAll(r.Op.AccessText(), " ", "_"))
		if len(r.Query) > 0 {
			fmt.Fprintf(&b, " query=%s", strings.Join(r.Query, ","))
		}
		if len(r.Body) > 0 {
			fmt.Fprintf(&b, " body=%s", strings.Join(r.Body, ","))
		}
		var st []string
		for code, s := range r.Op.RESTStatus {
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
// table: no tool name is on two rows (the golden file lists the names,
// so a renamed or added tool is a reviewable diff).
func TestSurface_ToolsMatchTable(t *testing.T) {
	seen := map[string]string{}
	for _, op := range ops.Table() {
		if op.MCP == "" {
			continue
		}
		if other, ok := seen[op.MCP]; ok {
			t.Errorf("tool %s is on two rows: %s and %s", op.MCP, other, op.Name)
		}
		seen[op.MCP] = op.Name
	}
}
