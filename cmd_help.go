package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
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
	for _, op := range ops.Table() {
		if op.CLI != path {
			continue
		}
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
	"init": {
		examples: []example{
			{`synapse init ~/wiki`, "create a vault (running it again is harmless)"},
			{`synapse init --json`, "make the working directory a vault; the created paths as JSON"},
		},
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
		d, ok := docOf(path)
		if !ok {
			continue // TestHelp_EveryVerb fails
		}
		text := strings.ReplaceAll(verbHelpText(path, d), "{{", `{{"{{"}}`)
		c.CustomHelpTemplate = cli.CommandHelpTemplate + text
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
				next := findCommand(cmds, a)
				if next == nil || next.Hidden {
					return unknownCommand(a, path, cmds)
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

// unknownCommand is the usage error for a word that names no command,
// with the closest commands as suggestions.
func unknownCommand(word string, path []string, cmds []*cli.Command) error {
	where := strings.TrimSpace("synapse " + strings.Join(path, " "))
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	msg := fmt.Sprintf("unknown command %q for `%s`", word, where)
	if s := suggest(word, names); len(s) > 0 {
		msg += "; did you mean " + quoteOr(s) + "?"
	}
	return errs.E(errs.Invalid, "%s (see `%s --help`)", msg, where)
}

// suggest returns the names closest to word: a prefix either way, or an
// edit distance of at most a third of the word's length (at least 1).
func suggest(word string, names []string) []string {
	w := strings.ToLower(word)
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] || n == "" {
			continue
		}
		seen[n] = true
		ln := strings.ToLower(n)
		d := editDistance(w, ln)
		switch {
		case len(w) >= 2 && (strings.HasPrefix(ln, w) || strings.HasPrefix(w, ln) && len(ln) >= 3):
			cs = append(cs, cand{n, min(d, 1)})
		case d <= max(1, len(w)/3):
			cs = append(cs, cand{n, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i, c := range cs {
		if i == 3 || c.d > cs[0].d+1 {
			break
		}
		out = append(out, c.name)
	}
	return out
}

func quoteOr(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// editDistance is the optimal string alignment distance of two strings
// (by runes): insertions, deletions, substitutions and swaps of two
// neighbours ("vualt" is one edit from "vault").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// flagError rewrites urfave's flag errors to name the flag as it was
// typed, with a suggestion for an unknown one:
// "flag provided but not defined: -limt" becomes "unknown flag --limt for
// `synapse page list`; did you mean --limit?".
func flagError(err error, where string, flags []cli.Flag, typed []string) error {
	msg := err.Error()
	asTyped := func(name string) string {
		for _, a := range typed {
			if a == "--" {
				break
			}
			if strings.HasPrefix(a, "-") && flagName(a) == name {
				if i := strings.IndexByte(a, '='); i >= 0 {
					return a[:i]
				}
				return a
			}
		}
		if len(name) == 1 {
			return "-" + name
		}
		return "--" + name
	}
	switch {
	case strings.HasPrefix(msg, "flag provided but not defined: "):
		name := strings.TrimLeft(strings.TrimPrefix(msg, "flag provided but not defined: "), "-")
		var names []string
		for _, f := range flags {
			for _, n := range f.Names() {
				names = append(names, n)
			}
		}
		names = append(names, "help")
		out := fmt.Sprintf("unknown flag %s for `%s`", asTyped(name), where)
		if (name == "type" || name == "tag") && strings.HasSuffix(where, " search") {
			// search filters are words of the query (SPEC §4.1)
			out += fmt.Sprintf("; filters are part of the query: synapse search 'TERMS %s:VALUE'", name)
		} else if s := suggest(name, names); len(s) > 0 {
			for i, n := range s {
				if len(n) == 1 {
					s[i] = "-" + n
				} else {
					s[i] = "--" + n
				}
			}
			out += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return errs.E(errs.Invalid, "%s (see `%s --help`)", out, where)
	case strings.HasPrefix(msg, "flag needs an argument: "):
		name := strings.TrimLeft(strings.TrimPrefix(msg, "flag needs an argument: "), "-")
		return errs.E(errs.Invalid, "%s needs a value (see `%s --help`)", asTyped(name), where)
	case strings.HasPrefix(msg, "invalid value "):
		// invalid value "x" for flag -k: parse error
		rest := strings.TrimPrefix(msg, "invalid value ")
		val, flag, ok := strings.Cut(rest, " for flag ")
		if ok {
			flag, _, _ = strings.Cut(flag, ":")
			name := strings.TrimLeft(flag, "-")
			want := "a valid value"
			for _, f := range flags {
				for _, n := range f.Names() {
					if n == name {
						if _, isInt := f.(*cli.IntFlag); isInt {
							want = "a whole number"
						}
					}
				}
			}
			return errs.E(errs.Invalid, "%s must be %s, not %s (see `%s --help`)", asTyped(name), want, val, where)
		}
	}
	return errs.E(errs.Invalid, "%s (see `%s --help`)", msg, where)
}
