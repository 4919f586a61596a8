package desk

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/synapse-wiki/synapse/ops"
)

// pageView is a page rendered for reading, with the pages it links to,
// its backlinks and its neighbours in the graph; tab walks them and enter
// follows the one marked. esc goes back along the pages read.
type pageView struct {
	gen      int
	loading  bool
	out      *ops.GetPageOut
	nb       *ops.NeighborhoodOut
	err      error
	rendered string
	renderW  int
	vp       viewport.Model
	links    []pageLink
	sel      int
	trail    []string // pages read before this one
}

// pageLink is one entry of the page's list: a link, a backlink or a
// neighbour.
type pageLink struct {
	kind  string // "link", "backlink", "neighbour"
	title string
	path  string
	line  int
}

type pageMsg struct {
	gen int
	out *ops.GetPageOut
	nb  *ops.NeighborhoodOut
	err error
}

type renderedMsg struct {
	gen, width int
	text       string
}

// sideW is the width of the list beside a page on a wide screen.
const sideW = 40

// open reads the page name (a title, path or id) and shows it.
func (p *pageView) open(m *Model, name string) tea.Cmd {
	if p.out != nil {
		p.trail = append(p.trail, p.out.Path)
	}
	return p.load(m, name)
}

func (p *pageView) load(m *Model, name string) tea.Cmd {
	p.gen++
	p.loading, p.err = true, nil
	gen, ctx, caller := p.gen, m.ctx, m.o.Caller
	return func() tea.Msg {
		out, err := call[ops.GetPageOut](ctx, caller, "page.get", map[string]string{"title": name})
		if err != nil {
			return pageMsg{gen: gen, err: err}
		}
		nb, _ := call[ops.NeighborhoodOut](ctx, caller, "graph.neighbors", map[string]any{"title": out.Path, "depth": 1})
		return pageMsg{gen: gen, out: out, nb: nb}
	}
}

// reload reads the page shown again (it may have changed).
func (p *pageView) reload(m *Model) tea.Cmd {
	sel := p.sel
	cmd := p.load(m, p.out.Path)
	p.sel = sel
	return cmd
}

func (p *pageView) update(m *Model, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case pageMsg:
		if msg.gen != p.gen {
			return nil
		}
		p.loading = false
		if msg.err != nil {
			p.err = msg.err
			m.setStatus("", msg.err)
			return nil
		}
		same := p.out != nil && p.out.Path == msg.out.Path
		p.out, p.nb = msg.out, msg.nb
		p.links = pageLinks(msg.out, msg.nb)
		if !same {
			p.sel = 0
			p.vp = viewport.New(p.contentW(m), m.height-3)
		}
		p.sel = min(p.sel, max(0, len(p.links)-1))
		p.renderW = 0
		return p.resize(m)
	case renderedMsg:
		if msg.gen == p.gen && msg.width == p.contentW(m) {
			p.rendered, p.renderW = msg.text, msg.width
			p.vp.SetContent(msg.text)
		}
	}
	return nil
}

// contentW is the width of the rendered page.
func (p *pageView) contentW(m *Model) int {
	if m.width >= wide {
		return m.width - sideW - 3
	}
	return m.width
}

// resize renders the page again for a new width (off the event loop:
// rendering a long page takes a while).
func (p *pageView) resize(m *Model) tea.Cmd {
	if p.out == nil {
		return nil
	}
	w := p.contentW(m)
	p.vp.Width = w
	if p.renderW == w {
		return nil
	}
	gen, content, st := p.gen, p.out.Content, m.st
	return func() tea.Msg {
		return renderedMsg{gen: gen, width: w, text: renderMarkdown(content, w, st)}
	}
}

// pageLinks lists a page's links (resolved to pages, in line order, each
// page once), backlinks and neighbours.
func pageLinks(out *ops.GetPageOut, nb *ops.NeighborhoodOut) []pageLink {
	var ls []pageLink
	seen := map[string]bool{}
	for _, l := range out.Links {
		if l.Path == "" || seen["l"+l.Path] {
			continue
		}
		seen["l"+l.Path] = true
		ls = append(ls, pageLink{kind: "link", title: l.Title, path: l.Path, line: l.Line})
	}
	for _, b := range out.Backlinks {
		ls = append(ls, pageLink{kind: "backlink", title: b.Title, path: b.Path})
	}
	if nb != nil {
		for _, n := range nb.Nodes {
			if n.Hop == 1 {
				ls = append(ls, pageLink{kind: "neighbour", title: n.Title, path: n.ID})
			}
		}
	}
	return ls
}

func (p *pageView) key(m *Model, msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Back):
		if n := len(p.trail); n > 0 {
			prev := p.trail[n-1]
			p.trail = p.trail[:n-1]
			return p.load(m, prev)
		}
		m.view = m.back
		return nil
	case key.Matches(msg, k.NextLink), key.Matches(msg, k.PrevLink):
		if n := len(p.links); n > 0 {
			if key.Matches(msg, k.PrevLink) {
				p.sel = (p.sel + n - 1) % n
			} else {
				p.sel = (p.sel + 1) % n
			}
		}
		return nil
	case key.Matches(msg, k.Open):
		if p.sel < len(p.links) {
			return p.open(m, p.links[p.sel].path)
		}
		return nil
	}
	var cmd tea.Cmd
	p.vp, cmd = p.vp.Update(msg)
	return cmd
}

func (p *pageView) view(m *Model, h int) string {
	switch {
	case p.out == nil && p.loading:
		return "  reading the page…"
	case p.out == nil && p.err != nil:
		return "  " + m.st.Error.Render(errText(p.err))
	case p.out == nil:
		return "  No page yet: open an item (enter), then tab to a page and enter,\n  or press 3 on an item to read the page it is about."
	}
	o := p.out
	head := m.st.Title.Render(o.Title) + m.st.Dim.Render(fmt.Sprintf("  %s · %s · %s", o.Type, o.Path, plural(o.BacklinksTotal, "backlink")))
	head = ansi.Truncate(head, m.width, "…")
	body := h - 1
	if m.width >= wide {
		p.vp.Height = body
		w := p.contentW(m)
		sep := strings.TrimSuffix(strings.Repeat(m.st.Border.Render(" │ ")+"\n", body), "\n")
		return head + "\n" + joinColumns(fit(p.content(), w, body), sep, fit(p.listView(m, sideW, body), sideW, body))
	}
	listH := min(8, body/3)
	p.vp.Height = body - listH - 1
	return head + "\n" + fit(p.content(), m.width, p.vp.Height) + "\n" +
		m.st.Border.Render(strings.Repeat("─", m.width)) + "\n" + p.listView(m, m.width, listH)
}

func (p *pageView) content() string {
	if p.renderW == 0 {
		return "  rendering…"
	}
	return p.vp.View()
}

// listView draws the links, backlinks and neighbours, scrolled to keep
// the marked one in sight.
func (p *pageView) listView(m *Model, w, h int) string {
	if len(p.links) == 0 {
		return m.st.Dim.Render("no links, backlinks or neighbours")
	}
	var rows []string
	kind := ""
	selRow := 0
	for i, l := range p.links {
		if l.kind != kind {
			kind = l.kind
			rows = append(rows, m.st.Heading.Render(headingOf(kind, p.out)))
		}
		line := "  " + l.title
		if i == p.sel {
			selRow = len(rows)
			line = "> " + m.st.Cursor.Render(l.title)
		}
		rows = append(rows, ansi.Truncate(line, w, "…"))
	}
	start := max(0, min(selRow-h/2, len(rows)-h))
	return strings.Join(rows[start:min(len(rows), start+h)], "\n")
}

func headingOf(kind string, o *ops.GetPageOut) string {
	switch kind {
	case "link":
		return "Links"
	case "backlink":
		if o.BacklinksTotal > len(o.Backlinks) {
			return fmt.Sprintf("Backlinks (%d of %d)", len(o.Backlinks), o.BacklinksTotal)
		}
		return "Backlinks"
	}
	return "Neighbours"
}

// plural is "1 backlink", "2 backlinks".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
