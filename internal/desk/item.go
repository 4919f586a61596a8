package desk

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/synapse-wiki/synapse/ops"
)

// itemView is one item opened (enter) with its whole context, scrolled
// in a viewport; tab walks the pages it names and enter reads one.
type itemView struct {
	id   string
	vp   viewport.Model
	refs []string // the pages named in the context, in order
	sel  int      // the highlighted one
}

// open shows item id and reads its context if it is not read yet.
func (v *itemView) open(m *Model, id string) tea.Cmd {
	m.view = viewItem
	v.id, v.sel = id, 0
	v.vp = viewport.New(m.width, m.height-2)
	v.refit(m)
	return m.q.readShow(m, id)
}

func (v *itemView) resize(m *Model) tea.Cmd {
	v.refit(m)
	return nil
}

// refit draws the context into the viewport at the current size.
func (v *itemView) refit(m *Model) {
	if v.id == "" {
		return
	}
	v.vp.Width, v.vp.Height = m.width, m.height-2
	show := m.q.shows[v.id]
	if show == nil {
		text := "reading item " + v.id + "…"
		if err := m.q.showErr[v.id]; err != nil {
			text = m.st.Error.Render(errText(err))
		}
		v.vp.SetContent(text)
		return
	}
	v.refs = pageRefs(show)
	v.sel = min(v.sel, max(0, len(v.refs)-1))
	hl := ""
	if len(v.refs) > 0 {
		hl = v.refs[v.sel]
	}
	v.vp.SetContent(strings.Join(contextLines(m, &show.Item, show, m.width, hl), "\n"))
}

func (v *itemView) key(m *Model, msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	show := m.q.shows[v.id]
	switch {
	case key.Matches(msg, k.Back):
		m.view = viewQueue
		return m.q.ensure(m)
	case key.Matches(msg, k.NextLink), key.Matches(msg, k.PrevLink):
		if n := len(v.refs); n > 0 {
			step := 1
			if key.Matches(msg, k.PrevLink) {
				step = n - 1
			}
			v.sel = (v.sel + step) % n
			v.refit(m)
		}
		return nil
	case key.Matches(msg, k.Open):
		if v.sel < len(v.refs) {
			m.back = viewItem
			m.view = viewPage
			return m.pg.open(m, v.refs[v.sel])
		}
		return nil
	}
	if show != nil {
		if cmd := m.decideKey(msg, []target{{id: v.id, item: &show.Item, show: show}}); cmd != nil || actionOf(k, msg) != "" {
			return cmd
		}
	}
	var cmd tea.Cmd
	v.vp, cmd = v.vp.Update(msg)
	return cmd
}

func (v *itemView) view(m *Model, h int) string {
	v.vp.Height = h
	return v.vp.View()
}

// pageRefs are the pages an item's context names that can be read, in
// the order contextLines shows them.
func pageRefs(s *ops.ShowReviewOut) []string {
	var out []string
	for _, l := range s.Linkers {
		out = append(out, l.Path)
	}
	for _, p := range s.Pages {
		if p.Found {
			out = append(out, p.Path)
		}
	}
	return out
}

// itemPage is the page the page view opens for an item: the first page
// its context names, else the page it is about.
func itemPage(it *ops.ReviewItem, s *ops.ShowReviewOut) string {
	if s != nil {
		if refs := pageRefs(s); len(refs) > 0 {
			return refs[0]
		}
	}
	return it.Page
}

// itemHead is the first line of an item's context.
func itemHead(m *Model, it *ops.ReviewItem, w int) string {
	head := fmt.Sprintf("%s  %s  from %s  %s", it.ID, it.Type, it.Origin, dateOf(it.CreatedAt))
	if it.Status != ops.StatusPending {
		head += "  " + it.Status
	}
	return m.st.Title.Render(ansi.Truncate(head, w, "…"))
}

func dateOf(rfc string) string {
	d, _, _ := strings.Cut(rfc, "T")
	return d
}

// contextLines draws an item's context, the page at path hl marked.
func contextLines(m *Model, it *ops.ReviewItem, s *ops.ShowReviewOut, w int, hl string) []string {
	lines := []string{itemHead(m, it, w)}
	lines = append(lines, wrap(it.Title, w)...)
	if it.Rationale != "" {
		lines = append(lines, wrap(m.st.Dim.Render(plain(it.Rationale)), w)...)
	}
	if it.Source != "" {
		lines = append(lines, "source: "+it.Source)
	}
	if s == nil {
		return append(lines, m.st.Dim.Render("reading its context…"))
	}
	if len(s.Actions) > 0 {
		var acts []string
		for _, a := range s.Actions {
			acts = append(acts, actionKey[a]+" "+a)
		}
		lines = slices.Insert(lines, 1, ansi.Truncate(m.st.Dim.Render("keys: "+strings.Join(acts, " · ")), w, "…"))
	}
	mark := func(ref ops.PageRef) string {
		text := ref.Title + "  " + m.st.Dim.Render(ref.Path)
		if ref.Path == hl {
			return "> " + m.st.Cursor.Render(ref.Title) + "  " + m.st.Dim.Render(ref.Path)
		}
		return "  " + text
	}
	if len(s.Linkers) > 0 {
		lines = append(lines, m.st.Heading.Render(fmt.Sprintf("Linked from (%d)", s.LinkersTotal)))
		for _, l := range s.Linkers {
			lines = append(lines, mark(l.PageRef))
			lines = append(lines, quoted(m, l.Lines, w)...)
		}
		if more := s.LinkersTotal - len(s.Linkers); more > 0 {
			lines = append(lines, m.st.Dim.Render(fmt.Sprintf("  and %d more", more)))
		}
	}
	if len(s.Pages) > 0 {
		lines = append(lines, m.st.Heading.Render("Pages"))
		for _, p := range s.Pages {
			if !p.Found {
				lines = append(lines, "  "+p.Name+m.st.Dim.Render("  (no such page)"))
				continue
			}
			lines = append(lines, mark(p.PageRef))
			lines = append(lines, quoted(m, p.Lines, w)...)
		}
	}
	if st := s.Stub; st != nil {
		what := "Create writes " + st.Path
		if st.Append {
			what = "Create appends to " + st.Path
		} else if len(st.Tags) > 0 {
			what += " (tags: " + strings.Join(st.Tags, ", ") + ")"
		}
		lines = append(lines, m.st.Heading.Render(what))
		for _, l := range strings.Split(strings.TrimRight(plain(st.Content), "\n"), "\n") {
			lines = append(lines, ansi.Truncate(m.st.Border.Render("  │ ")+l, w, "…"))
		}
	}
	return lines
}

// actionKey is the key of each review action.
var actionKey = map[string]string{ops.ActionCreate: "c", ops.ActionResolve: "r", ops.ActionSkip: "s",
	ops.ActionDismiss: "d", ops.ActionDeepResearch: "R"}

// quoted draws numbered lines of a page, cut to the width.
func quoted(m *Model, ls []ops.LineText, w int) []string {
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, ansi.Truncate(m.st.Dim.Render(fmt.Sprintf("%6d│ ", l.Line))+plain(l.Text), w, "…"))
	}
	return out
}

// wrap breaks text into lines of at most w cells.
func wrap(text string, w int) []string {
	return strings.Split(ansi.Wrap(text, max(w, 10), " "), "\n")
}
