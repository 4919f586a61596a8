package main

import (
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

// renderer prints an operation's result for humans.
type renderer func(o *output, v any) error

// typedRenderer is a renderer bound to the result type it prints.
type typedRenderer struct {
	out    reflect.Type
	render renderer
}

// renders binds a function that prints *Out to the result type Out: the
// compiler checks the function against the type, and every verb whose
// operation returns Out prints with it.
func renders[Out any](f func(o *output, out *Out) error) typedRenderer {
	return typedRenderer{reflect.TypeFor[Out](), func(o *output, v any) error { return f(o, v.(*Out)) }}
}

// renderers print the results of the CLI's verbs, by result type (a test
// fails naming the row of a verb without one; without one a result is
// printed as indented JSON).
var renderers = byResult(
	renders(renderSearch),
	renders(renderPageGet), renders(renderPageList), renders(renderPageWrite), renders(renderPageMove), renders(renderContext),
	renders(renderGraphNeighbors), renders(renderGraphBacklinks), renders(renderGraphOrphans), renders(renderGraphMissing),
	renders(renderSourceRead), renders(renderSourceList), renders(renderSourceRescan),
	renders(renderReviewList), renders(renderReviewResolve), renders(renderReviewBulkResolve), renders(renderReviewAdd), renders(renderReviewShow),
	renders(renderReviewExport), renders(renderReviewImport), renders(renderReviewCompact),
	renders(renderLint), renders(renderStatus), renders(renderReindex), renders(renderEmbed),
	renders(renderPageHistory), renders(renderPageDiff), renders(renderPageRestore), renders(renderRecent),
)

func byResult(list ...typedRenderer) map[reflect.Type]renderer {
	m := map[reflect.Type]renderer{}
	for _, r := range list {
		if m[r.out] != nil {
			panic("two renderers print " + r.out.String())
		}
		m[r.out] = r.render
	}
	return m
}

// rendererFor is how the CLI prints op's result; nil: as indented JSON.
func rendererFor(op *ops.Op) renderer { return renderers[op.Out] }

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Styles holds every style, built from a renderer bound to the writer so
// that pipes, NO_COLOR and tests get plain text.
type Styles struct {
	Title, Header, Dim, Accent, OK, Warn, Err, Mark lipgloss.Style
}

// output is where a command writes: data to w, notes and progress to ew.
type output struct {
	w, ew io.Writer
	tty   bool // w is a terminal: styled tables
	etty  bool // ew is a terminal: progress lines
	st    Styles
	r     *lipgloss.Renderer
	width int    // terminal width for tables; 0: ask the terminal (tests set it)
	in    []byte // the operation's input (JSON), for renderers that describe what was asked

	// guard ends the verb soon after SIGINT or SIGTERM (cmd_signal.go)
	guard sigGuard

	mu       sync.Mutex
	lastDraw time.Time
	drawn    bool
}

func newOutput(w, ew io.Writer) *output {
	o := &output{w: w, ew: ew}
	if f, ok := w.(*os.File); ok {
		o.tty = isTerminal(f)
	}
	if f, ok := ew.(*os.File); ok {
		o.etty = isTerminal(f)
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

// printf writes data to stdout.
func (o *output) printf(format string, args ...any) { fmt.Fprintf(o.w, format, args...) }

// note writes a note to stderr.
func (o *output) note(format string, args ...any) { fmt.Fprintf(o.ew, format+"\n", args...) }

// kv prints aligned key: value lines.
func (o *output) kv(pairs [][2]string) {
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

// progress returns a progress callback drawing on a terminal stderr, or nil.
func (o *output) progress() index.Progress {
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

// scanNote prints a scan's note on stderr, on a line of its own (a
// progress line being drawn is cleared first and redrawn by the next
// progress call).
func (o *output) scanNote(msg string) {
	o.endProgress()
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintf(o.ew, "synapse: %s\n", msg)
}

func (o *output) endProgress() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.drawn {
		fmt.Fprint(o.ew, "\r\033[K")
		o.drawn = false
	}
}
