package render

import (
	"fmt"
	"os"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/mattn/go-runewidth"
	"golang.org/x/term"
)

// col is one column of a table. Fixed columns (ids, counts, types,
// states, dates) are never cut or wrapped; flexible ones (titles, paths,
// snippets) share what the terminal width leaves and are cut with "…".
// A column of lesser use may be dropped on a narrow terminal rather than
// squeeze the flexible ones. Pipes get every column and value in full.
type col struct {
	head  string
	flex  bool                          // may be cut to fit the terminal
	min   int                           // a flexible column's narrowest width (default 12)
	right bool                          // numbers: right-aligned
	left  bool                          // paths: cut on the left, keeping the end (file name, nearest folders)
	drop  int                           // > 0: dropped (lowest first) when a flexible column would get under comfortWidth
	style func(v string) lipgloss.Style // per-cell style on a terminal (states); nil: plain
}

// comfortWidth is the width under which a flexible column (a title) is
// hard to read: a table drops its droppable columns first.
const comfortWidth = 24

// Column constructors: the kinds of values tables hold.
func fixedCol(head string) col { return col{head: head} }
func numCol(head string) col   { return col{head: head, right: true} }
func flexCol(head string) col  { return col{head: head, flex: true} }
func pathCol(head string) col  { return col{head: head, flex: true, left: true} }

const ellipsis = "…"

// termWidth is the width tables fit: the terminal's, 80 when it cannot be
// told, or the width a test set.
func (o *Output) termWidth() int {
	if o.width > 0 {
		return o.width
	}
	if f, ok := o.w.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 20 {
			return w
		}
	}
	return 80
}

// table prints rows: on a terminal a bordered table sized to its content
// and cut to the terminal's width; in a pipe tab-separated lines with a
// header, every value whole.
func (o *Output) table(cols []col, rows [][]string) {
	if !o.tty {
		heads := make([]string, len(cols))
		for i, c := range cols {
			heads[i] = c.head
		}
		fmt.Fprintln(o.w, strings.Join(heads, "\t"))
		clean := strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")
		for _, r := range rows {
			cells := make([]string, len(r))
			for i, c := range r {
				cells[i] = clean.Replace(c)
			}
			fmt.Fprintln(o.w, strings.Join(cells, "\t"))
		}
		return
	}
	if len(rows) == 0 {
		// on a terminal an empty table is a box of headings around
		// nothing: the summary line after it says "no review items"
		return
	}
	cols, rows = dropColumns(cols, rows, o.termWidth())
	widths := fitWidths(cols, rows, o.termWidth())
	cut := make([][]string, len(rows))
	for i, r := range rows {
		cut[i] = make([]string, len(cols))
		for j := range cols {
			v := ""
			if j < len(r) {
				v = strings.Join(strings.Fields(r[j]), " ")
			}
			cut[i][j] = cutTo(v, widths[j], cols[j].left)
		}
	}
	heads := make([]string, len(cols))
	for j, c := range cols {
		heads[j] = runewidth.Truncate(c.head, widths[j], ellipsis)
	}
	t := table.New().
		Border(lipgloss.RoundedBorder()).
		BorderStyle(o.st.Dim).
		Headers(heads...).
		Rows(cut...).
		StyleFunc(func(row, j int) lipgloss.Style {
			var s lipgloss.Style
			switch {
			case row == table.HeaderRow:
				s = o.st.Header
			case cols[j].style != nil && row >= 0 && row < len(cut):
				s = cols[j].style(rows[row][j])
			default:
				s = o.r.NewStyle()
			}
			s = s.Padding(0, 1).Width(widths[j] + 2)
			if cols[j].right {
				s = s.Align(lipgloss.Right)
			}
			return s
		})
	fmt.Fprintln(o.w, t.Render())
}

// dropColumns leaves out droppable columns, lowest drop first, while a
// flexible column would be narrower than comfortWidth (and narrower than
// its content) at this width.
func dropColumns(cols []col, rows [][]string, width int) ([]col, [][]string) {
	for {
		widths := fitWidths(cols, rows, width)
		natural := fitWidths(cols, rows, 1<<20)
		squeezed := false
		for j, c := range cols {
			if c.flex && widths[j] < min(comfortWidth, natural[j]) {
				squeezed = true
			}
		}
		victim := -1
		for j, c := range cols {
			if c.drop > 0 && (victim < 0 || c.drop < cols[victim].drop) {
				victim = j
			}
		}
		if !squeezed || victim < 0 {
			return cols, rows
		}
		cols = append(cols[:victim:victim], cols[victim+1:]...)
		out := make([][]string, len(rows))
		for i, r := range rows {
			if victim < len(r) {
				r = append(r[:victim:victim], r[victim+1:]...)
			}
			out[i] = r
		}
		rows = out
	}
}

// fitWidths sizes each column to its widest cell (header included); when
// the table is wider than width, the flexible columns give way, the
// widest first, down to their minimum. Fixed columns keep their size.
func fitWidths(cols []col, rows [][]string, width int) []int {
	w := make([]int, len(cols))
	for j, c := range cols {
		w[j] = runewidth.StringWidth(c.head)
		for _, r := range rows {
			if j < len(r) {
				w[j] = max(w[j], runewidth.StringWidth(strings.Join(strings.Fields(r[j]), " ")))
			}
		}
	}
	// a rounded border: a bar left of every column and one at the end,
	// and a space either side of each cell
	frame := len(cols) + 1 + 2*len(cols)
	over := frame
	for _, x := range w {
		over += x
	}
	over -= width
	for over > 0 {
		// the widest flexible columns give way together, down to the
		// next narrower one (or their minimum): widths level out
		top := -1
		for j, c := range cols {
			if c.flex && w[j] > flexMin(c) && w[j] > top {
				top = w[j]
			}
		}
		if top < 0 {
			break // only fixed columns left: the table is as narrow as it goes
		}
		var at []int
		next := 0
		for j, c := range cols {
			switch {
			case !c.flex:
			case w[j] == top && w[j] > flexMin(c):
				at = append(at, j)
				next = max(next, flexMin(c))
			case w[j] < top:
				next = max(next, w[j])
			}
		}
		step := max(1, min(top-next, (over+len(at)-1)/len(at)))
		for _, j := range at {
			d := min(step, over)
			w[j] -= d
			over -= d
		}
	}
	return w
}

func flexMin(c col) int {
	m := c.min
	if m == 0 {
		m = 12
	}
	return max(m, runewidth.StringWidth(c.head))
}

// cutTo fits v into width display columns: cut at the end with "…", or
// on the left (paths: the shared folders give way, the end that tells
// one file from another stays: "…/clippings/an article.md").
func cutTo(v string, width int, left bool) string {
	if runewidth.StringWidth(v) <= width {
		return v
	}
	if !left {
		return runewidth.Truncate(v, width, ellipsis)
	}
	tail := width - runewidth.StringWidth(ellipsis)
	r := []rune(v)
	var end []rune
	for i := len(r) - 1; i >= 0 && runewidth.StringWidth(string(append([]rune{r[i]}, end...))) <= tail; i-- {
		end = append([]rune{r[i]}, end...)
	}
	return ellipsis + string(end)
}

// plural says "1 page", "2 pages".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
