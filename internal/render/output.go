// Package render prints the results of synapse's operations for people:
// styled tables and text on a terminal, plain tab-separated lines in a
// pipe. Each renderer is a function of one result type (Of binds it); the
// CLI (package main) chooses the renderer of a verb by its operation's
// result type. JSON, MCP and REST never pass through here.
package render

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/mattn/go-runewidth"
	"github.com/muesli/termenv"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/ops"
	"golang.org/x/term"
)

// Func prints an operation's result for people.
type Func func(o *Output, v any) error

// Binding is a renderer bound to the result type it prints.
type Binding struct {
	Out    reflect.Type
	Render Func
}

// Of binds a function that prints *Out to the result type Out: the
// compiler checks the function against the type, and every verb whose
// operation returns Out prints with it.
func Of[Out any](f func(o *Output, out *Out) error) Binding {
	return Binding{reflect.TypeFor[Out](), func(o *Output, v any) error { return f(o, v.(*Out)) }}
}

// ByResult indexes bindings by the result type they print; it panics
// when two print the same type.
func ByResult(lists ...[]Binding) map[reflect.Type]Func {
	m := map[reflect.Type]Func{}
	for _, list := range lists {
		for _, b := range list {
			if m[b.Out] != nil {
				panic("two renderers print " + b.Out.String())
			}
			m[b.Out] = b.Render
		}
	}
	return m
}

// IsTerminal says whether f is a terminal.
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Styles holds every style, built from a renderer bound to the writer so
// that pipes, NO_COLOR and tests get plain text.
type Styles struct {
	Title, Header, Dim, Accent, OK, Warn, Err, Mark lipgloss.Style
}

// Output is where a command writes: data to w, notes and progress to ew.
type Output struct {
	w, ew io.Writer
	tty   bool // w is a terminal: styled tables
	etty  bool // ew is a terminal: progress lines
	st    Styles
	r     *lipgloss.Renderer
	width int    // terminal width for tables; 0: ask the terminal (tests set it)
	in    []byte // the operation's input (JSON), for renderers that describe what was asked

	mu       sync.Mutex
	lastDraw time.Time
	drawn    bool
}

// New is the output of a command that writes data to w and notes to ew,
// styled when w is a terminal.
func New(w, ew io.Writer) *Output {
	o := &Output{w: w, ew: ew}
	if f, ok := w.(*os.File); ok {
		o.tty = IsTerminal(f)
	}
	if f, ok := ew.(*os.File); ok {
		o.etty = IsTerminal(f)
	}
	o.r = lipgloss.NewRenderer(w)
	if !o.tty || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		o.r.SetColorProfile(termenv.Ascii)
	}
	s := func() lipgloss.Style { return o.r.NewStyle() }
	o.st = Styles{
		Title:  s().Bold(true),
		Header: s().Bold(true).Foreground(lipgloss.Color("12")),
		Dim:    s().Foreground(lipgloss.Color("8")),
		Accent: s().Foreground(lipgloss.Color("14")),
		OK:     s().Foreground(lipgloss.Color("10")),
		Warn:   s().Foreground(lipgloss.Color("11")),
		Err:    s().Foreground(lipgloss.Color("9")),
		Mark:   s().Bold(true).Foreground(lipgloss.Color("11")),
	}
	return o
}

// SetInput keeps the operation's input (JSON), for renderers that
// describe what was asked.
func (o *Output) SetInput(in []byte) { o.in = in }

// JSON writes v as every surface prints it (ops.MarshalJSON).
func (o *Output) JSON(v any) error {
	data, err := ops.MarshalJSON(v)
	if err != nil {
		return err
	}
	_, err = o.w.Write(data)
	return err
}

// IndentedJSON writes v as indented JSON: how a result without a renderer
// is printed for people.
func (o *Output) IndentedJSON(v any) error {
	data, _ := json.MarshalIndent(v, "", "  ")
	_, err := o.w.Write(append(data, '\n'))
	return err
}

// Printf writes data to stdout.
func (o *Output) Printf(format string, args ...any) { fmt.Fprintf(o.w, format, args...) }

// Note writes a note to stderr.
func (o *Output) Note(format string, args ...any) { fmt.Fprintf(o.ew, format+"\n", args...) }

// kv prints aligned key: value lines.
func (o *Output) kv(pairs [][2]string) {
	width := 0
	for _, p := range pairs {
		width = max(width, len(p[0])+1)
	}
	for _, p := range pairs {
		v := p[1]
		if o.tty {
			// a long list wraps after a comma, under its value
			v = wrapList(v, o.termWidth()-width-2, strings.Repeat(" ", width+2))
		}
		fmt.Fprintf(o.w, "%s  %s\n", o.st.Dim.Render(fmt.Sprintf("%-*s", width, p[0]+":")), v)
	}
}

// wrapList breaks a comma-separated list wider than width after its
// commas, starting each further line with indent.
func wrapList(v string, width int, indent string) string {
	if width < 20 || runewidth.StringWidth(v) <= width {
		return v
	}
	var b strings.Builder
	line := 0
	for i, item := range strings.SplitAfter(v, ", ") {
		w := runewidth.StringWidth(strings.TrimRight(item, " "))
		if i > 0 && line+w > width {
			cur := strings.TrimRight(b.String(), " ")
			b.Reset()
			b.WriteString(cur + "\n" + indent)
			line = 0
			item = strings.TrimLeft(item, " ")
		}
		b.WriteString(item)
		line += runewidth.StringWidth(item)
	}
	return strings.TrimRight(b.String(), " ")
}

// Progress returns a progress callback drawing on a terminal stderr, or nil.
func (o *Output) Progress() index.Progress {
	if !o.etty {
		return nil
	}
	return func(phase string, done, total int) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if time.Since(o.lastDraw) < 80*time.Millisecond && done != total {
			return
		}
		o.lastDraw = time.Now()
		o.drawn = true
		unit := index.PhaseUnit(phase)
		switch phase {
		case "embed":
			unit = "chunks"
		case "reparse":
			phase, unit = "re-reading", "files (once, after an upgrade)"
		}
		if total > 0 {
			fmt.Fprintf(o.ew, "\r\033[K%s %d/%d %s", phase, done, total, unit)
		} else {
			fmt.Fprintf(o.ew, "\r\033[K%s…", phase)
		}
	}
}

// ScanNote prints a scan's note on stderr, on a line of its own (a
// progress line being drawn is cleared first and redrawn by the next
// progress call).
func (o *Output) ScanNote(msg string) {
	o.EndProgress()
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintf(o.ew, "synapse: %s\n", msg)
}

// EndProgress clears a progress line being drawn.
func (o *Output) EndProgress() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.drawn {
		fmt.Fprint(o.ew, "\r\033[K")
		o.drawn = false
	}
}
