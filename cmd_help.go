package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/synapse-wiki/synapse/internal/cliargs"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/urfave/cli/v2"
)

// verbDoc is what a verb's --help adds to its usage: examples (at least
// one a verb; a test parses each one against the CLI), the exit codes it
// can end with beyond 0, 1 and 2, and more text. An operation's verb takes
// them from its row (ops.Op: Examples, Exits, VerbHelp); the other
// commands from extraDocs.
type verbDoc struct {
	examples []example
	exits    map[int]string
	more     string
}

// storeBusy is the exit 5 of every verb that opens the vault.
const storeBusy = "unavailable: the vault's store is held by another process that does not answer (the message names it)"

type example struct{ cmd, what string }

// docOf is the documentation of the verb at a CLI path: its operation
// row's, where 5 (the store held by another process) goes without saying,
// else extraDocs'.
func docOf(path string) (verbDoc, bool) {
	if op := ops.ByCLI(path); op != nil {
		d := verbDoc{exits: map[int]string{5: storeBusy}, more: op.VerbHelp}
		for _, e := range op.Examples {
			d.examples = append(d.examples, example{e.Cmd, e.What})
		}
		for c, text := range op.Exits {
			d.exits[c] = text
		}
		return d, true
	}
	d, ok := extraDocs[path]
	return d, ok
}

// extraDocs documents the commands that are no operation row, by CLI
// path.
var extraDocs = map[string]verbDoc{
	"desk": {
		examples: []example{
			{`synapse desk`, "decide the queue and check recent writes in a full-screen terminal UI (keys: ?)"},
			{`NO_COLOR=1 synapse desk --mouse`, "without colour; the wheel scrolls and a click moves the cursor"},
		},
		exits: map[int]string{2: "invalid: standard output is not a terminal", 130: "SIGINT or SIGTERM ended it (the terminal is restored)"},
	},
	"init": {
		examples: []example{
			{`synapse init ~/wiki`, "create a vault (running it again is harmless)"},
			{`synapse init --json`, "make the working directory a vault; the created paths as JSON"},
		},
	},
	"trust": {
		examples: []example{
			{`synapse trust --show`, "what in this vault's .synapse/config.yaml needs trust (URLs, key variable names), and whether it has it"},
			{`synapse trust`, "trust the file as it is now; a later change makes it untrusted again"},
			{`synapse trust --revoke`, "forget this vault's trust"},
		},
		exits: map[int]string{3: "not found: the vault has no .synapse/config.yaml"},
	},
	"serve": {
		examples: []example{
			{`synapse serve --mcp-stdio`, "MCP over standard input and output, every tool (how MCP clients start it)"},
			{`SYNAPSE_TOKEN=secret synapse serve --http --write &`, "MCP and REST at http://127.0.0.1:7411 in the background, writes allowed"},
		},
		exits: map[int]string{5: "unavailable: the address is taken, or the vault's store cannot be opened"},
	},
	"openapi": {
		examples: []example{{`synapse openapi > openapi.json`, "the REST description, as /openapi.json serves it"}},
	},
	"skill install": {
		examples: []example{
			{`synapse skill install`, "write SKILL.md to ~/.claude/skills/synapse/"},
			{`synapse skill install --agent codex --json`, "Codex's skill folder; the path and status as JSON"},
		},
		exits: map[int]string{4: "conflict: a different SKILL.md is there (--force replaces it)"},
	},
	"skill print": {
		examples: []example{{`synapse skill print > SKILL.md`, "the embedded skill, byte for byte"}, {`synapse skill print --json`, "with its name, size and sha256"}},
	},
	"version": {
		examples: []example{{`synapse version`, "the version"}, {`synapse version --json`, "version, Go version and platform as JSON"}},
	},
	"help": {
		examples: []example{{`synapse help page write`, "the help of one verb: synapse page write --help"}},
	},
}

// exitText is the meaning of the exit codes every verb shares.
var exitText = map[int]string{
	0: "ok",
	1: "internal error (the message says what failed)",
	2: "invalid input or usage: an unknown command or flag, a missing argument (the message says which)",
}

// verbHelpText renders the EXAMPLES and EXIT CODES sections of a verb.
func verbHelpText(path string, d verbDoc) string {
	var b strings.Builder
	if d.more != "" {
		b.WriteString("\n" + d.more + "\n")
	}
	b.WriteString("\nEXAMPLES:\n")
	for _, e := range d.examples {
		fmt.Fprintf(&b, "   %s\n      %s\n", e.cmd, e.what)
	}
	b.WriteString("\nEXIT CODES:\n")
	codes := []int{0, 1, 2}
	for c := range d.exits {
		if c > 2 {
			codes = append(codes, c)
		}
	}
	sort.Ints(codes)
	for _, c := range codes {
		text := exitText[c]
		if t, ok := d.exits[c]; ok {
			text = t
		}
		fmt.Fprintf(&b, "   %d  %s\n", c, text)
	}
	return b.String()
}

// applyVerbHelp gives every leaf command its examples and exit codes.
func applyVerbHelp(prefix string, cmds []*cli.Command) {
	for _, c := range cmds {
		path := strings.TrimSpace(prefix + " " + c.Name)
		if len(c.Subcommands) > 0 {
			applyVerbHelp(path, c.Subcommands)
			continue
		}
		if strings.ContainsAny(path, "\"`{}") {
			continue // (no verb is named so)
		}
		c.CustomHelpTemplate = cli.CommandHelpTemplate + `{{verbHelp "` + path + `"}}`
	}
}

// verbHelp is the template function that renders a verb's examples and
// exit codes when its help is shown (applyVerbHelp): rendering them for
// every verb whenever synapse starts would cost each command.
func verbHelp(path string) string {
	d, ok := docOf(path)
	if !ok {
		return "" // TestHelp_EveryVerb fails
	}
	return verbHelpText(path, d)
}

func init() {
	cli.HelpPrinter = func(w io.Writer, templ string, data any) {
		cli.HelpPrinterCustom(w, templ, data, map[string]any{"verbHelp": verbHelp})
	}
}

// helpCommand is `synapse help [COMMAND...]`: the help of synapse or of
// any command, as COMMAND --help shows it.
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "Show the help of synapse or of a command",
		UsageText: "synapse help [COMMAND [SUBCOMMAND]]",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "accepted for symmetry; help is text"}},
		Action: func(c *cli.Context) error {
			var path []string
			cmds := c.App.Commands
			for _, a := range c.Args().Slice() {
				next := cliargs.FindCommand(cmds, a)
				if next == nil || next.Hidden {
					return cliargs.UnknownCommand(a, path, cmds)
				}
				path = append(path, next.Name)
				cmds = next.Subcommands
			}
			if len(path) == 0 {
				return cli.ShowAppHelp(c)
			}
			return c.App.RunContext(c.Context, append(append([]string{c.App.Name}, path...), "--help"))
		},
	}
}
