package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestArch_DomainImports: domain packages never import a transport or
// presentation library, and never print to the terminal.
func TestArch_DomainImports(t *testing.T) {
	domain := []string{"errs", "vault", "vaultfs", "markdown", "store", "index", "ops", "search", "embed", "history"}
	forbidden := []string{"github.com/urfave/cli", "github.com/mark3labs/mcp-go", "net/http", "github.com/charmbracelet/lipgloss"}
	for _, dir := range domain {
		imports := importsOf(t, dir)
		if len(imports) == 0 {
			t.Errorf("no Go files in %s", dir)
		}
		for f, list := range imports {
			for _, p := range list {
				for _, bad := range forbidden {
					if p == bad || strings.HasPrefix(p, bad+"/") {
						t.Errorf("%s imports %s", f, p)
					}
				}
			}
			src, _ := os.ReadFile(f)
			for _, call := range []string{"fmt.Print", "os.Stdout", "os.Exit("} {
				if strings.Contains(string(src), call) {
					t.Errorf("%s uses %s: domain code never prints or exits", f, call)
				}
			}
		}
	}
}

// importsOf lists the imports of the product (non-test) files of dir.
func importsOf(t *testing.T, dir string) map[string][]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	out := map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = nil
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[f] = append(out[f], p)
		}
	}
	return out
}

// TestArch_Layers: the arrows between the packages point down. The server
// (internal/server and below) never sees the CLI: no urfave/cli, no
// terminal styling, not the CLI's renderers (internal/render); the
// renderers print typed results and see no transport; the domain never
// imports the server or the renderers.
func TestArch_Layers(t *testing.T) {
	const srv = "github.com/synapse-wiki/synapse/internal/server"
	const render = "github.com/synapse-wiki/synapse/internal/render"
	rules := []struct {
		dirs      []string
		forbidden []string
	}{
		{[]string{"internal/server", "internal/server/sock", "internal/server/servertest"},
			[]string{"github.com/urfave/cli", "github.com/charmbracelet/lipgloss", "github.com/muesli/termenv", render}},
		{[]string{"internal/render"},
			[]string{"github.com/urfave/cli", "github.com/mark3labs/mcp-go", "net/http", srv}},
		{[]string{"errs", "vault", "vaultfs", "markdown", "store", "index", "ops", "search", "embed"},
			[]string{srv, render}},
	}
	for _, r := range rules {
		for _, dir := range r.dirs {
			imports := importsOf(t, dir)
			if len(imports) == 0 {
				t.Errorf("no Go files in %s", dir)
			}
			for f, list := range imports {
				for _, p := range list {
					for _, bad := range r.forbidden {
						if p == bad || strings.HasPrefix(p, bad+"/") {
							t.Errorf("%s imports %s", f, p)
						}
					}
				}
			}
		}
	}
}
