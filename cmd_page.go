package main

import (
	"fmt"
	"strings"

	"github.com/synapse-wiki/synapse/ops"
)

func init() {
	renderers["page.get"] = func(o *output, v any) error {
		p := v.(*ops.GetPageOut)
		if !o.tty {
			// a pipe gets the page as a file: frontmatter (as written, even
			// when it is not valid YAML) and body, so that piping it back to
			// `page write` changes nothing; a body that itself starts with
			// "---" gets fences, or it would be read as the frontmatter
			fm, _ := p.Frontmatter.YAML()
			if fm != "" || strings.HasPrefix(p.Content, "---") {
				o.printf("---\n%s---\n", fm)
			}
			o.printf("%s", p.Content)
			if !strings.HasSuffix(p.Content, "\n") {
				o.printf("\n")
			}
			return nil
		}
		o.printf("%s  %s\n", o.st.Title.Render(p.Title), o.st.Dim.Render(p.Type+" · "+p.Path+" · id "+p.ID))
		if fm, _ := p.Frontmatter.YAML(); fm != "" {
			o.printf("%s", o.st.Dim.Render("---\n"+fm+"---")+"\n")
		}
		o.printf("%s\n", strings.TrimRight(p.Content, "\n"))
		resolved, dangling := 0, 0
		for _, l := range p.Links {
			if l.Resolved {
				resolved++
			} else {
				dangling++
			}
		}
		o.printf("\n%s\n", o.st.Dim.Render(fmt.Sprintf("%d links (%d unresolved) · %d backlinks · sha256 %s", len(p.Links), dangling, p.BacklinksTotal, p.SHA256[:12])))
		return nil
	}
	renderers["page.list"] = func(o *output, v any) error {
		p := v.(*ops.ListPagesOut)
		rows := make([][]string, 0, len(p.Pages))
		for _, x := range p.Pages {
			rows = append(rows, []string{x.Title, x.Type, x.Path, x.ID})
		}
		o.table([]string{"TITLE", "TYPE", "PATH", "ID"}, rows)
		if len(p.Pages) < p.Total {
			o.note("%d of %d pages shown (use --limit and --offset for more)", len(p.Pages), p.Total)
		}
		return nil
	}
}
