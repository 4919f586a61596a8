package desk

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/synapse-wiki/synapse/errs"
)

// view is one screen of the desk.
type view int

const (
	viewQueue    view = iota // the pending items
	viewItem                 // one item with its whole context
	viewActivity             // recent writes and decisions
	viewPage                 // a page rendered for reading
)

// Model is the desk's state; bubbletea runs it.
type Model struct {
	ctx  context.Context
	o    Options
	st   Styles
	keys keyMap

	width, height int
	view          view
	back          view // where esc leaves the page view for

	q    queue
	item itemView
	pg   pageView
	act  activity

	confirm *confirmation
	help    bool
	status  string
	bad     bool // status is an error
	stamp   string
}

// confirmation is a final decision waiting for y or n.
type confirmation struct {
	prompt string
	run    tea.Cmd
}

// statusMsg sets the status line.
type statusMsg struct {
	text string
	err  error
}

// tickMsg polls the store's stamp.
type tickMsg struct{}

// New returns the desk's model; Run runs it.
func New(ctx context.Context, o Options) *Model {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Caller = safeCaller{o.Caller}
	out := o.Output
	if out == nil {
		out = os.Stdout
	}
	m := &Model{ctx: ctx, o: o, st: NewStyles(out, o.Plain), keys: newKeyMap(), width: 80, height: 24}
	m.q = newQueue()
	m.act = newActivity()
	if o.Stamp != nil {
		m.stamp = o.Stamp()
	}
	return m
}

// Init loads the first page of the queue and starts polling.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.loadQueue(), m.tick())
}

func (m *Model) tick() tea.Cmd {
	if m.o.Stamp == nil {
		return nil
	}
	return tea.Tick(m.o.Poll, func(time.Time) tea.Msg { return tickMsg{} })
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 6)
		return m, tea.Batch(m.q.ensure(m), m.pg.resize(m), m.item.resize(m), m.act.resize(m))
	case tea.KeyMsg:
		return m, m.onKeys(msg)
	case tea.MouseMsg:
		return m, m.onMouse(msg)
	case tickMsg:
		return m, m.onTick()
	case statusMsg:
		m.setStatus(msg.text, msg.err)
		return m, nil
	}
	return m, m.route(msg)
}

// route hands a view's own messages to it.
func (m *Model) route(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case queueMsg, showMsg, showTimerMsg:
		return m.q.update(m, msg)
	case decidedMsg:
		return m.onDecided(msg)
	case pageMsg, renderedMsg:
		return m.pg.update(m, msg)
	case activityMsg, diffMsg, restoredMsg:
		return m.act.update(m, msg)
	}
	if m.q.filtering {
		var cmd tea.Cmd
		m.q.input, cmd = m.q.input.Update(msg) // the cursor's blink
		return cmd
	}
	return nil
}

// onTick reloads what is shown when the store changed since the last
// look (a write by the agent, a server, another command).
func (m *Model) onTick() tea.Cmd {
	s := m.o.Stamp()
	if s == m.stamp {
		return m.tick()
	}
	m.stamp = s
	return tea.Batch(m.tick(), m.reload())
}

// reload refreshes every view from the store.
func (m *Model) reload() tea.Cmd {
	cmds := []tea.Cmd{m.q.refresh(m)}
	if m.view == viewActivity {
		cmds = append(cmds, m.act.load(m))
	}
	if m.view == viewPage && m.pg.out != nil {
		cmds = append(cmds, m.pg.reload(m))
	}
	return tea.Batch(cmds...)
}

func (m *Model) setStatus(text string, err error) {
	m.status, m.bad = text, err != nil
	if err != nil {
		m.status = errText(err)
		if text != "" {
			m.status = text + ": " + m.status
		}
	}
}

// errText is an error as the person should read it: the domain message
// without its code.
func errText(err error) string {
	if msg := errs.Message(err); msg != "" {
		return msg
	}
	return err.Error()
}

// onKeys handles a key message. Keys typed faster than they are read
// (a held j, a slow machine) arrive as one message of several runes: each
// is a key of its own, except in the filter's text.
func (m *Model) onKeys(msg tea.KeyMsg) tea.Cmd {
	if msg.Type != tea.KeyRunes || len(msg.Runes) < 2 || m.view == viewQueue && m.q.filtering {
		return m.onKey(msg)
	}
	var cmds []tea.Cmd
	for i, r := range msg.Runes {
		if m.view == viewQueue && m.q.filtering { // the rest is the filter's text
			cmds = append(cmds, m.q.filterKey(m, tea.KeyMsg{Type: tea.KeyRunes, Runes: msg.Runes[i:]}))
			break
		}
		cmds = append(cmds, m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}))
	}
	return tea.Batch(cmds...)
}

func (m *Model) onKey(msg tea.KeyMsg) tea.Cmd {
	if m.confirm != nil {
		return m.onConfirmKey(msg)
	}
	if m.view == viewQueue && m.q.filtering {
		return m.q.filterKey(m, msg)
	}
	if m.help {
		if key.Matches(msg, m.keys.Quit) && msg.String() == "ctrl+c" {
			return tea.Quit
		}
		m.help = false
		return nil
	}
	switch {
	case key.Matches(msg, m.keys.Quit):
		return tea.Quit
	case key.Matches(msg, m.keys.Help):
		m.help = true
		return nil
	case key.Matches(msg, m.keys.Queue):
		m.view = viewQueue
		return m.q.ensure(m)
	case key.Matches(msg, m.keys.Activity):
		m.view = viewActivity
		return m.act.load(m)
	case key.Matches(msg, m.keys.Page):
		return m.showPage()
	case key.Matches(msg, m.keys.Refresh):
		return m.reload()
	}
	m.status, m.bad = "", false
	switch m.view {
	case viewItem:
		return m.item.key(m, msg)
	case viewPage:
		return m.pg.key(m, msg)
	case viewActivity:
		return m.act.key(m, msg)
	}
	return m.q.key(m, msg)
}

// showPage switches to the page view: the page last read, else the page
// the current item is about.
func (m *Model) showPage() tea.Cmd {
	if m.view != viewPage {
		m.back = m.view
	}
	m.view = viewPage
	if m.pg.out != nil || m.pg.loading {
		return nil
	}
	if it := m.q.current(); it != nil {
		if name := itemPage(it, m.q.shows[it.ID]); name != "" {
			return m.pg.open(m, name)
		}
	}
	return nil
}

func (m *Model) onConfirmKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "y", "Y":
		run := m.confirm.run
		m.confirm = nil
		m.setStatus("working…", nil)
		return run
	case "n", "N", "esc", "q":
		m.confirm = nil
		m.setStatus("nothing was changed", nil)
	case "ctrl+c":
		return tea.Quit
	}
	return nil
}

// ask puts a final decision to the person: run runs on y.
func (m *Model) ask(prompt string, run tea.Cmd) {
	m.confirm = &confirmation{prompt: prompt, run: run}
}

func (m *Model) onMouse(msg tea.MouseMsg) tea.Cmd {
	if msg.Action != tea.MouseActionPress {
		return nil
	}
	var k tea.KeyMsg
	switch msg.Button {
	case tea.MouseButtonWheelUp:
		k = tea.KeyMsg{Type: tea.KeyUp}
	case tea.MouseButtonWheelDown:
		k = tea.KeyMsg{Type: tea.KeyDown}
	case tea.MouseButtonLeft:
		if m.view == viewQueue && m.confirm == nil {
			return m.q.click(m, msg.Y)
		}
		return nil
	default:
		return nil
	}
	if m.confirm != nil || m.help {
		return nil
	}
	return m.onKey(k)
}

// View draws the screen: the tabs, the current view, the status line.
func (m *Model) View() string {
	body := m.height - 2
	var main string
	switch {
	case m.help:
		main = m.helpView(body)
	case m.view == viewItem:
		main = m.item.view(m, body)
	case m.view == viewPage:
		main = m.pg.view(m, body)
	case m.view == viewActivity:
		main = m.act.view(m, body)
	default:
		main = m.q.view(m, body)
	}
	return m.tabs() + "\n" + fit(main, m.width, body) + "\n" + m.footer()
}

// tabs is the top line: the views, with the queue's count.
func (m *Model) tabs() string {
	names := []struct {
		v    view
		name string
	}{{viewQueue, fmt.Sprintf("1 Queue (%s)", m.q.countText())}, {viewActivity, "2 Activity"}, {viewPage, "3 Page"}}
	var parts []string
	for _, n := range names {
		on := m.view == n.v || n.v == viewQueue && m.view == viewItem
		switch {
		case on && m.st.Plain:
			parts = append(parts, "["+n.name+"]")
		case on:
			parts = append(parts, m.st.TabOn.Render(n.name))
		default:
			parts = append(parts, m.st.Tab.Render(" "+n.name+" "))
		}
	}
	line := strings.Join(parts, " ")
	hint := "? help  q quit"
	if pad := m.width - ansi.StringWidth(line) - len(hint); pad > 0 {
		line += strings.Repeat(" ", pad) + m.st.Dim.Render(hint)
	}
	return ansi.Truncate(line, m.width, "")
}

// footer is the bottom line: a question, the status, or the keys.
func (m *Model) footer() string {
	var line string
	switch {
	case m.confirm != nil:
		// the keys stay on screen however long the question (a stub's path)
		line = m.st.Prompt.Render(ansi.Truncate(m.confirm.prompt, m.width-len(" [y/n]"), "…") + " [y/n]")
	case m.status != "" && m.bad:
		line = m.st.Error.Render(m.status)
	case m.status != "":
		line = m.st.OK.Render(m.status)
	default:
		line = m.st.Dim.Render(m.hints())
	}
	return ansi.Truncate(line, m.width, "…")
}

// hints are the keys of the current view, in one line.
func (m *Model) hints() string {
	switch {
	case m.help:
		return "any key: close help"
	case m.view == viewItem:
		return "c r s d decide · tab next page · enter read it · j/k scroll · esc back"
	case m.view == viewPage:
		return "j/k scroll · tab/n next link · enter follow · esc back · 1 queue"
	case m.view == viewActivity:
		return "j/k move · pgup/pgdn diff · enter read page · u restore previous · 1 queue"
	case m.q.filtering:
		return "type:T origin:O words (empty: all) · enter apply · esc cancel"
	}
	return "j/k move · enter open · space select · c r s d decide · / filter · ? keys"
}

// fit pads or cuts text to exactly h lines of exactly w cells.
func fit(text string, w, h int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	for i, l := range lines {
		l = ansi.Truncate(l, w, "")
		lines[i] = l + strings.Repeat(" ", max(0, w-ansi.StringWidth(l)))
	}
	return strings.Join(lines, "\n")
}

// helpView lists every key, in two columns when one does not fit.
func (m *Model) helpView(h int) string {
	k := m.keys
	groups := []struct {
		title string
		keys  []key.Binding
	}{
		{"Move", []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}},
		{"Queue", []key.Binding{k.Open, k.Select, k.SelectAll, k.Filter, k.Back}},
		{"Decide (asks y/n: final)", []key.Binding{k.Create, k.Resolve, k.Skip, k.Dismiss, k.Deep}},
		{"Views", []key.Binding{k.Queue, k.Activity, k.Page, k.NextLink, k.PrevLink, k.Undo, k.Refresh, k.Help, k.Quit}},
	}
	var blocks []string
	for _, g := range groups {
		lines := []string{m.st.Heading.Render(g.title)}
		for _, kb := range g.keys {
			lines = append(lines, fmt.Sprintf("  %-12s %s", kb.Help().Key, kb.Help().Desc))
		}
		blocks = append(blocks, strings.Join(lines, "\n"))
	}
	notes := "A selection (space) makes c r s d R act on every selected item.\n" +
		"Filter (/): type:missing-page origin:lint and any words."
	one := strings.Join(blocks, "\n\n")
	if strings.Count(one, "\n")+4 <= h || m.width < 76 {
		return one + "\n\n" + notes
	}
	half := (len(blocks) + 1) / 2
	left := strings.Join(blocks[:half], "\n\n")
	right := strings.Join(blocks[half:], "\n\n")
	rows := max(strings.Count(left, "\n"), strings.Count(right, "\n")) + 1
	return joinColumns(fit(left, 38, rows), fit(right, m.width-38, rows)) + "\n\n" + notes
}
