package render

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/synapse-wiki/synapse/internal/cliargs"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
)

// stateFilter is source list's --state as asked (nil: every state).
func stateFilter(in []byte) []string {
	var out []string
	for _, s := range strings.Split(strings.ToLower(inField[string](in, "state")), ",") {
		if s = strings.TrimSpace(s); s != "" && s != "all" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// shortTime shows an RFC 3339 time to the minute, in UTC, on a terminal
// ("2026-12-01 09:26 UTC"); JSON and pipes keep the full value.
func shortTime(ts string) string {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return ts
	}
	return t.UTC().Format("2006-01-02 15:04") + " UTC"
}

// stateStyle colours a source state on a terminal.
func (o *Output) stateStyle(state string) lipgloss.Style {
	switch state {
	case ops.StateNew:
		return o.st.Accent
	case ops.StateChanged:
		return o.st.Warn
	case ops.StateMissing:
		return o.st.Err
	case ops.StateIngested:
		return o.st.OK
	}
	return o.r.NewStyle()
}

// terminalSafe replaces control characters other than tab and line ends,
// so that a source cannot drive the terminal (escape sequences).
func terminalSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return r
		}
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return '\uFFFD'
		}
		return r
	}, s)
}

func SourceRead(o *Output, s *ops.ReadSourceOut) error {
	if o.tty {
		o.Printf("%s  %s\n", o.st.Title.Render(s.Path), o.st.Dim.Render(humanBytes(s.SizeBytes)+" · sha256 "+s.SHA256[:12]))
		o.Printf("%s\n", strings.TrimRight(terminalSafe(s.Content), "\n"))
	} else {
		// a pipe gets the text as it is in the file
		o.Printf("%s", s.Content)
	}
	if s.Truncated {
		o.Note("%s is %s; bytes %d–%d were returned: the next part is synapse source read %s --offset %d (--limit up to %d for more at once)",
			s.Path, humanBytes(s.SizeBytes), s.Offset, s.NextOffset, shellArg(s.Path), s.NextOffset, ops.MaxSourceRead)
	}
	return nil
}

func SourceList(o *Output, l *ops.ListSourcesOut) error {
	rows := make([][]string, 0, len(l.Sources))
	for _, s := range l.Sources {
		size := "-"
		if s.SizeBytes != nil {
			size = strconv.FormatInt(*s.SizeBytes, 10)
			if o.tty {
				size = humanBytes(*s.SizeBytes)
			}
		}
		cited := "-"
		if len(s.CitedBy) > 0 {
			cited = s.CitedBy[0].Title
			switch {
			case o.tty:
				// the count first: a cut title keeps it
				cited = fmt.Sprintf("%d: %s", s.CitedByCount, cited)
			case s.CitedByCount > 1:
				cited += fmt.Sprintf(" +%d", s.CitedByCount-1)
			}
		}
		changed := orDash(s.LastChanged)
		if o.tty {
			changed = dateOf(changed)
		}
		rows = append(rows, []string{s.State, s.Path, size, changed, cited})
	}
	state := fixedCol("STATE")
	state.style = o.stateStyle
	path := pathCol("PATH")
	if o.tty && len(rows) > 0 {
		// on a terminal the folder every row shares gives way to
		// what tells the files apart: the path in raw/sources/,
		// which is what source read takes
		in := true
		for _, r := range rows {
			in = in && strings.HasPrefix(r[1], vault.SourcesDir+"/")
		}
		if in {
			for _, r := range rows {
				r[1] = strings.TrimPrefix(r[1], vault.SourcesDir+"/")
			}
			path.head = "SOURCE"
		}
	}
	o.table([]col{state, path, numCol("SIZE"), fixedCol("LAST CHANGED"), flexCol("CITED BY")}, rows)
	c := l.Counts
	n := c.New + c.Changed + c.Missing + c.Ingested
	var parts []string
	for _, p := range []struct {
		n    int
		name string
	}{{c.New, "new"}, {c.Changed, "changed"}, {c.Missing, "missing"}, {c.Ingested, "ingested"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.name))
		}
	}
	counts := ""
	if len(parts) > 0 {
		counts = ": " + strings.Join(parts, ", ")
	}
	in := " in " + vault.SourcesDir + "/"
	summary := plural(n, "source"+in, "sources"+in) + counts
	states, pathFilter := stateFilter(o.in), strings.TrimSpace(inField[string](o.in, "path"))
	if len(states) > 0 || pathFilter != "" {
		// what was asked for, then the whole picture
		what := "source"
		if len(states) > 0 {
			what = cliargs.OrList(states) + " source"
		}
		asked := plural(l.Total, what, what+"s")
		if pathFilter != "" {
			asked += fmt.Sprintf(" matching --path %q", pathFilter)
		}
		summary = fmt.Sprintf("%s (of %s%s)", asked, plural(n, "source", "sources"), counts)
	}
	o.Note("%s", summary)
	if len(l.Sources) < l.Total {
		o.Note("%d of %d matching sources shown (use --limit and --offset for more)", len(l.Sources), l.Total)
	}
	return nil
}
