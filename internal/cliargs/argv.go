// Package cliargs reads a command line the way synapse's users type it,
// beside urfave/cli: flags after positional arguments, --json anywhere, and
// usage errors that name a flag as it was typed and suggest the command or
// flag that was meant.
package cliargs

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// Permute moves a verb's flags ahead of its positional arguments, so
// that `synapse page get "Title" --json` works as users expect (urfave/cli
// v2 stops parsing flags at the first argument).
func Permute(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	cmds, flags := app.Commands, app.Flags
	var cmd *cli.Command
	i := 0
	for i < len(rest) {
		a := rest[i]
		if a == "--" {
			break
		}
		if isFlagToken(a) {
			n := 1 + FlagArity(flags, a)
			out = append(out, rest[i:min(i+n, len(rest))]...)
			i += n
			continue
		}
		c := FindCommand(cmds, a)
		if c == nil {
			break
		}
		out = append(out, a)
		cmd, cmds, flags = c, c.Subcommands, c.Flags
		i++
		if len(c.Subcommands) == 0 {
			break
		}
	}
	if cmd == nil || len(cmd.Subcommands) > 0 || i >= len(rest) {
		return append(out, rest[min(i, len(rest)):]...)
	}
	var fl, pos []string
	for j := i; j < len(rest); j++ {
		a := rest[j]
		if a == "--" {
			pos = append(pos, rest[j+1:]...)
			break
		}
		if isFlagToken(a) && (strings.HasPrefix(a, "--") || KnownFlag(cmd.Flags, a)) {
			fl = append(fl, a)
			if FlagArity(cmd.Flags, a) == 1 && j+1 < len(rest) {
				fl = append(fl, rest[j+1])
				j++
			}
			continue
		}
		pos = append(pos, a)
	}
	out = append(out, fl...)
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out
}

func isFlagToken(a string) bool { return len(a) > 1 && a[0] == '-' }

func flagName(a string) string {
	n := strings.TrimLeft(a, "-")
	n, _, _ = strings.Cut(n, "=")
	return n
}

func lookupFlag(flags []cli.Flag, a string) cli.Flag {
	n := flagName(a)
	if n == "h" || n == "help" {
		return cli.HelpFlag
	}
	for _, f := range flags {
		for _, name := range f.Names() {
			if name == n {
				return f
			}
		}
	}
	return nil
}

// KnownFlag tells whether a is one of flags (or help).
func KnownFlag(flags []cli.Flag, a string) bool { return lookupFlag(flags, a) != nil }

// FlagArity is 1 when the flag consumes the next token as its value.
func FlagArity(flags []cli.Flag, a string) int {
	if strings.Contains(a, "=") {
		return 0
	}
	f := lookupFlag(flags, a)
	if f == nil {
		return 0
	}
	if _, ok := f.(*cli.BoolFlag); ok {
		return 0
	}
	return 1
}

// FindCommand is the command of cmds with this name or alias; nil if none.
func FindCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// WantsJSON reports whether --json was given anywhere before "--".
func WantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "-json" || a == "--json=true" {
			return true
		}
	}
	return false
}

// IsUsageError tells urfave's errors about flags and arguments.
func IsUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"flag provided but not defined", "invalid value", "flag needs an argument", "Required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
