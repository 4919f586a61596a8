package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/synapse-wiki/synapse/ops"
)

func init() {
	renderers["lint"] = func(o *output, v any) error {
		l := v.(*ops.LintOut)
		section := func(title string, n int) {
			o.printf("\n%s %s\n", o.st.Title.Render(title), o.st.Dim.Render(fmt.Sprintf("(%d)", n)))
		}
		rows := [][]string{}
		for _, b := range l.BrokenLinks {
			var from []string
			for _, p := range b.Pages {
				from = append(from, p.Title)
			}
			rows = append(rows, []string{b.Target, strconv.Itoa(b.Links), strings.Join(from, ", ")})
		}
		section("Broken links", len(l.BrokenLinks))
		if len(rows) > 0 {
			o.table([]string{"TARGET", "LINKS", "LINKED FROM"}, rows)
		}
		for _, s := range []struct {
			title string
			refs  []ops.PageRef
		}{{"Orphan pages", l.Orphans}, {"Pages without outgoing links", l.NoOutlinks}} {
			section(s.title, len(s.refs))
			if len(s.refs) > 0 {
				rows = rows[:0]
				for _, r := range s.refs {
					rows = append(rows, []string{r.Title, r.Path})
				}
				o.table([]string{"TITLE", "PATH"}, rows)
			}
		}
		section("Missing sources", len(l.MissingSources))
		if len(l.MissingSources) > 0 {
			rows = rows[:0]
			for _, s := range l.MissingSources {
				var by []string
				for _, p := range s.Pages {
					by = append(by, p.Title)
				}
				rows = append(rows, []string{s.Source, strings.Join(by, ", ")})
			}
			o.table([]string{"SOURCE", "CITED BY"}, rows)
		}
		section("Duplicate titles", len(l.DuplicateTitles))
		if len(l.DuplicateTitles) > 0 {
			rows = rows[:0]
			for _, d := range l.DuplicateTitles {
				for _, p := range d.Pages {
					rows = append(rows, []string{d.Title, p.Path})
				}
			}
			o.table([]string{"TITLE", "PATH"}, rows)
		}
		o.note("%d findings", l.Findings)
		if f := l.Filed; f != nil {
			o.note("review queue: %d added, %d refreshed, %d already decided (left alone), %d missing-page items auto-resolved",
				f.Added, f.Refreshed, f.AlreadyTerminal, f.AutoResolved)
		}
		return nil
	}
}
