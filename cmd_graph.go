package main

import (
	"fmt"
	"strconv"

	"github.com/synapse-wiki/synapse/ops"
)

func init() {
	renderers["graph.neighbors"] = func(o *output, v any) error {
		n := v.(*ops.NeighborhoodOut)
		best := map[string]float64{}
		for _, e := range n.Edges {
			if e.Source == n.Center.ID {
				best[e.Target] = e.Weight
			}
			if e.Target == n.Center.ID {
				best[e.Source] = e.Weight
			}
		}
		rows := make([][]string, 0, len(n.Nodes))
		for _, x := range n.Nodes {
			w := ""
			if b, ok := best[x.ID]; ok {
				w = strconv.FormatFloat(b, 'f', 2, 64)
			}
			rows = append(rows, []string{strconv.Itoa(x.Hop), x.Title, x.Type, w, x.ID})
		}
		if o.tty {
			o.printf("%s %s\n", o.st.Title.Render(n.Center.Title), o.st.Dim.Render(fmt.Sprintf("(%s, depth %d, %d nodes, %d edges)", n.Center.Type, n.Depth, len(n.Nodes), len(n.Edges))))
		}
		o.table([]string{"HOP", "TITLE", "TYPE", "WEIGHT", "ID"}, rows)
		if n.Truncated {
			o.note("neighbourhood truncated to the %d strongest nodes", ops.MaxNeighborhoodNodes)
		}
		return nil
	}
	renderers["graph.backlinks"] = func(o *output, v any) error {
		b := v.(*ops.BacklinksOut)
		rows := make([][]string, 0, len(b.Backlinks))
		for _, x := range b.Backlinks {
			rows = append(rows, []string{x.Title, x.Type, x.Path, strconv.Itoa(x.Count)})
		}
		o.table([]string{"TITLE", "TYPE", "PATH", "LINKS"}, rows)
		o.note("%d %s link to %q%s", b.Total, lintPlural(b.Total, "page", "pages"), b.Page.Title, listedNote(len(b.Backlinks), b.Total))
		return nil
	}
	renderers["graph.orphans"] = func(o *output, v any) error {
		p := v.(*ops.PagesOut)
		rows := make([][]string, 0, len(p.Pages))
		for _, x := range p.Pages {
			rows = append(rows, []string{x.Title, x.Type, x.Path})
		}
		o.table([]string{"TITLE", "TYPE", "PATH"}, rows)
		o.note("%d orphan %s (no page links to them)%s", p.Total, lintPlural(p.Total, "page", "pages"), listedNote(len(p.Pages), p.Total))
		return nil
	}
	renderers["graph.missing"] = func(o *output, v any) error {
		m := v.(*ops.MissingOut)
		rows := [][]string{}
		for _, t := range m.Targets {
			for _, p := range t.Pages {
				rows = append(rows, []string{t.Target, strconv.Itoa(t.Links), p.Title, p.Path, strconv.Itoa(p.Count)})
			}
		}
		o.table([]string{"TARGET", "LINKS", "LINKED FROM", "PATH", "COUNT"}, rows)
		scope := ""
		if m.Page != nil {
			scope = fmt.Sprintf(" linked from %q", m.Page.Title)
		}
		o.note("%d missing %s%s%s", m.Total, lintPlural(m.Total, "page", "pages"), scope, listedNote(len(m.Targets), m.Total))
		return nil
	}
}

// listedNote says how many of a paged list were printed, when not all.
func listedNote(listed, total int) string {
	if listed >= total {
		return ""
	}
	return fmt.Sprintf("; %d listed (--offset and --limit page through them)", listed)
}
