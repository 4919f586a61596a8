package cliargs

import (
	"fmt"
	"sort"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/urfave/cli/v2"
)

// UnknownCommand is the usage error for a word that names no command,
// with the closest commands as suggestions.
func UnknownCommand(word string, path []string, cmds []*cli.Command) error {
	where := strings.TrimSpace("synapse " + strings.Join(path, " "))
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	msg := fmt.Sprintf("unknown command %q for `%s`", word, where)
	if s := Suggest(word, names); len(s) > 0 {
		msg += "; did you mean " + quoteOr(s) + "?"
	}
	return errs.E(errs.Invalid, "%s (see `%s --help`)", msg, where)
}

// Suggest returns the names closest to word: a prefix either way, or an
// edit distance of at most a third of the word's length (at least 1).
func Suggest(word string, names []string) []string {
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

// OrList joins names as "a, b or c".
func OrList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
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

// FlagError rewrites urfave's flag errors to name the flag as it was
// typed, with a suggestion for an unknown one:
// "flag provided but not defined: -limt" becomes "unknown flag --limt for
// `synapse page list`; did you mean --limit?".
func FlagError(err error, where string, flags []cli.Flag, typed []string) error {
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
			names = append(names, f.Names()...)
		}
		names = append(names, "help")
		out := fmt.Sprintf("unknown flag %s for `%s`", asTyped(name), where)
		if (name == "type" || name == "tag") && strings.HasSuffix(where, " search") {
			// search filters are words of the query
			out += fmt.Sprintf("; filters are part of the query: synapse search 'TERMS %s:VALUE'", name)
		} else if s := Suggest(name, names); len(s) > 0 {
			for i, n := range s {
				if len(n) == 1 {
					s[i] = "-" + n
				} else {
					s[i] = "--" + n
				}
			}
			out += "; did you mean " + strings.Join(s, " or ") + "?"
		} else if strings.HasSuffix(where, " search") {
			// a query word that starts with a dash
			out += fmt.Sprintf("; to search for it, end the flags first: %s -- '%s'", where, asTyped(name))
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
