package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// exampleCommands cuts the synapse commands out of an example's shell
// line: the parts of a pipeline that run synapse, without environment
// assignments, redirections and a trailing &.
func exampleCommands(line string) []string {
	var out []string
	for _, seg := range strings.Split(line, " | ") {
		words := strings.Fields(seg)
		for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
			words = words[1:]
		}
		if len(words) == 0 || words[0] != "synapse" {
			continue
		}
		s := strings.Join(words, " ")
		s = strings.TrimSuffix(s, " &")
		for _, r := range []string{" > ", " < "} {
			if i := strings.Index(s, r); i >= 0 {
				s = s[:i]
			}
		}
		out = append(out, s)
	}
	return out
}

// TestHelp_EveryVerb: every verb's --help has examples that are real
// command lines of this CLI, and its exit codes (subcommand help once
// had neither).
func TestHelp_EveryVerb(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	var walk func(prefix string, cmds []*cli.Command)
	seen := map[string]bool{}
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue // an internal verb the CLI runs itself (monitor)
			}
			path := strings.TrimSpace(prefix + " " + c.Name)
			if len(c.Subcommands) > 0 {
				walk(path, c.Subcommands)
				continue
			}
			seen[path] = true
			d, ok := docOf(path)
			if !ok || len(d.examples) == 0 {
				t.Errorf("`synapse %s --help` has no examples: add them to its row (ops.Op.Examples) or to extraDocs (cmd_help.go)", path)
				continue
			}
			for _, e := range d.examples {
				runs := false
				for _, cmd := range exampleCommands(e.cmd) {
					runs = runs || strings.HasPrefix(cmd+" ", "synapse "+path+" ")
					if err := checkCommandLine(app, cmd); err != nil {
						t.Errorf("%s: example %q: %v", path, e.cmd, err)
					}
				}
				if !runs {
					t.Errorf("%s: example %q does not run `synapse %s`", path, e.cmd, path)
				}
			}
			if !hasJSON(c) {
				t.Errorf("`synapse %s` does not take --json", path)
			}
			if text := verbHelp(path); !strings.Contains(c.CustomHelpTemplate, `{{verbHelp "`+path+`"}}`) ||
				!strings.Contains(text, "EXAMPLES:") || !strings.Contains(text, "EXIT CODES:\n   0  ok") {
				t.Errorf("%s: the help template lacks its sections", path)
			}
		}
	}
	walk("", app.Commands)
	for path := range extraDocs {
		if !seen[path] {
			t.Errorf("extraDocs documents %q, which is no verb", path)
		}
	}
}

// TestHelp_Rendered: the help a person gets, through the real entry point.
func TestHelp_Rendered(t *testing.T) {
	for _, args := range [][]string{{"search", "--help"}, {"help", "search"}} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"synapse"}, args...), strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		for _, want := range []string{"QUERY SYNTAX:", `"a phrase"`, "type:T", "tag:X", "-word", "EXAMPLES:", "synapse search \"how do I sync", "EXIT CODES:", "5  unavailable",
			"-Force --dry-run", "synapse search -- --dry-run", "-json", "frontmatter lang:", "search.language"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v lacks %q:\n%s", args, want, out.String())
			}
		}
	}
}

// TestBuildCommandsFor_SameAsFull: a command line that names a verb gets
// that command as the full tree has it (its subcommands, flags and help
// template), and nothing else; one that names none, or help, gets all.
func TestBuildCommandsFor_SameAsFull(t *testing.T) {
	shape := func(c *cli.Command) string {
		var b strings.Builder
		var walk func(c *cli.Command, depth int)
		walk = func(c *cli.Command, depth int) {
			fmt.Fprintf(&b, "%*s%s %q", depth, "", c.Name, c.CustomHelpTemplate)
			for _, f := range c.Flags {
				fmt.Fprintf(&b, " %v", f.Names())
			}
			b.WriteString("\n")
			for _, s := range c.Subcommands {
				walk(s, depth+1)
			}
		}
		walk(c, 0)
		return b.String()
	}
	full := newApp(strings.NewReader(""), io.Discard, io.Discard)
	for _, c := range full.Commands {
		app := newAppFor(strings.NewReader(""), io.Discard, io.Discard, verbOf([]string{"synapse", "--vault", "v", c.Name, "--json"}))
		if c.Name == "help" {
			if len(app.Commands) != len(full.Commands) {
				t.Errorf("help: %d commands, want all %d", len(app.Commands), len(full.Commands))
			}
			continue
		}
		if len(app.Commands) != 2 || app.Commands[1].Name != "help" {
			t.Errorf("%s: commands %d, want it and help", c.Name, len(app.Commands))
			continue
		}
		if got, want := shape(app.Commands[0]), shape(c); got != want {
			t.Errorf("%s alone:\n%s\nin the full tree:\n%s", c.Name, got, want)
		}
	}
	for _, args := range [][]string{{"synapse"}, {"synapse", "--vault", "status"}, {"synapse", "nosuch"}, {"synapse", "--json", "--", "search"}} {
		if app := newAppFor(strings.NewReader(""), io.Discard, io.Discard, verbOf(args)); len(app.Commands) != len(full.Commands) {
			t.Errorf("%v: %d commands, want all %d", args, len(app.Commands), len(full.Commands))
		}
	}
}
