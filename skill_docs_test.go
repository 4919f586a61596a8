package main

import (
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/search"
	"github.com/urfave/cli/v2"
)

// The generated parts of skill/SKILL.md and README.md: the command
// reference, the README's command table, the write verbs, the caps and the
// MCP tools. They are rendered here from the CLI that newApp builds out of
// the operation table (plus the verbs that are not rows: init, serve…), so
// they describe what this binary offers. TestDocs_Generated fails when a
// file differs; `go generate .` (go test -run TestDocs_Generated -update .)
// rewrites the blocks between the markers and nothing else.

// regenerate is the command the drift test names.
const regenerate = "go generate .   (runs: go test -run TestDocs_Generated -update .)"

// docFiles lists each file's generated blocks.
var docFiles = map[string][]string{
	"skill/SKILL.md": {"writes", "caps", "tools", "commands", "search-syntax", "graph-edges"},
	"README.md":      {"commands"},
}

// docCmd is one CLI verb as the docs present it.
type docCmd struct {
	Path     string // "page write"
	Synopsis string // with --json when the verb takes it
	Summary  string
	Access   string  // read, write or server
	Op       *ops.Op // nil for verbs that are not operation rows
	Params   []docParam
}

// docParam is one argument or flag with its meaning.
type docParam struct{ Name, Desc string }

// extraAccess classifies the verbs that are not operation rows; a new one
// must be added here (the test says so) so the docs can say whether it
// writes.
var extraAccess = map[string]string{
	"backup":        "read", // it writes the archive, never the vault
	"desk":          "write",
	"init":          "write",
	"openapi":       "read",
	"serve":         "server",
	"skill install": "write",
	"skill print":   "read",
	"trust":         "the user's decision: an agent never runs it",
	"version":       "read",
}

// groupRank orders verbs in the docs as in --help (commandOrder).
func groupRank(path string) int { return commandRank(path) }

// docCommands walks the real CLI and returns every leaf verb.
func docCommands() ([]docCmd, error) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	byPath := map[string]*ops.Op{}
	for _, op := range ops.Table() {
		if op.CLI != "" {
			byPath[op.CLI] = op
		}
	}
	var out []docCmd
	var walk func(prefix string, cmds []*cli.Command) error
	walk = func(prefix string, cmds []*cli.Command) error {
		for _, c := range cmds {
			if c.Name == "help" || c.Hidden {
				continue // added by urfave when a command has run; internal verbs
			}
			path := strings.TrimSpace(prefix + " " + c.Name)
			if len(c.Subcommands) > 0 {
				if err := walk(path, c.Subcommands); err != nil {
					return err
				}
				continue
			}
			d, err := docCommand(path, c, byPath[path])
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return nil
	}
	if err := walk("", app.Commands); err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := groupRank(out[i].Path), groupRank(out[j].Path)
		if ri != rj {
			return ri < rj
		}
		return out[i].Path < out[j].Path
	})
	return out, nil
}

func docCommand(path string, c *cli.Command, op *ops.Op) (docCmd, error) {
	d := docCmd{Path: path, Summary: capitalize(strings.TrimSuffix(c.Usage, ".")), Op: op}
	if op == nil {
		acc, ok := extraAccess[path]
		if !ok {
			return d, fmt.Errorf("`synapse %s` is not an operation row: say whether it reads or writes in extraAccess (skill_docs_test.go)", path)
		}
		d.Access = acc
		d.Synopsis = strings.Join(strings.Fields(c.UsageText), " ")
		if d.Synopsis == "" {
			d.Synopsis = "synapse " + path
		}
		for _, f := range c.Flags {
			if n := f.Names()[0]; n == "json" || n == "vault" || n == "help" {
				continue
			}
			d.Params = append(d.Params, docParam{strings.Trim(flagSynopsis(f, false), "[]."), flagUsage(f)})
		}
		if hasJSON(c) && !strings.Contains(d.Synopsis, "--json") {
			d.Synopsis += " --json"
		}
		return d, nil
	}
	d.Access = op.AccessText()
	fields := ops.Fields(op.In)
	byFlag := map[string]ops.Field{}
	var parts []string
	// positional arguments, as the CLI builder names them in UsageText
	_, args, _ := strings.Cut(c.UsageText, "[options]")
	args = strings.TrimSpace(args)
	for _, f := range fields {
		switch {
		case f.CLI == "-":
		case f.Arg >= 0:
			name := strings.ToUpper(f.Name)
			desc := f.Desc
			if f.Required {
				desc += " (required)"
			}
			d.Params = append(d.Params, docParam{name, desc})
		case f.CLI == "stdin":
			byFlag["file"] = f
		default:
			byFlag[f.Flag] = f
		}
	}
	for _, fl := range c.Flags {
		n := fl.Names()[0]
		if n == "json" || n == "vault" || n == "help" {
			continue
		}
		f, ok := byFlag[n]
		if !ok {
			return d, fmt.Errorf("`synapse %s --%s` matches no field of %s", path, n, op.In)
		}
		// the field a flag fills may be required while the flag is not:
		// --file FILE is one way to give the content, standard input the other
		required := f.Required && f.CLI != "stdin"
		syn := flagSynopsis(fl, required)
		parts = append(parts, syn)
		desc := flagUsage(fl)
		if f.CLI == "stdin" {
			desc = "read the " + f.Name + " from FILE; without --file (or with --file -) it is read from standard input. The " + f.Name + ": " + f.Desc
			syn = "--file FILE"
		}
		if required {
			desc += " (required)"
		}
		d.Params = append(d.Params, docParam{strings.Trim(syn, "[]."), desc})
	}
	// arguments first (page write TITLE [--type TYPE]), unless they are a
	// list that runs to the end (bulk-resolve --action ACTION IDS... | -)
	if hasJSON(c) {
		parts = append(parts, "--json")
	}
	switch {
	case args == "":
	case strings.Contains(args, "..."):
		parts = append(parts, args)
	default:
		parts = append([]string{args}, parts...)
	}
	d.Synopsis = strings.Join(append([]string{"synapse " + path}, parts...), " ")
	return d, nil
}

func hasJSON(c *cli.Command) bool {
	for _, f := range c.Flags {
		if f.Names()[0] == "json" {
			return true
		}
	}
	return false
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

// flagSynopsis renders a flag as usage text: `--type TYPE`, `[-k N]`,
// `[--tag TAG]...`.
func flagSynopsis(f cli.Flag, required bool) string {
	n := f.Names()[0]
	dash := "--"
	if len(n) == 1 {
		dash = "-"
	}
	s := dash + n
	repeat := false
	switch f.(type) {
	case *cli.BoolFlag:
	case *cli.IntFlag:
		s += " N"
	case *cli.StringSliceFlag:
		s += " " + strings.ToUpper(strings.ReplaceAll(n, "-", "_"))
		repeat = true
	default:
		s += " " + strings.ToUpper(strings.ReplaceAll(n, "-", "_"))
	}
	if !required {
		s = "[" + s + "]"
	}
	if repeat {
		s += "..."
	}
	return s
}

// flagUsage is a flag's help text with its default when the text does not
// already state one.
func flagUsage(f cli.Flag) string {
	u := ""
	if df, ok := f.(cli.DocGenerationFlag); ok {
		u = df.GetUsage()
		def := df.GetDefaultText()
		if _, isBool := f.(*cli.BoolFlag); !isBool && def != "" && def != "0" && def != `""` && !strings.Contains(u, "default") {
			u += " (default " + def + ")"
		}
	}
	return u
}

// mcpSignature renders a tool call: search_wiki(query, k=5).
func mcpSignature(op *ops.Op) string {
	var ps []string
	for _, f := range ops.Fields(op.In) {
		if f.NoMCP {
			continue
		}
		switch {
		case f.Required:
			ps = append(ps, f.Name)
		case f.Default != "":
			ps = append(ps, f.Name+"="+f.Default)
		default:
			ps = append(ps, f.Name+"?")
		}
	}
	return op.MCP + "(" + strings.Join(ps, ", ") + ")"
}

// cell escapes a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// renderBlock renders one generated block of one file.
func renderBlock(file, name string, cmds []docCmd) (string, error) {
	var b strings.Builder
	switch file + ":" + name {
	case "README.md:commands":
		b.WriteString("| command | what it does | MCP tool | access |\n|---|---|---|---|\n")
		for _, d := range cmds {
			tool := "—"
			if d.Op != nil && d.Op.MCP != "" {
				tool = "`" + d.Op.MCP + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", cell(strings.Replace(d.Synopsis, " --json", "", 1)), cell(d.Summary), tool, d.Access)
		}
	case "skill/SKILL.md:writes":
		for _, d := range cmds {
			if d.Op != nil && d.Op.WriteWith != "" {
				// a read that one flag turns into a write: list the flag
				for _, f := range ops.Fields(d.Op.In) {
					if f.Name == d.Op.WriteWith {
						fmt.Fprintf(&b, "- `synapse %s --%s`: %s\n", d.Path, f.Flag, f.Desc)
					}
				}
				continue
			}
			if d.Access != "write" {
				continue
			}
			fmt.Fprintf(&b, "- `synapse %s`", d.Path)
			if d.Op != nil && d.Op.MCP != "" {
				fmt.Fprintf(&b, " (MCP `%s`)", d.Op.MCP)
			}
			fmt.Fprintf(&b, ": %s\n", d.Summary)
		}
	case "skill/SKILL.md:caps":
		for _, d := range cmds {
			if d.Op == nil || d.Op.Limits == "" {
				continue
			}
			fmt.Fprintf(&b, "- `synapse %s`", d.Path)
			if d.Op.MCP != "" {
				fmt.Fprintf(&b, " / `%s`", d.Op.MCP)
			}
			fmt.Fprintf(&b, ": %s\n", d.Op.Limits)
		}
	case "skill/SKILL.md:tools":
		b.WriteString("| MCP tool | access | same as |\n|---|---|---|\n")
		list := ops.Table()
		sort.Slice(list, func(i, j int) bool { return list[i].MCP < list[j].MCP })
		for _, op := range list {
			if op.MCP == "" {
				continue
			}
			same := "—"
			if op.CLI != "" {
				same = "`synapse " + op.CLI + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", mcpSignature(op), op.Access, same)
		}
		var cliOnly []string
		for _, d := range cmds {
			if d.Op != nil && d.Op.MCP == "" {
				cliOnly = append(cliOnly, "`synapse "+d.Path+"`")
			}
		}
		if len(cliOnly) > 0 {
			fmt.Fprintf(&b, "\nNo tool, CLI only: %s.\n", strings.Join(cliOnly, ", "))
		}
	case "skill/SKILL.md:graph-edges":
		// what an edge of get_graph_neighborhood says, as its type does
		t := reflect.TypeFor[ops.GraphEdge]()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fmt.Fprintf(&b, "- `%s`: %s\n", name, f.Tag.Get("desc"))
		}
	case "skill/SKILL.md:search-syntax":
		// the query language, as package search documents it
		fmt.Fprintf(&b, "```text\n%s\n```\n", search.SyntaxHelp)
	case "skill/SKILL.md:commands":
		for _, d := range cmds {
			fmt.Fprintf(&b, "#### `%s`\n\n%s.", d.Synopsis, d.Summary)
			if d.Op != nil {
				fmt.Fprintf(&b, " Access: %s.", d.Access)
				if d.Op.MCP != "" {
					fmt.Fprintf(&b, " MCP tool: `%s`.", mcpSignature(d.Op))
				}
				if d.Op.Limits != "" {
					fmt.Fprintf(&b, " Limits: %s.", d.Op.Limits)
				}
			} else {
				fmt.Fprintf(&b, " Access: %s.", d.Access)
			}
			b.WriteString("\n")
			if len(d.Params) > 0 {
				b.WriteString("\n")
			}
			for _, p := range d.Params {
				fmt.Fprintf(&b, "- `%s`: %s\n", p.Name, p.Desc)
			}
			b.WriteString("\n")
		}
	default:
		return "", fmt.Errorf("no generator for block %q of %s", name, file)
	}
	return strings.TrimRight(b.String(), "\n") + "\n", nil
}

func beginMarker(name string) string { return "<!-- BEGIN GENERATED: " + name + " -->\n" }
func endMarker(name string) string   { return "<!-- END GENERATED: " + name + " -->" }

// splice replaces the text between a block's markers.
func splice(doc, name, body string) (string, error) {
	begin, end := beginMarker(name), endMarker(name)
	if strings.Count(doc, begin) != 1 || strings.Count(doc, end) != 1 {
		return "", fmt.Errorf("want exactly one %q line and one %q line", strings.TrimSpace(begin), end)
	}
	i := strings.Index(doc, begin) + len(begin)
	j := strings.Index(doc, end)
	if j < i {
		return "", fmt.Errorf("%q comes before %q", end, strings.TrimSpace(begin))
	}
	return doc[:i] + body + doc[j:], nil
}

// generatedDoc returns file's text with every generated block rendered.
func generatedDoc(file, doc string, cmds []docCmd) (string, error) {
	for _, name := range docFiles[file] {
		body, err := renderBlock(file, name, cmds)
		if err != nil {
			return "", err
		}
		if doc, err = splice(doc, name, body); err != nil {
			return "", fmt.Errorf("%s: %w", file, err)
		}
	}
	return doc, nil
}

// TestDocs_Generated is the drift test: the command reference in
// skill/SKILL.md and the README's command table must be what the binary
// offers. With -update it is the generator.
func TestDocs_Generated(t *testing.T) {
	cmds, err := docCommands()
	if err != nil {
		t.Fatal(err)
	}
	files := make([]string, 0, len(docFiles))
	for f := range docFiles {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := generatedDoc(file, string(data), cmds)
		if err != nil {
			t.Fatal(err)
		}
		if want == string(data) {
			continue
		}
		if *update {
			if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("regenerated %s", file)
			continue
		}
		t.Errorf("%s is out of date with the operation table; regenerate it with:\n    %s\nlines the file has (-) and the binary needs (+):\n%s", file, regenerate, lineDiff(string(data), want))
	}
}

// TestDocs_DriftIsCaught renames a verb in a copy of the table's CLI and
// checks that the generated reference changes where the verb is named, so
// the drift test cannot pass with a stale document.
func TestDocs_DriftIsCaught(t *testing.T) {
	cmds, err := docCommands()
	if err != nil {
		t.Fatal(err)
	}
	skill, err := os.ReadFile("skill/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	renamed := append([]docCmd(nil), cmds...)
	for i := range renamed {
		if renamed[i].Path == "graph neighbors" {
			renamed[i].Path = "graph around"
			renamed[i].Synopsis = strings.Replace(renamed[i].Synopsis, "graph neighbors", "graph around", 1)
		}
	}
	for file, doc := range map[string]string{"skill/SKILL.md": string(skill), "README.md": string(readme)} {
		got, err := generatedDoc(file, doc, renamed)
		if err != nil {
			t.Fatal(err)
		}
		if got == doc {
			t.Errorf("%s: renaming `graph neighbors` left the generated text unchanged", file)
		}
		if !strings.Contains(lineDiff(doc, got), "synapse graph around") {
			t.Errorf("%s: the drift report does not name the renamed verb:\n%s", file, lineDiff(doc, got))
		}
	}
}

// TestDocs_EveryVerbDocumented checks the rendered reference against the
// CLI from the other side: each verb, each of its flags and each MCP tool
// appears in the skill, and every op field reachable from the CLI is
// described.
func TestDocs_EveryVerbDocumented(t *testing.T) {
	data, err := os.ReadFile("skill/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	skill := string(data)
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Name == "help" || c.Hidden {
				continue
			}
			path := strings.TrimSpace(prefix + " " + c.Name)
			if len(c.Subcommands) > 0 {
				walk(path, c.Subcommands)
				continue
			}
			if !strings.Contains(skill, "#### `synapse "+path) {
				t.Errorf("the skill's reference lacks `synapse %s`", path)
			}
			for _, f := range c.Flags {
				n := f.Names()[0]
				if n == "json" || n == "vault" || n == "help" {
					continue
				}
				flag := "--" + n
				if len(n) == 1 {
					flag = "-" + n
				}
				if !strings.Contains(skill, "`"+flag) && !strings.Contains(skill, "["+flag) {
					t.Errorf("the skill's reference lacks flag %s of `synapse %s`", flag, path)
				}
			}
		}
	}
	walk("", app.Commands)
	for _, op := range ops.Table() {
		if op.MCP != "" && !strings.Contains(skill, "`"+op.MCP+"(") {
			t.Errorf("the skill lacks MCP tool %s", op.MCP)
		}
		if op.Limits != "" && (op.CLI != "" || op.MCP != "") && !strings.Contains(skill, op.Limits) {
			t.Errorf("the skill lacks the limits of %s: %s", op.Name, op.Limits)
		}
	}
}
