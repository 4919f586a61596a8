package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
)

// dateOf shortens an RFC 3339 time to its date.
func dateOf(ts string) string {
	if d, _, ok := strings.Cut(ts, "T"); ok {
		return d
	}
	return ts
}

func ReviewList(o *Output, l *ops.ListReviewsOut) error {
	decided := slices.ContainsFunc(l.Items, func(it ops.ReviewItem) bool { return it.DecidedBy != "" })
	rows := make([][]string, 0, len(l.Items))
	for _, it := range l.Items {
		row := []string{it.ID, it.Type, it.Status, it.Title, it.Origin, dateOf(it.CreatedAt)}
		if decided {
			row = append(row, orDash(it.DecidedBy))
		}
		rows = append(rows, row)
	}
	origin := fixedCol("ORIGIN")
	origin.drop = 1 // in --json and pipes; a narrow terminal gives its room to the title
	cols := []col{fixedCol("ID"), fixedCol("TYPE"), fixedCol("STATUS"), flexCol("TITLE"), origin, fixedCol("CREATED")}
	if decided { // who decided: a resolve by hand and an automatic one share auto_resolved
		cols = append(cols, fixedCol("DECIDED BY"))
	}
	o.table(cols, rows)
	for _, it := range l.Items {
		if len(it.SameName) == 0 {
			continue
		}
		names := make([]string, len(it.SameName))
		for i, p := range it.SameName {
			names[i] = fmt.Sprintf("%q (%s)", p.Title, p.Path)
		}
		o.Note("%s: a page of nearly that name exists, the links may mean it: %s", it.ID, strings.Join(names, ", "))
	}
	switch {
	case l.Total == 0 && l.Note != "":
		o.Note("%s", l.Note)
	case l.Total == 0:
		o.Note("no review items")
	case len(l.Items) < l.Total && len(l.Types) > 0:
		counts := make([]string, len(l.Types))
		for i, t := range l.Types {
			counts[i] = fmt.Sprintf("%s %d", t.Type, t.Items)
		}
		o.Note("%d of %s shown (%s; use --type, --limit and --offset for more)", len(l.Items), plural(l.Total, "review item", "review items"), strings.Join(counts, ", "))
	case len(l.Items) < l.Total:
		o.Note("%d of %s shown (use --limit and --offset for more)", len(l.Items), plural(l.Total, "review item", "review items"))
	default:
		o.Note("%s", plural(l.Total, "review item", "review items"))
	}
	return nil
}

func ReviewResolve(o *Output, r *ops.ResolveReviewOut) error {
	o.Printf("%s %s: %s\n", r.ID, o.st.OK.Render(r.Status), r.Title)
	o.Note("decided by %s", r.DecidedBy)
	if r.Note != "" {
		o.Note("note: %s", r.Note)
	}
	if r.Resolution != "" && r.Status == ops.StatusDeepResearched {
		o.Printf("\n%s\n", r.Resolution)
	}
	for _, p := range r.Pages {
		o.Note("wrote %s (id %s)", p.Path, p.ID)
	}
	if r.Status != ops.StatusDeepResearched && len(r.Pages) == 0 && strings.HasPrefix(r.Resolution, "appended") {
		o.Note("%s", r.Resolution)
	}
	return nil
}

func ReviewBulkResolve(o *Output, b *ops.BulkResolveOut) error {
	rows := [][]string{}
	for _, id := range b.Resolved {
		rows = append(rows, []string{id, b.Status})
	}
	for _, t := range b.AlreadyTerminal {
		rows = append(rows, []string{t.ID, "already " + t.Status})
	}
	for _, id := range b.NotFound {
		rows = append(rows, []string{id, "not found"})
	}
	o.table([]col{fixedCol("ID"), fixedCol("RESULT")}, rows)
	o.Note("%d %s, %d already decided, %d not found", b.Count, b.Status, len(b.AlreadyTerminal), len(b.NotFound))
	return nil
}

func ReviewAdd(o *Output, a *ops.AddReviewOut) error {
	switch a.Outcome {
	case ops.EnqueueAdded:
		o.Printf("%s\n", a.Item.ID)
		o.Note("added review item %s: %s", a.Item.ID, a.Item.Title)
	case ops.EnqueueRefreshed:
		o.Printf("%s\n", a.Item.ID)
		o.Note("refreshed pending review item %s: %s", a.Item.ID, a.Item.Title)
	default:
		o.Printf("%s\n", a.Item.ID)
		o.Note("review item %s was already %s; the decision stands and the proposal was not re-opened", a.Item.ID, a.Item.Status)
	}
	return nil
}

// ReviewExport prints the lines, one a line (JSON Lines: what
// review import reads).
func ReviewExport(o *Output, x *ops.ExportReviewsOut) error {
	for _, l := range x.Lines {
		o.Printf("%s\n", l)
	}
	o.Note("%s", plural(x.Count, "review item", "review items"))
	return nil
}

func ReviewImport(o *Output, r *ops.ImportReviewsOut) error {
	o.Printf("imported %s: %s, %s new to this vault\n", plural(r.Lines, "line", "lines"), plural(r.Appended, "line added", "lines added"), plural(r.Added, "item", "items"))
	if r.KeptDecided > 0 {
		o.Note("%s about items decided here left out: this vault's decisions stand", plural(r.KeptDecided, "line", "lines"))
	}
	if r.Duplicates > 0 {
		o.Note("%s the journal holds already", plural(r.Duplicates, "line", "lines"))
	}
	if r.BadLines > 0 {
		o.Note("%s skipped: not journal lines (line %s)", plural(r.BadLines, "line", "lines"), joinInts(r.BadLineNums))
	}
	o.Note("%s in the queue", plural(r.Items, "review item", "review items"))
	return nil
}

func ReviewCompact(o *Output, c *ops.CompactReviewsOut) error {
	o.Printf("compacted %s: %s (%s) to %s (%s), one per item\n", vault.ReviewJournal,
		plural(int(c.LinesBefore), "line", "lines"), humanBytes(c.BytesBefore), plural(int(c.Lines), "line", "lines"), humanBytes(c.Bytes))
	if c.Dropped > 0 {
		o.Note("%s that did not parse moved to %s", plural(c.Dropped, "line", "lines"), c.DroppedTo)
	}
	return nil
}

// ReviewShow prints an item with its context, as the desk shows it.
func ReviewShow(o *Output, s *ops.ShowReviewOut) error {
	it := s.Item
	o.Printf("%s  %s  %s  from %s  %s\n", o.st.Title.Render(it.ID), it.Type, it.Status, it.Origin, dateOf(it.CreatedAt))
	o.Printf("%s\n", it.Title)
	if it.Rationale != "" {
		o.Printf("%s\n", it.Rationale)
	}
	if it.Source != "" {
		o.Printf("source: %s\n", it.Source)
	}
	if it.DecidedBy != "" {
		o.Printf("decided by %s: %s\n", it.DecidedBy, it.Resolution)
	}
	if it.Note != "" {
		o.Printf("note: %s\n", it.Note)
	}
	lines := func(ls []ops.LineText) {
		for _, l := range ls {
			o.Printf("  %6d  %s\n", l.Line, l.Text)
		}
	}
	if len(s.Linkers) > 0 {
		o.Printf("\nLinked from (%d):\n", s.LinkersTotal)
		for _, l := range s.Linkers {
			o.Printf("  %s  %s\n", l.Title, o.st.Dim.Render(l.Path))
			lines(l.Lines)
		}
		if more := s.LinkersTotal - len(s.Linkers); more > 0 {
			o.Printf("  and %d more\n", more)
		}
	}
	if len(s.Pages) > 0 {
		o.Printf("\nPages:\n")
		for _, p := range s.Pages {
			if !p.Found {
				o.Printf("  %s  %s\n", p.Name, o.st.Dim.Render("(no such page)"))
				continue
			}
			o.Printf("  %s  %s\n", p.Title, o.st.Dim.Render(p.Path))
			lines(p.Lines)
		}
	}
	if len(s.SameName) > 0 {
		o.Printf("\nSame name but for case, dashes or spaces (create refuses a stub; alias one or dismiss):\n")
		for _, p := range s.SameName {
			o.Printf("  %s  %s\n", p.Title, o.st.Dim.Render(p.Path+" · id "+p.ID))
		}
	}
	if st := s.Stub; st != nil && len(s.SameName) == 0 {
		what := "create writes " + st.Path
		if st.Append {
			what = "create appends to " + st.Path
		}
		o.Printf("\n%s:\n", strings.ToUpper(what[:1])+what[1:])
		for _, l := range strings.Split(strings.TrimRight(st.Content, "\n"), "\n") {
			o.Printf("  | %s\n", l)
		}
	}
	if len(s.Actions) > 0 {
		o.Note("actions: %s (synapse review resolve %s --action ACTION)", strings.Join(s.Actions, ", "), it.ID)
	}
	return nil
}
