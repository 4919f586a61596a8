package desk

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/synapse-wiki/synapse/ops"
)

// chunk is how many items one read of the queue brings (list_reviews'
// largest page): the queue is read a chunk at a time around what is on
// screen, never whole.
const chunk = 100

// showDelay is how long the cursor rests on an item before its context
// is read (scrolling fast reads none of the items passed).
const showDelay = 80 * time.Millisecond

// filter selects the items the queue shows.
type filter struct {
	Type, Origin, Text string
}

func (f filter) String() string {
	var parts []string
	if f.Type != "" {
		parts = append(parts, "type:"+f.Type)
	}
	if f.Origin != "" {
		parts = append(parts, "origin:"+f.Origin)
	}
	if f.Text != "" {
		parts = append(parts, f.Text)
	}
	return strings.Join(parts, " ")
}

// parseFilter reads "type:T origin:O words…".
func parseFilter(s string) filter {
	var f filter
	var words []string
	for _, w := range strings.Fields(s) {
		switch {
		case strings.HasPrefix(w, "type:"):
			f.Type = strings.TrimPrefix(w, "type:")
		case strings.HasPrefix(w, "origin:"):
			f.Origin = strings.TrimPrefix(w, "origin:")
		default:
			words = append(words, w)
		}
	}
	f.Text = strings.Join(words, " ")
	return f
}

// queue is the queue view: a window over the pending items, read from
// the store a chunk at a time.
type queue struct {
	f       filter
	total   int
	loaded  bool // the first read answered
	gen     int  // bumped by every refresh; answers of older reads are dropped
	rows    map[int][]ops.ReviewItem
	rowGen  map[int]int
	loading map[int]int // chunk → gen of the read in flight
	err     error

	cursor, top int
	sel         map[string]bool
	selOrder    []string
	shows       map[string]*ops.ShowReviewOut // contexts read; shown until read again
	showGen     map[string]int                // the gen each was read in
	showErr     map[string]error
	showSeq     int

	filtering bool
	input     textinput.Model
}

type queueMsg struct {
	gen, chunk int
	out        *ops.ListReviewsOut
	err        error
}

type showMsg struct {
	id  string
	gen int
	out *ops.ShowReviewOut
	err error
}

// maxShows bounds the contexts kept.
const maxShows = 256

type showTimerMsg struct{ seq int }

func newQueue() queue {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = "type:missing-page origin:lint words"
	in.CharLimit = 200
	return queue{rows: map[int][]ops.ReviewItem{}, rowGen: map[int]int{}, loading: map[int]int{},
		sel: map[string]bool{}, shows: map[string]*ops.ShowReviewOut{}, showGen: map[string]int{}, showErr: map[string]error{}, input: in}
}

// loadQueue reads the first chunk (Init).
func (m *Model) loadQueue() tea.Cmd { return m.q.load(m, 0) }

// load reads chunk c of the queue with the current filter.
func (q *queue) load(m *Model, c int) tea.Cmd {
	if g, ok := q.loading[c]; ok && g == q.gen {
		return nil
	}
	q.loading[c] = q.gen
	gen, f, ctx, caller := q.gen, q.f, m.ctx, m.o.Caller
	return func() tea.Msg {
		in := map[string]any{"status": "pending", "limit": chunk, "offset": c * chunk}
		for k, v := range map[string]string{"type": f.Type, "origin": f.Origin, "text": f.Text} {
			if v != "" {
				in[k] = v
			}
		}
		out, err := call[ops.ListReviewsOut](ctx, caller, "review.list", in)
		return queueMsg{gen: gen, chunk: c, out: out, err: err}
	}
}

// bodyRows is how many list rows the queue view shows.
func (q *queue) listRows(m *Model) int {
	if m.width >= wide {
		return m.height - 4
	}
	return max(3, (m.height-2)*2/5-1)
}

// ensure reads the chunks on screen that are not read yet (or are older
// than the last refresh) and keeps the cursor on screen.
func (q *queue) ensure(m *Model) tea.Cmd {
	n := q.listRows(m)
	if q.cursor < q.top {
		q.top = q.cursor
	}
	if q.cursor >= q.top+n {
		q.top = q.cursor - n + 1
	}
	if !q.loaded {
		return nil
	}
	var cmds []tea.Cmd
	// the chunks on screen, and the next (or previous) one when the screen
	// comes near it, so that scrolling on finds it read
	from := max(0, (q.top-prefetch)/chunk)
	to := min(q.top+n+prefetch, q.total) - 1
	for c := from; c <= max(to, q.top)/chunk && c*chunk < max(q.total, 1); c++ {
		if _, ok := q.rows[c]; !ok || q.rowGen[c] != q.gen {
			cmds = append(cmds, q.load(m, c))
		}
	}
	return tea.Batch(cmds...)
}

// keptChunks is how many chunks on either side of the screen stay read.
const keptChunks = 2

// prefetch is how near (in items) the screen comes to an unread chunk
// before it is read.
const prefetch = 30

// refresh reads again what is on screen, keeping the cursor's place: the
// rows shown stay until their new reading arrives.
func (q *queue) refresh(m *Model) tea.Cmd {
	q.gen++
	clear(q.showErr)
	if !q.loaded {
		return q.load(m, 0)
	}
	return tea.Batch(q.ensure(m), q.loadShow(m))
}

// reset applies a new filter: the queue is read from its start, and the
// selection is cleared (a decision never acts on items the filter hides).
func (q *queue) reset(m *Model, f filter) tea.Cmd {
	q.f = f
	q.clearSelection()
	q.gen++
	q.loaded = false
	clear(q.rows)
	clear(q.rowGen)
	q.cursor, q.top, q.total = 0, 0, 0
	return q.load(m, 0)
}

func (q *queue) update(m *Model, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case queueMsg:
		return q.onLoaded(m, msg)
	case showMsg:
		q.onShow(m, msg)
	case showTimerMsg:
		if msg.seq == q.showSeq {
			return q.loadShow(m)
		}
	}
	return nil
}

func (q *queue) onLoaded(m *Model, msg queueMsg) tea.Cmd {
	if g, ok := q.loading[msg.chunk]; ok && g == msg.gen {
		delete(q.loading, msg.chunk)
	}
	if msg.gen != q.gen {
		return nil
	}
	if msg.err != nil {
		q.err = msg.err
		m.setStatus("reading the queue", msg.err)
		return nil
	}
	q.err = nil
	first := !q.loaded
	q.loaded = true
	q.total = msg.out.Total
	q.rows[msg.chunk] = msg.out.Items
	q.rowGen[msg.chunk] = msg.gen
	here := q.top / chunk
	for c := range q.rows {
		old := q.rowGen[c] != q.gen && (c < (q.top-prefetch)/chunk || c > (q.top+q.listRows(m)+prefetch)/chunk)
		if old || c < here-keptChunks || c > here+keptChunks {
			delete(q.rows, c) // an old reading off screen, or one far away: memory stays bounded
			delete(q.rowGen, c)
		}
	}
	if q.cursor >= q.total {
		q.cursor = max(0, q.total-1)
	}
	cmd := q.ensure(m)
	if first {
		return tea.Batch(cmd, q.loadShow(m))
	}
	return cmd
}

// current is the item under the cursor, or nil (none, or not read yet).
func (q *queue) current() *ops.ReviewItem { return q.at(q.cursor) }

func (q *queue) at(i int) *ops.ReviewItem {
	rows, ok := q.rows[i/chunk]
	if !ok || i < 0 || i%chunk >= len(rows) {
		return nil
	}
	return &rows[i%chunk]
}

// loadShow reads the context of the item under the cursor.
func (q *queue) loadShow(m *Model) tea.Cmd {
	if it := q.current(); it != nil {
		return q.readShow(m, it.ID)
	}
	return nil
}

// readShow reads item id's context (review show) unless it has been read
// since the last refresh.
func (q *queue) readShow(m *Model, id string) tea.Cmd {
	if _, ok := q.shows[id]; ok && q.showGen[id] == q.gen {
		return nil
	}
	gen, ctx, caller := q.gen, m.ctx, m.o.Caller
	return func() tea.Msg {
		out, err := call[ops.ShowReviewOut](ctx, caller, "review.show", map[string]string{"id": id})
		return showMsg{id: id, gen: gen, out: out, err: err}
	}
}

func (q *queue) onShow(m *Model, msg showMsg) {
	if msg.err != nil {
		q.showErr[msg.id] = msg.err
		delete(q.shows, msg.id)
	} else {
		if len(q.shows) >= maxShows {
			clear(q.shows) // the one on screen is read again when needed
			clear(q.showGen)
		}
		q.shows[msg.id], q.showGen[msg.id] = msg.out, msg.gen
		delete(q.showErr, msg.id)
	}
	m.item.refit(m)
}

// move puts the cursor at i and schedules the reads it needs.
func (q *queue) move(m *Model, i int) tea.Cmd {
	q.cursor = max(0, min(i, q.total-1))
	q.showSeq++
	seq := q.showSeq
	return tea.Batch(q.ensure(m), tea.Tick(showDelay, func(time.Time) tea.Msg { return showTimerMsg{seq: seq} }))
}

func (q *queue) key(m *Model, msg tea.KeyMsg) tea.Cmd {
	k, page := m.keys, q.listRows(m)
	switch {
	case key.Matches(msg, k.Up):
		return q.move(m, q.cursor-1)
	case key.Matches(msg, k.Down):
		return q.move(m, q.cursor+1)
	case key.Matches(msg, k.PageUp):
		return q.move(m, q.cursor-page)
	case key.Matches(msg, k.PageDown):
		return q.move(m, q.cursor+page)
	case key.Matches(msg, k.Top):
		return q.move(m, 0)
	case key.Matches(msg, k.Bottom):
		return q.move(m, q.total-1)
	case key.Matches(msg, k.Select):
		q.toggle(q.current())
		return q.move(m, q.cursor+1)
	case key.Matches(msg, k.SelectAll):
		q.selectScreen(m)
	case key.Matches(msg, k.Back):
		q.clearSelection()
	case key.Matches(msg, k.Filter):
		q.filtering = true
		q.input.SetValue(q.f.String())
		q.input.CursorEnd()
		return q.input.Focus()
	case key.Matches(msg, k.Open):
		if it := q.current(); it != nil {
			return m.item.open(m, it.ID)
		}
	default:
		return m.decideKey(msg, q.targets())
	}
	return nil
}

func (q *queue) click(m *Model, y int) tea.Cmd {
	row := y - 2 // below the tabs and the column heads
	if row < 0 || row >= q.listRows(m) {
		return nil
	}
	return q.move(m, q.top+row)
}

func (q *queue) toggle(it *ops.ReviewItem) {
	if it == nil {
		return
	}
	if q.sel[it.ID] {
		delete(q.sel, it.ID)
		q.selOrder = slices.DeleteFunc(q.selOrder, func(id string) bool { return id == it.ID })
		return
	}
	q.sel[it.ID] = true
	q.selOrder = append(q.selOrder, it.ID)
}

// selectScreen selects the items on screen, or clears the selection when
// they all are selected.
func (q *queue) selectScreen(m *Model) {
	var ids []string
	for i := q.top; i < min(q.top+q.listRows(m), q.total); i++ {
		if it := q.at(i); it != nil {
			ids = append(ids, it.ID)
		}
	}
	if !slices.ContainsFunc(ids, func(id string) bool { return !q.sel[id] }) {
		q.clearSelection()
		return
	}
	for _, id := range ids {
		if !q.sel[id] {
			q.sel[id] = true
			q.selOrder = append(q.selOrder, id)
		}
	}
}

func (q *queue) clearSelection() {
	clear(q.sel)
	q.selOrder = nil
}

// targets are the items a decision acts on: the selection, else the item
// under the cursor.
func (q *queue) targets() []target {
	if len(q.selOrder) > 0 {
		out := make([]target, 0, len(q.selOrder))
		for _, id := range q.selOrder {
			out = append(out, target{id: id})
		}
		return out
	}
	if it := q.current(); it != nil {
		return []target{{id: it.ID, item: it, show: q.shows[it.ID]}}
	}
	return nil
}

func (q *queue) filterKey(m *Model, msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "enter":
		q.filtering = false
		q.input.Blur()
		return q.reset(m, parseFilter(q.input.Value()))
	case "esc":
		q.filtering = false
		q.input.Blur()
		return nil
	case "ctrl+c":
		return tea.Quit
	}
	var cmd tea.Cmd
	q.input, cmd = q.input.Update(msg)
	return cmd
}

// countText is the queue's count for the tab: "12", "3 of 12 selected"…
func (q *queue) countText() string {
	switch {
	case !q.loaded:
		return "…"
	case len(q.sel) > 0:
		return fmt.Sprintf("%d, %d selected", q.total, len(q.sel))
	}
	return fmt.Sprint(q.total)
}

// wide is the width from which the context stands beside the list.
const wide = 120

func (q *queue) view(m *Model, h int) string {
	if m.width >= wide {
		lw := m.width * 2 / 5
		list := fit(q.listView(m, lw, h), lw, h)
		side := fit(q.contextView(m, m.width-lw-3, h), m.width-lw-3, h)
		sep := strings.TrimSuffix(strings.Repeat(m.st.Border.Render(" │ ")+"\n", h), "\n")
		return joinColumns(list, sep, side)
	}
	n := q.listRows(m) + 1
	return fit(q.listView(m, m.width, n), m.width, n) + "\n" +
		m.st.Border.Render(strings.Repeat("─", m.width)) + "\n" + q.contextView(m, m.width, h-n-1)
}

// joinColumns puts blocks of equal height side by side.
func joinColumns(cols ...string) string {
	split := make([][]string, len(cols))
	for i, c := range cols {
		split[i] = strings.Split(c, "\n")
	}
	var b strings.Builder
	for r := range split[0] {
		for _, c := range split {
			if r < len(c) {
				b.WriteString(c[r])
			}
		}
		if r < len(split[0])-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func (q *queue) listView(m *Model, w, h int) string {
	var b strings.Builder
	head := "  " + q.headText()
	if q.filtering {
		q.input.Width = w - 4
		head = q.input.View()
	}
	b.WriteString(m.st.Title.Render(ansi.Truncate(head, w, "…")) + "\n")
	switch {
	case q.err != nil && !q.loaded:
		b.WriteString("  " + m.st.Error.Render(errText(q.err)) + "\n")
	case !q.loaded:
		b.WriteString("  reading the queue…\n")
	case q.total == 0 && q.f != (filter{}):
		b.WriteString("  no pending item matches the filter (/ to change it)\n")
	case q.total == 0:
		b.WriteString("  the queue is empty: nothing waits for a decision\n")
	}
	for i := q.top; i < min(q.top+h-1, q.total); i++ {
		b.WriteString(q.row(m, i, w) + "\n")
	}
	return b.String()
}

func (q *queue) headText() string {
	t := fmt.Sprintf("%d pending", q.total)
	if q.f != (filter{}) {
		t += " matching " + q.f.String()
	}
	if q.loaded && q.total > 0 {
		t += fmt.Sprintf(" · %d/%d", q.cursor+1, q.total)
	}
	return t
}

// row draws item i: cursor, selection mark, id, type, origin, title.
func (q *queue) row(m *Model, i, w int) string {
	it := q.at(i)
	mark := "  "
	if i == q.cursor {
		mark = "> "
	}
	if it == nil {
		return mark + m.st.Dim.Render("…")
	}
	sel := "[ ]"
	if q.sel[it.ID] {
		sel = "[x]"
	}
	line := fmt.Sprintf("%s%s %-6s %-13s %-5s %s", mark, sel, it.ID, ansi.Truncate(it.Type, 13, "…"), it.Origin, it.Title)
	line = ansi.Truncate(line, w, "…")
	switch {
	case i == q.cursor:
		return m.st.Cursor.Render(line + strings.Repeat(" ", max(0, w-ansi.StringWidth(line))))
	case q.sel[it.ID]:
		return m.st.Selected.Render(line)
	}
	return line
}

// contextView is the context of the item under the cursor.
func (q *queue) contextView(m *Model, w, h int) string {
	it := q.current()
	if it == nil {
		return ""
	}
	if err := q.showErr[it.ID]; err != nil {
		return itemHead(m, it, w) + "\n" + m.st.Error.Render(errText(err))
	}
	return strings.Join(contextLines(m, it, q.shows[it.ID], w, ""), "\n")
}
