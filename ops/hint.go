package ops

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
)

// Messages name parameters and follow-up operations with errs.Param and
// errs.Cmd; this file renders them for each surface from the table, so a
// message says `--if-match` and `synapse review list --status all` on the
// CLI, `if_match` and `list_reviews {"status":"all"}` over MCP, and
// `if_match` and `GET /review/queue?status=all` over REST.

func init() {
	errs.ParamText = paramText
	errs.CmdText = cmdText
}

// paramText shows the parameter named name (its JSON name): on the CLI as
// the flag of the first row that has it as a flag (--if-match, --tag for
// tags), else as the argument (TITLE); elsewhere as the name.
func paramText(sf errs.Surface, name string) string {
	if sf != errs.CLI {
		return name
	}
	arg := ""
	for _, op := range Table() {
		for _, f := range Fields(op.In) {
			if f.Name != name || f.CLI == "-" {
				continue
			}
			if f.Arg < 0 {
				return "--" + f.Flag
			}
			arg = strings.ToUpper(name)
		}
	}
	if arg != "" {
		return arg
	}
	return name
}

// cmdText shows the operation opName with params (name, value pairs): on
// the CLI (and in Plain) as a command line, over MCP as the tool call (or,
// for an operation that is no tool, its command line), over REST as its
// first route.
func cmdText(sf errs.Surface, opName string, params []string) string {
	op := Lookup(opName)
	if op == nil {
		return strings.Join(append([]string{opName}, params...), " ")
	}
	var kv [][2]string
	for i := 0; i+1 < len(params); i += 2 {
		kv = append(kv, [2]string{params[i], params[i+1]})
	}
	switch {
	case sf == errs.MCP && op.MCP != "":
		if len(kv) == 0 {
			return op.MCP
		}
		var b strings.Builder
		b.WriteString(op.MCP + " {")
		for i, p := range kv {
			if i > 0 {
				b.WriteString(",")
			}
			k, _ := json.Marshal(p[0])
			v, _ := json.Marshal(p[1])
			b.Write(k)
			b.WriteString(":")
			b.Write(v)
		}
		b.WriteString("}")
		return b.String()
	case sf == errs.REST && len(op.REST) > 0:
		return restText(op, kv)
	case op.CLI != "":
		return cliText(op, kv)
	}
	return op.Name
}

func cliText(op *Op, kv [][2]string) string {
	fields := Fields(op.In)
	words := []string{"synapse", op.CLI}
	var flags []string
	for _, p := range kv {
		f, ok := fieldNamed(fields, p[0])
		switch {
		case !ok:
			flags = append(flags, "--"+p[0], shellQuote(p[1]))
		case f.Arg >= 0:
			words = append(words, shellQuote(p[1]))
		case f.Type.Kind() == reflect.Bool:
			flags = append(flags, "--"+f.Flag)
		default:
			flags = append(flags, "--"+f.Flag, shellQuote(p[1]))
		}
	}
	return strings.Join(append(words, flags...), " ")
}

func restText(op *Op, kv [][2]string) string {
	r := op.REST[0]
	path := r.Path
	q := url.Values{}
	var body []string
	for _, p := range kv {
		if ph := "{" + p[0] + "}"; strings.Contains(path, ph) {
			path = strings.ReplaceAll(path, ph, url.PathEscape(p[1]))
			continue
		}
		name := p[0]
		if f, ok := fieldNamed(Fields(op.In), p[0]); ok {
			name = f.Query
		}
		if r.Method == "GET" {
			q.Set(name, p[1])
		} else {
			k, _ := json.Marshal(p[0])
			v, _ := json.Marshal(p[1])
			body = append(body, string(k)+":"+string(v))
		}
	}
	out := r.Method + " " + path
	if len(q) > 0 {
		out += "?" + q.Encode()
	}
	if len(body) > 0 {
		out += " {" + strings.Join(body, ",") + "}"
	}
	return out
}

func fieldNamed(fields []Field, name string) (Field, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:,=@+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
