package main

import (
	"strings"

	"github.com/synapse-wiki/synapse/ops"
)

// dateOf shortens an RFC 3339 time to its date.
func dateOf(ts string) string {
	if d, _, ok := strings.Cut(ts, "T"); ok {
		return d
	}
	return ts
}

func renderReviewList(o *output, l *ops.ListReviewsOut) error {
	rows := make([][]string, 0, len(l.Items))
	for _, it := range l.Items {
		rows = append(rows, []string{it.ID, it.Type, it.Status, it.Title, it.Origin, dateOf(it.CreatedAt)})
	}
	origin := fixedCol("ORIGIN")
	origin.drop = 1 // in --json and pipes; a narrow terminal gives its room to the title
	o.table([]col{fixedCol("ID"), fixedCol("TYPE"), fixedCol("STATUS"), flexCol("TITLE"), origin, fixedCol("CREATED")}, rows)
	switch {
	case l.Total == 0:
		o.note("no review items")
	case len(l.Items) < l.Total:
		o.note("%d of %s shown (use --limit and --offset for more)", len(l.Items), plural(l.Total, "review item", "review items"))
	default:
		o.note("%s", plural(l.Total, "review item", "review items"))
	}
	return nil
}

func renderReviewResolve(o *output, r *ops.ResolveReviewOut) error {
	o.printf("%s %s: %s\n", r.ID, o.st.OK.Render(r.Status), r.Title)
	if r.Resolution != "" && r.Status == ops.StatusDeepResearched {
		o.printf("\n%s\n", r.Resolution)
	}
	for _, p := range r.Pages {
		o.note("wrote %s (id %s)", p.Path, p.ID)
	}
	if r.Status != ops.StatusDeepResearched && len(r.Pages) == 0 && strings.HasPrefix(r.Resolution, "appended") {
		o.note("%s", r.Resolution)
	}
	return nil
}

func renderReviewBulkResolve(o *output, b *ops.BulkResolveOut) error {
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
	o.note("%d %s, %d already decided, %d not found", b.Count, b.Status, len(b.AlreadyTerminal), len(b.NotFound))
	return nil
}

func renderReviewAdd(o *output, a *ops.AddReviewOut) error {
	switch a.Outcome {
	case ops.EnqueueAdded:
		o.printf("%s\n", a.Item.ID)
		o.note("added review item %s: %s", a.Item.ID, a.Item.Title)
	case ops.EnqueueRefreshed:
		o.printf("%s\n", a.Item.ID)
		o.note("refreshed pending review item %s: %s", a.Item.ID, a.Item.Title)
	default:
		o.printf("%s\n", a.Item.ID)
		o.note("review item %s was already %s; the decision stands and the proposal was not re-opened", a.Item.ID, a.Item.Status)
	}
	return nil
}
