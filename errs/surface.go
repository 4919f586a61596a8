package errs

import "strings"

// A message speaks the caller's language: the CLI user types --if-match and
// `synapse review list --status all`, an MCP client sends if_match and calls
// list_reviews, a REST client sends if_match and GETs /review/queue. Domain
// code does not know its caller, so a message names parameters and
// follow-up operations through Param and Cmd, which leave a reference in
// the text; each adapter renders the message for its surface
// (MessageFor), and everything else (logs, Error, Message, tests) sees the
// Plain rendering. The references survive wrapping (Raw) and the CLI's
// socket to a server, so the message is rendered once, at the edge that
// shows it.

// Surface is where a message is shown.
type Surface int

// The surfaces.
const (
	Plain Surface = iota // logs, Error(), Message: parameters by name, operations as CLI lines
	CLI                  // --flag, synapse verb …
	MCP                  // param_name, tool {"param": …}
	REST                 // param_name, METHOD /path?param=…
)

// Reference delimiters: private-use code points, which no message means.
const (
	refOpen  = "\uE000"
	refClose = "\uE001"
	refSep   = "\uE002"
)

// Param refers to the input parameter with JSON name name: the CLI shows
// it as its flag (--if-match), MCP and REST as the name (if_match).
func Param(name string) string {
	return refOpen + "p" + refSep + clean(name) + refClose
}

// Cmd refers to an operation the caller can run next, by operation name
// (as in the table: "review.list") with parameters as name, value pairs:
// the CLI shows `synapse review list --status all`, MCP `list_reviews
// {"status":"all"}`, REST `GET /review/queue?status=all`.
func Cmd(op string, params ...string) string {
	var b strings.Builder
	b.WriteString(refOpen + "c" + refSep + clean(op))
	for _, p := range params {
		b.WriteString(refSep + clean(p))
	}
	b.WriteString(refClose)
	return b.String()
}

func clean(s string) string {
	return strings.NewReplacer(refOpen, "", refClose, "", refSep, "").Replace(s)
}

// Renderers of references, set by the package that knows the operations
// (ops). Unset, a parameter shows as its name and an operation as its
// name with its parameters.
var (
	ParamText func(sf Surface, name string) string
	CmdText   func(sf Surface, op string, params []string) string
)

// Render renders the references in s for sf.
func Render(s string, sf Surface) string {
	if !strings.Contains(s, refOpen) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, refOpen)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.Index(s[i:], refClose)
		if j < 0 {
			b.WriteString(clean(s))
			return b.String()
		}
		b.WriteString(s[:i])
		parts := strings.Split(s[i+len(refOpen):i+j], refSep)
		s = s[i+j+len(refClose):]
		switch {
		case len(parts) == 2 && parts[0] == "p":
			if ParamText != nil {
				b.WriteString(ParamText(sf, parts[1]))
			} else {
				b.WriteString(parts[1])
			}
		case len(parts) >= 2 && parts[0] == "c":
			if CmdText != nil {
				b.WriteString(CmdText(sf, parts[1], parts[2:]))
			} else {
				b.WriteString(strings.Join(parts[1:], " "))
			}
		}
	}
}

// MessageFor returns the user-facing message of err rendered for sf.
func MessageFor(err error, sf Surface) string { return Render(Raw(err), sf) }

// Raw returns the user-facing message of err with its references kept, to
// build another message from it or to pass it to the edge that shows it.
func Raw(err error) string {
	if e, ok := asError(err); ok {
		return e.raw()
	}
	if err == nil {
		return ""
	}
	return "internal error: " + err.Error()
}
