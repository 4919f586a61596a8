package render

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

// lintSections print the listed findings of each lint category, by its
// name (a test checks that every category has one).
var lintSections = map[string]func(o *Output, l *ops.LintOut){
	ops.LintBrokenLinks: func(o *Output, l *ops.LintOut) {
		rows := [][]string{}
		for _, b := range l.BrokenLinks {
			rows = append(rows, []string{b.Target, strconv.Itoa(b.Links), linkedFrom(l.Full, b.PagesTotal, b.Pages)})
		}
		o.table([]col{flexCol("TARGET"), numCol("LINKS"), linkedFromCol(l.Full, "")}, rows)
	},
	ops.LintBrokenFileLinks: func(o *Output, l *ops.LintOut) {
		rows := [][]string{}
		var fixes []string
		for _, b := range l.BrokenFileLinks {
			from := strconv.Itoa(b.PagesTotal)
			if l.Full {
				var pages []string
				for _, p := range b.Pages {
					lines := make([]string, len(p.Lines))
					for i, n := range p.Lines {
						lines[i] = strconv.Itoa(n)
					}
					pages = append(pages, p.Title+":"+strings.Join(lines, ","))
				}
				from = strings.Join(pages, ", ")
			}
			target := b.Target
			if b.Path != "" && b.Path != b.Target {
				target += " (" + b.Path + ")"
			}
			if b.Outside != "" {
				target += " [at " + b.Outside + "]"
				fixes = append(fixes, b.Fix)
			}
			rows = append(rows, []string{target, strconv.Itoa(b.Links), from})
		}
		o.table([]col{flexCol("TARGET"), numCol("LINKS"), linkedFromCol(l.Full, " (LINES)")}, rows)
		for _, f := range uniq(fixes) {
			o.Printf("fix: %s\n", f)
		}
	},
	ops.LintAmbiguousLinks: func(o *Output, l *ops.LintOut) {
		rows := [][]string{}
		for _, a := range l.AmbiguousLinks {
			rows = append(rows, []string{a.Target, a.Chosen, a.ChosenBy, strings.Join(a.Others, ", "), strconv.Itoa(a.Links), linkedFrom(l.Full, a.PagesTotal, a.Pages)})
		}
		o.table([]col{flexCol("TARGET"), pathCol("REACHES"), fixedCol("CHOSEN BY"), pathCol("ALSO MATCHES"), numCol("LINKS"), linkedFromCol(l.Full, "")}, rows)
	},
	ops.LintOrphans:    func(o *Output, l *ops.LintOut) { pageRows(o, l.Orphans) },
	ops.LintNoOutlinks: func(o *Output, l *ops.LintOut) { pageRows(o, l.NoOutlinks) },
	ops.LintMissingSources: func(o *Output, l *ops.LintOut) {
		rows := [][]string{}
		for _, s := range l.MissingSources {
			by := strconv.Itoa(s.PagesTotal)
			if l.Full {
				var names []string
				for _, p := range s.Pages {
					names = append(names, p.Title)
				}
				if more := s.PagesTotal - len(s.Pages); more > 0 {
					names = append(names, fmt.Sprintf("and %d more", more))
				}
				by = strings.Join(names, ", ")
			}
			rows = append(rows, []string{s.Source, by})
		}
		head := "CITING PAGES"
		if l.Full {
			head = "CITED BY"
		}
		o.table([]col{pathCol("SOURCE"), flexCol(head)}, rows)
	},
	ops.LintDuplicateTitles: func(o *Output, l *ops.LintOut) {
		rows := [][]string{}
		for _, d := range l.DuplicateTitles {
			for _, p := range d.Pages {
				rows = append(rows, []string{d.Title, p.Path})
			}
		}
		o.table([]col{flexCol("TITLE"), pathCol("PATH")}, rows)
	},
	ops.LintFrontmatterErrors: func(o *Output, l *ops.LintOut) {
		rows := [][]string{}
		for _, f := range l.FrontmatterErrors {
			line := ""
			if f.Line > 0 {
				line = strconv.Itoa(f.Line)
			}
			rows = append(rows, []string{f.Path, line, f.Error})
		}
		o.table([]col{pathCol("PATH"), numCol("LINE"), flexCol("ERROR")}, rows)
	},
	ops.LintReservedFiles: func(o *Output, l *ops.LintOut) {
		for _, r := range l.ReservedFiles {
			o.Printf("%s: %s\n  fix: %s\n", r.Path, r.Problem, r.Fix)
		}
	},
	ops.LintRefusedFiles: func(o *Output, l *ops.LintOut) {
		rows := [][]string{}
		for _, r := range l.RefusedFiles {
			rows = append(rows, []string{r.Path, r.Reason, r.Message})
		}
		o.table([]col{pathCol("PATH"), fixedCol("REASON"), flexCol("WHY")}, rows)
	},
	ops.LintOverCap: func(o *Output, l *ops.LintOut) {
		rows := [][]string{}
		for _, c := range l.OverCap {
			rows = append(rows, []string{c.Path, strings.TrimPrefix(c.Message, c.Path+": ")})
		}
		o.table([]col{pathCol("PATH"), flexCol("WHAT")}, rows)
	},
}

// linkedFrom is the linking pages of a finding: their titles in a full
// report, their number in a summary.
func linkedFrom(full bool, total int, pages []ops.BacklinkItem) string {
	if !full {
		return strconv.Itoa(total)
	}
	var from []string
	for _, p := range pages {
		from = append(from, p.Title)
	}
	return strings.Join(from, ", ")
}

func linkedFromCol(full bool, suffix string) col {
	if full {
		return flexCol("LINKED FROM" + suffix)
	}
	return numCol("PAGES")
}

func pageRows(o *Output, refs []ops.PageRef) {
	rows := [][]string{}
	for _, r := range refs {
		rows = append(rows, []string{r.Title, r.Path})
	}
	o.table([]col{flexCol("TITLE"), pathCol("PATH")}, rows)
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func Lint(o *Output, l *ops.LintOut) error {
	// the counts on top, by the names --category takes
	rows := [][]string{}
	for _, c := range ops.LintCategoryList() {
		if l.Category == "" || l.Category == c.Name {
			rows = append(rows, []string{c.Name, strconv.Itoa(l.Counts.Of(c.Name))})
		}
	}
	o.table([]col{fixedCol("CATEGORY"), numCol("FINDINGS")}, rows)
	more := false
	for _, c := range ops.LintCategoryList() {
		n, listed := l.Counts.Of(c.Name), l.Listed(c.Name)
		if listed == 0 {
			continue
		}
		head := fmt.Sprintf("(%d)", n)
		if listed < n {
			head = fmt.Sprintf("(%d–%d of %d)", l.Offset+1, l.Offset+listed, n)
			more = true
		}
		o.Printf("\n%s %s\n", o.st.Title.Render(c.Title), o.st.Dim.Render(head))
		lintSections[c.Name](o, l)
	}
	scope := ""
	switch {
	case len(l.Pages) > 1:
		scope = fmt.Sprintf(" on or from %d pages", len(l.Pages))
	case l.Page != nil:
		scope = fmt.Sprintf(" on or from %q (%s)", l.Page.Title, l.Page.Path)
	}
	o.Note("%d %s%s%s", l.Findings, lintPlural(l.Findings, "finding", "findings"), scope, lintFound(l))
	if !l.Full && l.Findings > 0 {
		o.Note("a summary: --category NAME lists one category with the pages linking to each finding, --full every category (--limit, --offset to page)")
	} else if more {
		o.Note("more findings: --offset %d lists the next ones", l.Offset+l.Limit)
	}
	if f := l.Filed; f != nil {
		o.Note("review queue: %d added, %d refreshed, %d already decided (left alone), %d missing-page %s auto-resolved",
			f.Added, f.Refreshed, f.AlreadyTerminal, f.AutoResolved, lintPlural(f.AutoResolved, "item", "items"))
		if f.NotListed > 0 {
			o.Note("%d %s not listed, so not filed: add --offset %d (or --category, --page) to file the next ones",
				f.NotListed, lintPlural(f.NotListed, "finding", "findings"), l.Offset+l.Limit)
		}
	}
	return nil
}

// lintFound names the categories in scope that have findings, with their
// counts (": orphans 1, broken_links 2"), or "" when there are none or
// the report is of one category.
func lintFound(l *ops.LintOut) string {
	if l.Category != "" {
		return ""
	}
	var found []string
	for _, c := range ops.LintCategoryList() {
		if n := l.Counts.Of(c.Name); n > 0 {
			found = append(found, fmt.Sprintf("%s %d", c.Name, n))
		}
	}
	if len(found) == 0 {
		return ""
	}
	return ": " + strings.Join(found, ", ")
}
