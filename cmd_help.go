package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/search"
	"github.com/urfave/cli/v2"
)

// verbDoc is what a verb's --help adds to what its operation row says:
// examples (at least one a verb; a test parses each one against the
// CLI), the exit codes it can end with beyond 0, 1 and 2, and more text.
type verbDoc struct {
	examples []example
	exits    map[int]string
	more     string
}

type example struct{ cmd, what string }

// storeBusy is the exit 5 of every verb that opens the vault.
const storeBusy = "unavailable: the vault's store is held by another process that does not answer (the message names it)"

// verbDocs is keyed by CLI path.
var verbDocs = map[string]verbDoc{
	"search": {
		examples: []example{
			{`synapse search "how do I sync notes across devices"`, "a question works: words are OR-ranked"},
			{`synapse search '"daily notes" -template type:concept' -k 10`, "a phrase, an exclusion and a type filter; ten hits"},
			{`synapse search 'tag:plugins canvas' --json`, "the hits as JSON: id, title, type, path, score, snippet"},
			{`synapse search "keep my notes safe" --mode hybrid`, "words and meaning fused (needs an embedding provider; else lexical, with a note)"},
		},
		exits: map[int]string{5: storeBusy},
		more: "QUERY SYNTAX:\n" + indent(strings.TrimPrefix(search.SyntaxHelp, "Query syntax:\n"), "   ") +
			"\n   On the command line a query that starts with \"--\", or that is one of search's own options\n" +
			"   (-k, -h, -json, -mode, -vault), goes after \"--\": synapse search -- --dry-run; -Force needs nothing",
	},
	"page get": {
		examples: []example{
			{`synapse page get "Daily notes"`, "by title; an alias, file name, path or id works too"},
			{`synapse page get "Daily notes" > page.md`, "in a pipe: the file itself (frontmatter and body), to edit and write back"},
			{`synapse page get wiki/Home.md --json`, "frontmatter, content, sha256, links and backlinks as JSON"},
		},
		exits: map[int]string{3: "not found: no page answers to TITLE (the message lists the closest titles)", 5: storeBusy},
	},
	"page list": {
		examples: []example{
			{`synapse page list --type concept --limit 20`, "the first 20 concept pages, by title"},
			{`synapse page list --tag plugins --offset 100 --json`, "the next page of results as JSON (total counts all)"},
		},
		exits: map[int]string{5: storeBusy},
	},
	"page write": {
		examples: []example{
			{`synapse page write "Spaced repetition" --type concept --source notes/srs.md --file draft.md`, "a new page from a file, citing a raw source"},
			{`echo "Body text with a [[Link]]." | synapse page write "Spaced repetition" --tag memory`, "the body on standard input (--file - says so too)"},
			{`synapse page write "Spaced repetition" --if-match SHA256 --file - < draft.md`, "an edit that fails (exit 4) if the page changed since you read its sha256"},
		},
		exits: map[int]string{
			2: "invalid input: a rule of write_page is broken (the message names the field), or the content is over 1 MiB",
			3: "not found: --file FILE does not exist",
			4: "conflict: --if-match is stale, the title is ambiguous, or the existing file's frontmatter is not valid YAML",
			5: "forbidden or unavailable: a read-only server, the store held by another process, or --file FILE unreadable",
		},
	},
	"graph neighbors": {
		examples: []example{
			{`synapse graph neighbors "Daily notes"`, "the pages one link away, strongest first"},
			{`synapse graph neighbors "Daily notes" --depth 2 --json`, "two hops, with every edge's weight and link counts"},
		},
		exits: map[int]string{3: "not found: no page answers to TITLE", 5: storeBusy},
	},
	"graph backlinks": {
		examples: []example{{`synapse graph backlinks "Daily notes"`, "the pages linking to it, with their link counts"}},
		exits:    map[int]string{3: "not found: no page answers to TITLE", 5: storeBusy},
	},
	"graph orphans": {
		examples: []example{{`synapse graph orphans --json`, "pages no other page links to"}},
		exits:    map[int]string{5: storeBusy},
	},
	"graph missing": {
		examples: []example{
			{`synapse graph missing`, "link targets that match no page, and who links to them"},
			{`synapse graph missing --page "Internal links"`, "the dangling links of one page"},
		},
		exits: map[int]string{3: "not found: no page answers to --page", 5: storeBusy},
		more: "COLUMNS:\n" +
			"   TARGET       the link target, as first written ([[Target]])\n" +
			"   TOTAL        links to the target from every page (with --page: from that page); most first\n" +
			"   LINKED FROM  a page that links to it (one row per linking page)\n" +
			"   PATH         that page's file\n" +
			"   LINKS        links to the target from that page",
	},
	"source list": {
		examples: []example{
			{`synapse source list --state new,changed`, "the compile worklist: sources no page cites yet, or changed since"},
			{`synapse source list --json`, "every source with its state, size, times and citing pages"},
		},
		exits: map[int]string{5: storeBusy},
	},
	"source read": {
		examples: []example{
			{`synapse source read notes/srs.md`, "the text (in a pipe, byte for byte)"},
			{`synapse source read raw/sources/notes/srs.md --json`, "with size, sha256 and truncated"},
		},
		exits: map[int]string{
			2: "invalid: not a text file, or a path that is not under raw/sources/",
			3: "not found: no such file under raw/sources/",
			5: "forbidden: the path leads outside raw/sources/ (no bytes are read)",
		},
	},
	"source rescan": {
		examples: []example{{`synapse source rescan`, "pick up files added, changed or deleted since the last scan"}},
		exits:    map[int]string{5: storeBusy},
	},
	"review list": {
		examples: []example{
			{`synapse review list`, "pending items, oldest first"},
			{`synapse review list --type missing-page --status all --json`, "every missing-page item, decided ones too"},
		},
		exits: map[int]string{5: storeBusy},
	},
	"review resolve": {
		examples: []example{
			{`synapse review resolve k3j9xq --action create`, "write the stub page the item proposes"},
			{`synapse review resolve k3j9xq --action dismiss --json`, "decide it; the item as JSON"},
		},
		exits: map[int]string{
			3: "not found: no item has this id",
			4: "conflict: the item is already decided (the message names its status)",
			5: "unavailable: deep-research without $SYNAPSE_RESEARCH_CMD, or the research command failed",
		},
	},
	"review bulk-resolve": {
		examples: []example{
			{`synapse review bulk-resolve --action skip k3j9xq p0w2mm`, "decide several items in one transaction"},
			{`synapse review list --json | jq -r '.items[].id' | synapse review bulk-resolve --action dismiss -`, "ids from standard input"},
		},
		exits: map[int]string{2: "invalid: more than 200 ids, or an action other than skip, dismiss, resolve", 5: storeBusy},
	},
	"review add": {
		examples: []example{{`synapse review add --type contradiction --title "Two dates for the launch" --rationale "Plan says May, memo says June" --ref Plan --ref Memo`, "propose work (adding it again refreshes it)"}},
		exits:    map[int]string{5: storeBusy},
	},
	"lint": {
		examples: []example{
			{`synapse lint`, "broken links, orphans, pages without outlinks, missing sources, duplicate titles"},
			{`synapse lint --to-review --json`, "file every finding in the review queue (a write)"},
		},
		exits: map[int]string{5: storeBusy},
	},
	"status": {
		examples: []example{{`synapse status --json`, "pages, sources, links, orphans, reviews and the store's size"}},
		exits:    map[int]string{5: storeBusy},
	},
	"embed": {
		examples: []example{
			{`synapse embed`, "embed new and changed pages with the provider of ~/.config/synapse/config.yaml or a trusted .synapse/config.yaml (embeddings: url, model)"},
			{`SYNAPSE_EMBED_URL=http://127.0.0.1:11434/v1/embeddings SYNAPSE_EMBED_MODEL=nomic-embed-text synapse embed --json`, "a provider from the environment; the run's report as JSON"},
			{`synapse embed --rebuild`, "drop every vector and embed all pages again"},
		},
		exits: map[int]string{5: "unavailable: no provider is configured, or it is down, slow or answers garbage (the message says which; what was stored stays)"},
	},
	"reindex": {
		examples: []example{{`synapse reindex`, "rebuild the index from the files (the review queue is kept)"}},
		exits:    map[int]string{5: storeBusy},
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

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
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
		d, ok := verbDocs[path]
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
