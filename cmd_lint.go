package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/synapse-wiki/synapse/ops"
)

func lintPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func renderLint(o *output, l *ops.LintOut) error {
	counts := map[string]int{
		ops.LintBrokenLinks: l.Counts.BrokenLinks, ops.LintBrokenFileLinks: l.Counts.BrokenFileLinks, ops.LintOrphans: l.Counts.Orphans,
		ops.LintNoOutlinks: l.Counts.NoOutlinks, ops.LintMissingSources: l.Counts.MissingSources,
		ops.LintDuplicateTitles: l.Counts.DuplicateTitles, ops.LintFrontmatterErrors: l.Counts.FrontmatterErrors,
		ops.LintReservedFiles: l.Counts.ReservedFiles, ops.LintRefusedFiles: l.Counts.RefusedFiles,
		ops.LintOverCap: l.Counts.OverCap,
	}
	// the counts on top, by the names --category takes
	rows := [][]string{}
	for _, c := range ops.LintCategories {
		if l.Category == "" || l.Category == c {
			rows = append(rows, []string{c, strconv.Itoa(counts[c])})
		}
	}
	o.table([]col{fixedCol("CATEGORY"), numCol("FINDINGS")}, rows)
	section := func(category, title string, listed int) bool {
		n := counts[category]
		if listed == 0 {
			return false
		}
		head := fmt.Sprintf("(%d)", n)
		if listed < n {
			head = fmt.Sprintf("(%d–%d of %d)", l.Offset+1, l.Offset+listed, n)
		}
		o.printf("\n%s %s\n", o.st.Title.Render(title), o.st.Dim.Render(head))
		return true
	}
	if section(ops.LintBrokenLinks, "Broken links", len(l.BrokenLinks)) {
		rows = rows[:0]
		for _, b := range l.BrokenLinks {
			var from []string
			for _, p := range b.Pages {
				from = append(from, p.Title)
			}
			rows = append(rows, []string{b.Target, strconv.Itoa(b.Links), strings.Join(from, ", ")})
		}
		o.table([]col{flexCol("TARGET"), numCol("LINKS"), flexCol("LINKED FROM")}, rows)
	}
	if section(ops.LintBrokenFileLinks, "Links to files that do not exist", len(l.BrokenFileLinks)) {
		rows = rows[:0]
		for _, b := range l.BrokenFileLinks {
			var from []string
			for _, p := range b.Pages {
				lines := make([]string, len(p.Lines))
				for i, n := range p.Lines {
					lines[i] = strconv.Itoa(n)
				}
				from = append(from, p.Title+":"+strings.Join(lines, ","))
			}
			target := b.Target
			if b.Path != "" && b.Path != b.Target {
				target += " (" + b.Path + ")"
			}
			rows = append(rows, []string{target, strconv.Itoa(b.Links), strings.Join(from, ", ")})
		}
		o.table([]col{flexCol("TARGET"), numCol("LINKS"), flexCol("LINKED FROM (LINES)")}, rows)
	}
	for _, s := range []struct {
		category, title string
		refs            []ops.PageRef
	}{{ops.LintOrphans, "Orphan pages", l.Orphans}, {ops.LintNoOutlinks, "Pages without outgoing links", l.NoOutlinks}} {
		if section(s.category, s.title, len(s.refs)) {
			rows = rows[:0]
			for _, r := range s.refs {
				rows = append(rows, []string{r.Title, r.Path})
			}
			o.table([]col{flexCol("TITLE"), pathCol("PATH")}, rows)
		}
	}
	if section(ops.LintMissingSources, "Missing source files", len(l.MissingSources)) {
		rows = rows[:0]
		for _, s := range l.MissingSources {
			var by []string
			for _, p := range s.Pages {
				by = append(by, p.Title)
			}
			if more := s.PagesTotal - len(s.Pages); more > 0 {
				by = append(by, fmt.Sprintf("and %d more", more))
			}
			rows = append(rows, []string{s.Source, strings.Join(by, ", ")})
		}
		o.table([]col{pathCol("SOURCE"), flexCol("CITED BY")}, rows)
	}
	if section(ops.LintDuplicateTitles, "Duplicate titles", len(l.DuplicateTitles)) {
		rows = rows[:0]
		for _, d := range l.DuplicateTitles {
			for _, p := range d.Pages {
				rows = append(rows, []string{d.Title, p.Path})
			}
		}
		o.table([]col{flexCol("TITLE"), pathCol("PATH")}, rows)
	}
	if section(ops.LintFrontmatterErrors, "Frontmatter that does not parse", len(l.FrontmatterErrors)) {
		rows = rows[:0]
		for _, f := range l.FrontmatterErrors {
			line := ""
			if f.Line > 0 {
				line = strconv.Itoa(f.Line)
			}
			rows = append(rows, []string{f.Path, line, f.Error})
		}
		o.table([]col{pathCol("PATH"), numCol("LINE"), flexCol("ERROR")}, rows)
	}
	if section(ops.LintReservedFiles, "Top files synapse leaves alone", len(l.ReservedFiles)) {
		for _, r := range l.ReservedFiles {
			o.printf("%s: %s\n  fix: %s\n", r.Path, r.Problem, r.Fix)
		}
	}
	if section(ops.LintRefusedFiles, "Files refused instead of read", len(l.RefusedFiles)) {
		rows = rows[:0]
		for _, r := range l.RefusedFiles {
			rows = append(rows, []string{r.Path, r.Reason, r.Message})
		}
		o.table([]col{pathCol("PATH"), fixedCol("REASON"), flexCol("WHY")}, rows)
	}
	if section(ops.LintOverCap, "Pages indexed in part (past a parse limit)", len(l.OverCap)) {
		rows = rows[:0]
		for _, c := range l.OverCap {
			rows = append(rows, []string{c.Path, strings.TrimPrefix(c.Message, c.Path+": ")})
		}
		o.table([]col{pathCol("PATH"), flexCol("LEFT OUT")}, rows)
	}
	scope := ""
	if l.Page != nil {
		scope = fmt.Sprintf(" on or from %q (%s)", l.Page.Title, l.Page.Path)
	}
	o.note("%d %s%s", l.Findings, lintPlural(l.Findings, "finding", "findings"), scope)
	if f := l.Filed; f != nil {
		o.note("review queue: %d added, %d refreshed, %d already decided (left alone), %d missing-page %s auto-resolved",
			f.Added, f.Refreshed, f.AlreadyTerminal, f.AutoResolved, lintPlural(f.AutoResolved, "item", "items"))
		if f.NotListed > 0 {
			o.note("%d %s not listed, so not filed: add --offset %d (or --category, --page) to file the next ones",
				f.NotListed, lintPlural(f.NotListed, "finding", "findings"), l.Offset+l.Limit)
		}
	}
	return nil
}
