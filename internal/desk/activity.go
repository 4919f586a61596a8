package desk

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// activity is the activity view: what changed recently — pages written
// and review decisions — newest first, with the diff of a write and a
// restore of the revision before it.
type activity struct {
	gen     int
	loaded  bool
	entries []entry
	err     error
	cursor  int
	top     int
	diff    viewport.Model
	diffFor string // key of the entry whose diff is shown
	diffErr error
}

// entry is one line of the activity view.
type entry struct {
	kind   string // "write" or "decision"
	when   string // RFC 3339 or a date
	title  string // the page, or the item's title
	detail string // the operation, or the decision and its outcome
	page   string // the page's path or title (writes)
	rev    int    // the revision written (0: unknown)
}

func (e entry) key() string { return e.kind + "|" + e.when + "|" + e.page + "|" + e.title }

type activityMsg struct {
	gen     int
	entries []entry
	err     error
}

type diffMsg struct {
	key  string
	text string
	err  error
}

type restoredMsg struct {
	text string
	err  error
}

func newActivity() activity { return activity{diff: viewport.New(80, 10)} }

// load reads the recent activity.
func (a *activity) load(m *Model) tea.Cmd {
	a.gen++
	gen, src := a.gen, activitySource{ctx: m.ctx, c: m.o.Caller}
	return func() tea.Msg {
		es, err := src.recent()
		return activityMsg{gen: gen, entries: es, err: err}
	}
}

func (a *activity) resize(m *Model) tea.Cmd {
	a.diff.Width = m.width
	return nil
}

func (a *activity) update(m *Model, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case activityMsg:
		if msg.gen != a.gen {
			return nil
		}
		a.loaded, a.err = true, msg.err
		if msg.err == nil {
			a.entries = msg.entries
		}
		a.cursor = min(a.cursor, max(0, len(a.entries)-1))
		return a.loadDiff(m)
	case diffMsg:
		if e := a.current(); e != nil && e.key() == msg.key {
			a.diffFor, a.diffErr = msg.key, msg.err
			a.diff.SetContent(colourDiff(m, msg.text))
			a.diff.GotoTop()
		}
	case restoredMsg:
		m.setStatus(msg.text, msg.err)
		return a.load(m)
	}
	return nil
}

func (a *activity) current() *entry {
	if a.cursor < 0 || a.cursor >= len(a.entries) {
		return nil
	}
	return &a.entries[a.cursor]
}

// loadDiff reads the diff of the write under the cursor.
func (a *activity) loadDiff(m *Model) tea.Cmd {
	e := a.current()
	if e == nil || e.kind != "write" || e.key() == a.diffFor {
		return nil
	}
	k, en := e.key(), *e
	src := activitySource{ctx: m.ctx, c: m.o.Caller}
	return func() tea.Msg {
		text, err := src.diff(en)
		return diffMsg{key: k, text: text, err: err}
	}
}

func (a *activity) key(m *Model, msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Up):
		a.cursor = max(0, a.cursor-1)
	case key.Matches(msg, k.Down):
		a.cursor = min(len(a.entries)-1, a.cursor+1)
	case key.Matches(msg, k.Top):
		a.cursor = 0
	case key.Matches(msg, k.Bottom):
		a.cursor = len(a.entries) - 1
	case key.Matches(msg, k.PageDown), key.Matches(msg, k.PageUp):
		var cmd tea.Cmd
		a.diff, cmd = a.diff.Update(msg)
		return cmd
	case key.Matches(msg, k.Open):
		if e := a.current(); e != nil && e.page != "" {
			m.back = viewActivity
			m.view = viewPage
			return m.pg.open(m, e.page)
		}
	case key.Matches(msg, k.Undo):
		return a.askRestore(m)
	}
	return a.loadDiff(m)
}

// askRestore asks to write back the revision before the write under the
// cursor.
func (a *activity) askRestore(m *Model) tea.Cmd {
	e := a.current()
	if e == nil || e.kind != "write" {
		m.setStatus("u restores a page written: move to a write", nil)
		return nil
	}
	src, en := activitySource{ctx: m.ctx, c: m.o.Caller}, *e
	m.ask(fmt.Sprintf("Restore %q to the revision before this write? The restore is itself a revision.", ellipsis(en.title, 40)),
		func() tea.Msg {
			text, err := src.restore(en)
			return restoredMsg{text: text, err: err}
		})
	return nil
}

func (a *activity) view(m *Model, h int) string {
	switch {
	case !a.loaded:
		return "  reading the activity…"
	case a.err != nil:
		return "  " + m.st.Error.Render(errText(a.err))
	}
	listH := max(3, h*2/5)
	var b strings.Builder
	b.WriteString(m.st.Title.Render(fmt.Sprintf("  %d recent changes, newest first", len(a.entries))) + "\n")
	if a.cursor < a.top {
		a.top = a.cursor
	}
	if a.cursor >= a.top+listH-1 {
		a.top = a.cursor - listH + 2
	}
	for i := a.top; i < min(len(a.entries), a.top+listH-1); i++ {
		b.WriteString(a.row(m, i) + "\n")
	}
	out := fit(b.String(), m.width, listH) + "\n" + m.st.Border.Render(strings.Repeat("─", m.width)) + "\n"
	rest := h - listH - 1
	e := a.current()
	switch {
	case e == nil:
		return out
	case e.kind == "decision":
		return out + wrapBlock(e.title+"\n"+e.detail, m.width)
	case a.diffErr != nil && a.diffFor == e.key():
		return out + m.st.Error.Render(errText(a.diffErr))
	}
	a.diff.Width, a.diff.Height = m.width, rest
	return out + a.diff.View()
}

func (a *activity) row(m *Model, i int) string {
	e := a.entries[i]
	mark := "  "
	if i == a.cursor {
		mark = "> "
	}
	line := fmt.Sprintf("%s%-16s %-8s %s  %s", mark, shortTime(e.when), e.kind, e.title, m.st.Dim.Render(e.detail))
	line = ansi.Truncate(line, m.width, "…")
	if i == a.cursor {
		return m.st.Cursor.Render(line)
	}
	return line
}

// shortTime is "2026-03-01 09:00" from RFC 3339 (a date stays a date).
func shortTime(s string) string {
	s = strings.Replace(s, "T", " ", 1)
	return s[:min(len(s), 16)]
}

func wrapBlock(text string, w int) string { return strings.Join(wrap(text, w), "\n") }

// colourDiff colours a unified diff's added and removed lines.
func colourDiff(m *Model, text string) string {
	lines := strings.Split(strings.TrimRight(plain(text), "\n"), "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "@@"):
			lines[i] = m.st.Dim.Render(l)
		case strings.HasPrefix(l, "+"):
			lines[i] = m.st.Added.Render(l)
		case strings.HasPrefix(l, "-"):
			lines[i] = m.st.Removed.Render(l)
		}
	}
	return strings.Join(lines, "\n")
}
