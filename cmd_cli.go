package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/cliargs"
	"github.com/synapse-wiki/synapse/internal/gcmode"
	"github.com/synapse-wiki/synapse/internal/render"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/urfave/cli/v2"
)

// extraCommands are the verbs that are not operation rows (init, serve,
// skill, version); files add to it from init functions.
var extraCommands []*cli.Command

// commandOrder is the order of the commands in --help and in the docs:
// the way a user meets them. Commands not named come last, in table order.
var commandOrder = []string{"init", "search", "page", "recent", "graph", "source", "review", "desk", "lint", "status", "reindex", "backup", "embed", "trust", "serve", "openapi", "skill", "version", "help"}

// commandRank is a command's place in commandOrder (the first word of a
// path counts).
func commandRank(path string) int {
	g, _, _ := strings.Cut(path, " ")
	if i := slices.Index(commandOrder, g); i >= 0 {
		return i
	}
	return len(commandOrder)
}

// buildCommandsFor generates one command per operation row with a CLI
// path, grouping multi-word paths under group commands, and adds the
// extra commands. For a command line that names the top-level command
// verb it builds that command only (what a verb's run, its help and its
// errors look at); all of them when verb is "" or names none.
// Building every verb's flags costs each command about a millisecond.
func buildCommandsFor(verb string) []*cli.Command {
	if verb != "" {
		if top := buildCommandsOnly(verb); len(top) > 0 {
			return top
		}
	}
	return buildCommandsOnly("")
}

// buildCommandsOnly builds the top-level commands named verb ("": all).
func buildCommandsOnly(verb string) []*cli.Command {
	var top []*cli.Command
	groups := map[string]*cli.Command{}
	for _, op := range ops.Table() {
		if op.CLI == "" {
			continue
		}
		words := strings.Fields(op.CLI)
		if verb != "" && words[0] != verb {
			continue
		}
		cmd := opCommand(op, words[len(words)-1])
		if len(words) == 1 {
			top = append(top, cmd)
			continue
		}
		g := groups[words[0]]
		if g == nil {
			g = groupCommand(words[0], groupUsage(words[0]))
			groups[words[0]] = g
			top = append(top, g)
		}
		g.Subcommands = append(g.Subcommands, cmd)
	}
	wrapExtra.Do(func() {
		for _, c := range extraCommands {
			collectsGarbage(c)
		}
	})
	for _, c := range extraCommands {
		if verb != "" && c.Name != verb {
			continue
		}
		if g := groups[c.Name]; g != nil {
			g.Subcommands = append(g.Subcommands, c.Subcommands...)
			continue
		}
		top = append(top, c)
	}
	slices.SortStableFunc(top, func(a, b *cli.Command) int { return commandRank(a.Name) - commandRank(b.Name) })
	return top
}

// groupUsage is the usage of a command group (ops.Groups).
func groupUsage(name string) string {
	for _, g := range ops.Groups() {
		if g.Name == name {
			return g.Usage
		}
	}
	return ""
}

func groupCommand(name, usage string) *cli.Command {
	return &cli.Command{
		Name:  name,
		Usage: usage,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				if c.Args().First() == "help" { // synapse page help [write]
					return c.App.RunContext(c.Context, append([]string{c.App.Name, "help", name}, c.Args().Tail()...))
				}
				return cliargs.UnknownCommand(c.Args().First(), []string{name}, c.Command.Subcommands)
			}
			// a group alone is a usage error: its help goes to stderr
			out := c.App.Writer
			c.App.Writer = c.App.ErrWriter
			err := cli.ShowSubcommandHelp(c)
			c.App.Writer = out
			if err != nil {
				return err
			}
			var names []string
			for _, sc := range c.Command.Subcommands {
				if !sc.Hidden {
					names = append(names, sc.Name)
				}
			}
			return errs.E(errs.Invalid, "%s needs a command: %s (see synapse help %s)", name, cliargs.OrList(names), name)
		},
		HideHelpCommand: true,
		OnUsageError:    usageError,
	}
}

func usageError(c *cli.Context, err error, _ bool) error {
	return cliargs.FlagError(err, c.Command.HelpName, c.Command.Flags, typedArgs(c))
}

// commandFlags are accepted by every generated verb.
func commandFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "json", Usage: "print the result as JSON (identical to MCP and REST)"},
		&cli.StringFlag{Name: "vault", Usage: "vault folder"},
	}
}

func opCommand(op *ops.Op, name string) *cli.Command {
	fields := ops.Fields(op.In)
	var flags []cli.Flag
	var argNames []string
	for _, f := range fields {
		if f.CLI == "-" {
			continue
		}
		if f.Arg >= 0 {
			an := strings.ToUpper(f.Name)
			if f.CLI == "stdin" {
				an = "FILE | -" // read from the file named, or standard input
			}
			if f.Type.Kind() == reflect.Slice {
				an += "..."
			}
			if f.CLI == "stdin-list" {
				an += " | -"
			}
			if !f.Required {
				an = "[" + an + "]"
			}
			argNames = append(argNames, an)
			continue
		}
		usage := f.Desc
		if len(f.Enum) > 0 && !strings.Contains(usage, f.Enum[0]) {
			usage += " (" + strings.Join(f.Enum, ", ") + ")"
		}
		var aliases []string
		if f.Short != "" {
			aliases = []string{f.Short}
		}
		switch {
		case f.CLI == "stdin":
			flags = append(flags, &cli.StringFlag{Name: "file", Usage: "read the " + f.Name + " from FILE (\"-\" or no --file: standard input)"})
		case f.Type.Kind() == reflect.Bool:
			flags = append(flags, &cli.BoolFlag{Name: f.Flag, Aliases: aliases, Usage: usage})
		case f.Type.Kind() == reflect.Int:
			// the default is applied by ops.Normalize, on every surface
			flags = append(flags, &cli.IntFlag{Name: f.Flag, Aliases: aliases, Usage: usage, DefaultText: f.Default})
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String:
			flags = append(flags, &cli.StringSliceFlag{Name: f.Flag, Aliases: aliases, Usage: usage + " (repeatable)"})
		case f.Type.Kind() == reflect.String:
			flags = append(flags, &cli.StringFlag{Name: f.Flag, Aliases: aliases, Usage: usage, DefaultText: f.Default})
		}
	}
	flags = append(flags, commandFlags()...)
	usage := op.Summary
	if op.Limits != "" {
		usage += " [" + op.Limits + "]"
	}
	desc := op.Summary + "."
	if op.MCP != "" {
		desc += "\nMCP tool: " + op.MCP + "."
	}
	if len(op.REST) > 0 {
		var rs []string
		for _, r := range op.REST {
			rs = append(rs, r.Method+" "+r.Path)
		}
		desc += "\nREST: " + strings.Join(rs, ", ") + "."
	}
	if op.Limits != "" {
		desc += "\nLimits: " + op.Limits + "."
	}
	return &cli.Command{
		Name:         name,
		Usage:        op.Summary,
		UsageText:    strings.TrimSpace("synapse " + op.CLI + " [options] " + strings.Join(argNames, " ")),
		Description:  desc,
		Flags:        flags,
		OnUsageError: usageError,
		// no `help` subcommand: a verb's words are its arguments
		// (`synapse search -- help` searches for "help"); --help shows
		// its help
		HideHelpCommand: true,
		Action: func(c *cli.Context) error {
			raw, err := cliInput(c, op, fields)
			if err != nil {
				return err
			}
			return runOp(c, op, raw)
		},
	}
}

// cliInput turns positional arguments and flags into the operation's JSON
// input, so that the CLI goes through the same strict decoding as MCP and
// REST.
func cliInput(c *cli.Context, op *ops.Op, fields []ops.Field) ([]byte, error) {
	in := map[string]any{}
	args := c.Args().Slice()
	maxArg := -1
	for _, f := range fields {
		if f.CLI == "-" {
			continue
		}
		if f.Arg >= 0 && f.CLI == "stdin" {
			name := ""
			if f.Arg < len(args) {
				name, maxArg = args[f.Arg], max(maxArg, f.Arg)
			}
			v, err := readFrom(c, name, "")
			if err != nil {
				return nil, err
			}
			in[f.Name] = v
			continue
		}
		if f.Arg >= 0 {
			last, err := argInput(c, in, fields, f, args)
			if err != nil {
				return nil, err
			}
			maxArg = max(maxArg, last)
			continue
		}
		if f.CLI == "stdin" {
			// an optional value may be left out when other options say
			// what to do (page write --tag x: the body is kept)
			optional := !f.Required && otherOptions(c, fields)
			v, ok, err := readContent(c, optional)
			if err != nil {
				return nil, err
			}
			blank := strings.TrimSpace(v) == "" // as the operation reads it: one message for "" and blank lines
			if ok && blank && !optional {
				from := "standard input"
				if name := c.String("file"); name != "" && name != "-" {
					from = name
				}
				return nil, errs.E(errs.Invalid, "the %s is empty (read from %s): pipe it in or give --file FILE", f.Name, from)
			}
			if ok && !blank {
				in[f.Name] = v
			}
			continue
		}
		if !c.IsSet(f.Flag) {
			if f.Required {
				return nil, errs.E(errs.Invalid, "--%s is required (usage: %s)", f.Flag, c.Command.UsageText)
			}
			if stdin, ok := c.App.Reader.(*os.File); f.TTY != "" && ok && render.IsTerminal(stdin) {
				in[f.Name] = f.TTY // a person typed it
			}
			continue
		}
		if f.Required && f.Type.Kind() == reflect.String && strings.TrimSpace(c.String(f.Flag)) == "" {
			return nil, errs.E(errs.Invalid, "--%s must not be empty (usage: %s)", f.Flag, c.Command.UsageText)
		}
		switch f.Type.Kind() {
		case reflect.Bool:
			in[f.Name] = c.Bool(f.Flag)
		case reflect.Int:
			in[f.Name] = c.Int(f.Flag)
		case reflect.Slice:
			in[f.Name] = c.StringSlice(f.Flag)
		default:
			in[f.Name] = c.String(f.Flag)
		}
	}
	if len(args) > maxArg+1 {
		return nil, errs.E(errs.Invalid, "unexpected argument %q (usage: %s)", args[maxArg+1], c.Command.UsageText)
	}
	return json.Marshal(in)
}

// argInput sets in[f.Name] from the positional arguments, from f.Arg on,
// and returns the index of the last argument f takes.
func argInput(c *cli.Context, in map[string]any, fields []ops.Field, f ops.Field, args []string) (int, error) {
	if f.Arg >= len(args) {
		if f.Required {
			return f.Arg, errs.E(errs.Invalid, "missing %s (usage: %s)", strings.ToUpper(f.Name), c.Command.UsageText)
		}
		return f.Arg, nil
	}
	last := isLastArg(fields, f)
	switch {
	case f.Type.Kind() == reflect.Slice:
		vals := args[f.Arg:]
		if f.CLI == "stdin-list" && slices.Contains(vals, "-") {
			var err error
			if vals, err = readList(c, vals); err != nil {
				return f.Arg, err
			}
		}
		in[f.Name] = vals
		return len(args) - 1, nil
	case last && f.Words && f.Type.Kind() == reflect.String:
		// unquoted multi-word values: `synapse search how do I …`
		in[f.Name] = strings.Join(args[f.Arg:], " ")
		return len(args) - 1, nil
	case last && len(args) > f.Arg+1:
		return f.Arg, severalArgs(c, f, args[f.Arg:])
	case f.Type.Kind() == reflect.Int:
		n, err := strconv.Atoi(args[f.Arg])
		if err != nil {
			return f.Arg, errs.E(errs.Invalid, "%s must be a number, not %q", strings.ToUpper(f.Name), args[f.Arg])
		}
		in[f.Name] = n
	default:
		in[f.Name] = args[f.Arg]
	}
	return f.Arg, nil
}

// severalArgs refuses several words for an argument that takes one (an
// id, a path), naming the command that takes several when there is one.
func severalArgs(c *cli.Context, f ops.Field, vals []string) error {
	quoted := make([]string, len(vals))
	for i, v := range vals {
		quoted[i] = strconv.Quote(v)
	}
	name := strings.ToUpper(f.Name)
	verb := strings.TrimPrefix(c.Command.HelpName, c.App.Name+" ")
	msg := fmt.Sprintf("%s takes one %s, not %d (%s)", verb, name, len(vals), strings.Join(quoted, " "))
	if f.Several != "" {
		msg += "; for several, use " + f.Several
	} else if f.Type.Kind() == reflect.String {
		msg += "; quote a " + name + " that holds spaces"
	}
	return errs.E(errs.Invalid, "%s (usage: %s)", msg, c.Command.UsageText)
}

func isLastArg(fields []ops.Field, f ops.Field) bool {
	for _, g := range fields {
		if g.Arg > f.Arg && g.CLI != "-" {
			return false
		}
	}
	return true
}

// maxStdin bounds content read from stdin or --file (write_page caps the
// content it accepts at all; one byte more lets it report too_large, and
// a page over 1 MiB can still be written back unchanged).
const maxStdin = ops.MaxInputBytes + 1

// readContent reads the value of a cli:"stdin" option; an optional one
// is absent (ok false) when no --file is given and standard input is a
// terminal.
func readContent(c *cli.Context, optional bool) (v string, ok bool, err error) {
	if f, isFile := c.App.Reader.(*os.File); optional && c.String("file") == "" && isFile && render.IsTerminal(f) {
		return "", false, nil
	}
	v, err = readFrom(c, c.String("file"), "--file")
	return v, err == nil, err
}

// otherOptions reports whether an option other than the cli:"stdin" one
// (and --json, --vault) is given.
func otherOptions(c *cli.Context, fields []ops.Field) bool {
	for _, f := range fields {
		if f.Arg < 0 && f.CLI != "-" && f.CLI != "stdin" && c.IsSet(f.Flag) {
			return true
		}
	}
	return false
}

// readFrom reads a value from the file name ("" or "-": standard input,
// which must not be a terminal); flag names the flag that gave the name
// ("" for an argument), for messages.
func readFrom(c *cli.Context, name, flag string) (string, error) {
	var r io.Reader
	if name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", openFromError(err, name, flag)
		}
		defer f.Close()
		r = f
	} else {
		if f, ok := c.App.Reader.(*os.File); ok && render.IsTerminal(f) {
			if flag == "" {
				return "", errs.E(errs.Invalid, "content is read from FILE or standard input; nothing was piped in (usage: %s)", c.Command.UsageText)
			}
			return "", errs.E(errs.Invalid, "content is read from standard input or --file FILE; nothing was piped in")
		}
		r = c.App.Reader
	}
	data, err := io.ReadAll(io.LimitReader(r, maxStdin))
	if err != nil {
		return "", errs.Wrap(errs.Invalid, err, "read content: %v", err)
	}
	// checked here: the JSON encoding below would turn bad bytes into U+FFFD
	// (content over the cap is refused as too large by the operation)
	if len(data) < maxStdin && !utf8.Valid(data) {
		return "", errs.E(errs.Invalid, "content is not valid UTF-8 (bad byte at offset %d)", ops.BadUTF8Offset(data))
	}
	return string(data), nil
}

// openFromError is the error of opening the file name that flag gave
// ("" for an argument): for a flag, not found (exit 3) and forbidden
// (exit 5) as the verb's help says; else invalid.
func openFromError(err error, name, flag string) error {
	switch {
	case flag == "":
		return errs.Wrap(errs.Invalid, err, "%v", err)
	case errors.Is(err, fs.ErrNotExist):
		return errs.Wrap(errs.NotFound, err, "%s %s: no such file", flag, name)
	case errors.Is(err, fs.ErrPermission):
		return errs.Wrap(errs.Forbidden, err, "%s %s: permission denied", flag, name)
	}
	return errs.Wrap(errs.Invalid, err, "%s: %v", flag, err)
}

// readList replaces a "-" among list arguments with the whitespace-separated
// words read from stdin (cli:"stdin-list"), so that lists can be piped:
// `... | jq -r '.items[].id' | synapse review bulk-resolve --action skip -`.
func readList(c *cli.Context, args []string) ([]string, error) {
	if f, ok := c.App.Reader.(*os.File); ok && render.IsTerminal(f) {
		return nil, errs.E(errs.Invalid, "\"-\" reads the list from standard input, but nothing was piped in")
	}
	data, err := io.ReadAll(io.LimitReader(c.App.Reader, maxStdin))
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "read standard input: %v", err)
	}
	out := []string{}
	for _, a := range args {
		if a == "-" {
			out = append(out, strings.Fields(string(data))...)
			data = nil // a second "-" adds nothing
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// globals are the options every verb shares.
type globals struct {
	vault string
	json  bool
}

func globalsOf(c *cli.Context) globals {
	g := globals{}
	for _, ctx := range c.Lineage() {
		if ctx.IsSet("vault") && g.vault == "" {
			g.vault = ctx.String("vault")
		}
		if ctx.Bool("json") {
			g.json = true
		}
	}
	if g.vault == "" {
		g.vault = c.String("vault")
	}
	return g
}

func findVault(g globals) (*vault.Vault, error) {
	cwd, _ := os.Getwd()
	return vault.Find(g.vault, os.Getenv(vault.EnvVar), cwd)
}

// runOp executes an operation for the CLI and prints its result.
func runOp(c *cli.Context, op *ops.Op, raw []byte) error {
	g := globalsOf(c)
	v, err := findVault(g)
	if err != nil {
		return err
	}
	o := render.New(c.App.Writer, c.App.ErrWriter)
	o.SetInput(raw)
	configNote(v, c.App.ErrWriter, "")
	if in, err := op.Decode(raw); err == nil {
		for _, n := range ops.ClampNotes(in) {
			o.Note("%s", n)
		}
	}
	guard := &sigGuard{}
	ctx := context.WithValue(c.Context, sigGuardKey{}, guard)
	c.Context = ctx
	stop := guard.watch(ctx, processExit(c), func() int {
		o.EndProgress()
		return reportError(c.App.ErrWriter, interrupted(op, context.Canceled), g.json)
	})
	defer stop()
	out, err := invoke(c, v, op, raw, o)
	if err != nil {
		return err
	}
	if ctx.Err() != nil && !guard.wrote {
		// a read the signal came too late to stop: its answer is not
		// printed, as with a signal a moment sooner
		return interrupted(op, context.Canceled)
	}
	if err := printResult(o, op, out, g.json); err != nil {
		return err
	}
	// a result that reports a failure (lint --fail-on-findings) is printed,
	// then ends the command with its own exit code
	if f, ok := out.(interface{ Failure() string }); ok && f.Failure() != "" {
		return cli.Exit(f.Failure(), exitFindings)
	}
	return nil
}

// invoke runs a verb's operation: handed to the server that holds the
// vault, or in this process (invokeVerb, cmd_socket.go). Tests replace it.
var invoke = invokeVerb

// wrapExtra wraps extraCommands once (buildCommandsFor runs for every app).
var wrapExtra sync.Once

// collectsGarbage makes a command that is no operation row (serve, init,
// skill…) and its subcommands turn the garbage collector back on when
// they start (gcmode.Long): the collector is off only for one operation
// run in this process.
func collectsGarbage(c *cli.Command) {
	if act := c.Action; act != nil {
		c.Action = func(ctx *cli.Context) error {
			gcmode.Long()
			return act(ctx)
		}
	}
	for _, s := range c.Subcommands {
		collectsGarbage(s)
	}
}
