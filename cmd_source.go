package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/synapse-wiki/synapse/ops"
)

func init() {
	renderers["source.read"] = func(o *output, v any) error {
		s := v.(*ops.ReadSourceOut)
		if o.tty {
			o.printf("%s  %s\n", o.st.Title.Render(s.Path), o.st.Dim.Render(humanBytes(s.SizeBytes)+" · sha256 "+s.SHA256[:12]))
			o.printf("%s\n", strings.TrimRight(terminalSafe(s.Content), "\n"))
		} else {
			// a pipe gets the text as it is in the file
			o.printf("%s", s.Content)
		}
		if s.Truncated {
			o.note("%s is %s; only the first %s were returned (truncated)", s.Path, humanBytes(s.SizeBytes), humanBytes(ops.MaxSourceRead))
		}
		return nil
	}
	renderers["source.list"] = func(o *output, v any) error {
		l := v.(*ops.ListSourcesOut)
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
				if s.CitedByCount > 1 {
					cited += fmt.Sprintf(" +%d", s.CitedByCount-1)
				}
			}
			rows = append(rows, []string{s.State, s.Path, size, orDash(s.LastChanged), cited})
		}
		state := fixedCol("STATE")
		state.style = o.stateStyle
		o.table([]col{state, flexCol("PATH"), numCol("SIZE"), fixedCol("LAST CHANGED"), flexCol("CITED BY")}, rows)
		c := l.Counts
		n := c.New + c.Changed + c.Missing + c.Ingested
		noun := "sources"
		if n == 1 {
			noun = "source"
		}
		o.note("%d %s: %d new, %d changed, %d missing, %d ingested; last scan %s", n, noun, c.New, c.Changed, c.Missing, c.Ingested, orDash(l.LastScan))
		if len(l.Sources) < l.Total {
			o.note("%d of %d matching sources shown (use --limit and --offset for more)", len(l.Sources), l.Total)
		}
		return nil
	}
}

// stateStyle colours a source state on a terminal.
func (o *output) stateStyle(state string) lipgloss.Style {
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
