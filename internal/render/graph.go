package render

import (
	"fmt"
	"strconv"

	"github.com/synapse-wiki/synapse/ops"
)

// listedNote says how many of a paged list were printed, when not all.
func listedNote(listed, total int) string {
	if listed >= total {
		return ""
	}
	return fmt.Sprintf("; %d listed (--offset and --limit page through them)", listed)
}

func GraphNeighbors(o *Output, n *ops.NeighborhoodOut) error {
	// the centre's edge to each neighbour: weight, links out and in
	type tie struct {
		weight  float64
		out, in int
	}
	ties := map[string]tie{}
	for _, e := range n.Edges {
		if e.Source == n.Center.ID {
			ties[e.Target] = tie{e.Weight, e.SourceToTarget, e.TargetToSource}
		}
		if e.Target == n.Center.ID {
			ties[e.Source] = tie{e.Weight, e.TargetToSource, e.SourceToTarget}
		}
	}
	ambiguousNote(o, "title", n.Center.Path, n.AlsoMatched)
	rows := make([][]string, 0, len(n.Nodes))
	for _, x := range n.Nodes {
		w, out, in := "", "", ""
		if t, ok := ties[x.ID]; ok {
			w, out, in = strconv.FormatFloat(t.weight, 'f', 2, 64), strconv.Itoa(t.out), strconv.Itoa(t.in)
		}
		rows = append(rows, []string{strconv.Itoa(x.Hop), x.Title, x.Type, w, out, in, x.ID})
	}
	if o.tty {
		o.Printf("%s %s\n", o.st.Title.Render(n.Center.Title), o.st.Dim.Render(fmt.Sprintf("(%s, depth %d, %s, %s)", n.Center.Type, n.Depth, plural(len(n.Nodes), "node", "nodes"), plural(len(n.Edges), "edge", "edges"))))
	}
	o.table([]col{numCol("HOP"), flexCol("TITLE"), fixedCol("TYPE"), numCol("WEIGHT"), numCol("OUT"), numCol("IN"), fixedCol("ID")}, rows)
	if o.tty {
		o.Note("OUT: links from %q to the page, IN: links from the page to it (hop 1)", n.Center.Title)
	}
	if n.Truncated {
		o.Note("%d of %d nodes listed, the nearest and strongest (--limit up to %d for more)", len(n.Nodes), n.Total, ops.MaxNeighborhoodNodes)
	}
	return nil
}

func GraphBacklinks(o *Output, b *ops.BacklinksOut) error {
	ambiguousNote(o, "title", b.Page.Path, b.AlsoMatched)
	rows := make([][]string, 0, len(b.Backlinks))
	for _, x := range b.Backlinks {
		rows = append(rows, []string{x.Title, x.Type, x.Path, strconv.Itoa(x.Count), x.ID})
	}
	o.table([]col{flexCol("TITLE"), fixedCol("TYPE"), pathCol("PATH"), numCol("LINKS"), fixedCol("ID")}, rows)
	verb := "pages link"
	if b.Total == 1 {
		verb = "page links"
	}
	o.Note("%d %s to %q%s", b.Total, verb, b.Page.Title, listedNote(len(b.Backlinks), b.Total))
	return nil
}

func GraphOrphans(o *Output, p *ops.PagesOut) error {
	rows := make([][]string, 0, len(p.Pages))
	for _, x := range p.Pages {
		rows = append(rows, []string{x.Title, x.Type, x.Path})
	}
	o.table([]col{flexCol("TITLE"), fixedCol("TYPE"), pathCol("PATH")}, rows)
	o.Note("%s (no page links to them)%s", plural(p.Total, "orphan page", "orphan pages"), listedNote(len(p.Pages), p.Total))
	return nil
}

func GraphMissing(o *Output, m *ops.MissingOut) error {
	if m.Page != nil {
		ambiguousNote(o, "page", m.Page.Path, m.AlsoMatched)
	}
	rows := [][]string{}
	for _, t := range m.Targets {
		for _, p := range t.Pages {
			rows = append(rows, []string{t.Target, strconv.Itoa(t.Links), p.Title, p.Path, strconv.Itoa(p.Count)})
		}
	}
	o.table([]col{flexCol("TARGET"), numCol("TOTAL"), flexCol("LINKED FROM"), pathCol("PATH"), numCol("LINKS")}, rows)
	scope := ""
	if m.Page != nil {
		scope = fmt.Sprintf(" linked from %q", m.Page.Title)
	}
	o.Note("%d missing %s%s%s", m.Total, lintPlural(m.Total, "page", "pages"), scope, listedNote(len(m.Targets), m.Total))
	return nil
}
