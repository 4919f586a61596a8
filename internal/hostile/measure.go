package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Verb is one command measured against a shape: Args may hold "{title}"
// and "{word}", filled from the shape.
type Verb struct {
	Name  string
	Args  []string
	Stdin string
}

// Verbs are the commands measured against every shape, in the order they
// run: the first one meets the page just dropped into an indexed vault
// (it indexes it), `source rescan` re-reads it after a touch, and
// `reindex` parses it again from scratch.
var Verbs = []Verb{
	{Name: "status (first verb)", Args: []string{"status"}},
	{Name: "page get", Args: []string{"page", "get", "{title}"}},
	{Name: "page get --json", Args: []string{"page", "get", "{title}", "--json"}},
	{Name: "search", Args: []string{"search", "{word}"}},
	{Name: "page list", Args: []string{"page", "list"}},
	{Name: "graph missing", Args: []string{"graph", "missing"}},
	{Name: "graph neighbors", Args: []string{"graph", "neighbors", "{title}"}},
	{Name: "lint", Args: []string{"lint"}},
	{Name: "source rescan (touched)", Args: []string{"source", "rescan"}},
	{Name: "reindex", Args: []string{"reindex"}},
	{Name: "page write (another page)", Args: []string{"page", "write", "Bystander"}, Stdin: "A bystander page linking [[Target]].\n"},
	{Name: "status", Args: []string{"status"}},
}

// Budget is what every verb must stay within on every shape.
var Budget = struct {
	Took time.Duration
	RSS  int64
}{5 * time.Second, 500 << 20}

// Measured is one verb against one shape.
type Measured struct {
	Verb   string
	Result Result
}

// OK reports whether the call stayed within the budget and did not fail
// as an internal error or a crash (exit 1, or 2 from a Go panic).
func (m Measured) OK() bool {
	r := m.Result
	if r.Hung || r.Took > Budget.Took || r.RSS > Budget.RSS || r.Code == 1 || r.Code < 0 {
		return false
	}
	return r.Code != 2 || !Crashed(r.Stderr)
}

// Crashed reports whether stderr shows a Go panic or fatal error.
func Crashed(stderr string) bool {
	for _, s := range []string{"goroutine ", "panic:", "fatal error:", "SIGBUS", "SIGSEGV"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// MeasureShape creates a vault under work, indexes it, drops the shape in
// and runs every verb, in order.
func (r Runner) MeasureShape(work string, s Shape) ([]Measured, error) {
	root := filepath.Join(work, s.Name)
	os.RemoveAll(root)
	defer os.RemoveAll(root)
	if err := r.Init(root); err != nil {
		return nil, err
	}
	if res := r.Run(root, "", "status"); res.Code != 0 {
		return nil, fmt.Errorf("status of a new vault: %s", res.Line(200))
	}
	if err := s.Write(root); err != nil {
		return nil, err
	}
	var out []Measured
	for _, v := range Verbs {
		args := v.fill(s)
		if v.Args[0] == "source" {
			now := time.Now()
			for rel := range s.Files {
				os.Chtimes(filepath.Join(root, filepath.FromSlash(rel)), now, now)
			}
		}
		out = append(out, Measured{Verb: v.Name, Result: r.Run(root, v.Stdin, args...)})
	}
	return out, nil
}
