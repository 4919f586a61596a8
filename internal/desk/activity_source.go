package desk

import (
	"context"
	"fmt"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/ops"
)

// activitySource reads the activity through the page history's
// operations, as `synapse recent`, `synapse page diff` and `synapse page
// restore` run them: the recent changes and decisions, a write's diff,
// and the restore of the revision before a write.
type activitySource struct {
	ctx context.Context
	c   Caller
}

// The operations the activity view runs.
const (
	opRecent  = "recent"
	opDiff    = "page.diff"
	opRestore = "page.restore"
)

// recentShown bounds the entries the view reads (the operation's answer
// stays under 16 KB whatever the limit; older entries are left out).
const recentShown = 200

// recent is the activity, newest first.
func (s activitySource) recent() ([]entry, error) {
	out, err := call[ops.RecentOut](s.ctx, s.c, opRecent, map[string]any{"limit": recentShown})
	if err != nil {
		return nil, err
	}
	es := make([]entry, 0, len(out.Items))
	for _, it := range out.Items {
		if it.Kind == "review" && it.Action == "filed" {
			continue // the view shows writes and decisions; the queue shows what was filed
		}
		es = append(es, recentEntry(it))
	}
	return es, nil
}

// recentEntry is the line of the view for an item of recent.
func recentEntry(it ops.RecentItem) entry {
	e := entry{when: it.Time.UTC().Format(time.RFC3339), title: it.Title, detail: it.Action}
	if it.Kind == "review" {
		e.kind, e.detail = "decision", fmt.Sprintf("%s %s (%s)", it.ID, it.Action, it.Type)
		return e
	}
	e.kind, e.page, e.rev = "write", it.ID, it.Rev
	if e.page == "" {
		e.page = it.Path
	}
	if it.Rev > 0 {
		e.detail = fmt.Sprintf("%s · revision %d · %s", it.Action, it.Rev, it.Path)
	}
	switch {
	case it.From > 0:
		e.detail += fmt.Sprintf(" (from revision %d)", it.From)
	case it.MovedFrom != "":
		e.detail += " (from " + it.MovedFrom + ")"
	}
	return e
}

// pageDiff is the diff of e's write against the revision before it.
func (s activitySource) pageDiff(e entry) (*ops.PageDiffOut, error) {
	in := map[string]any{"title": e.page}
	if e.rev > 0 {
		in["rev"] = e.rev
	}
	return call[ops.PageDiffOut](s.ctx, s.c, opDiff, in)
}

// diff is the unified diff of e's write, or a sentence when it has none.
func (s activitySource) diff(e entry) (string, error) {
	d, err := s.pageDiff(e)
	switch {
	case err != nil:
		return "", err
	case d.From == nil:
		return "(this write created the page: no revision before it)\n", nil
	case d.Diff == "":
		return "(the same bytes as the revision before it)\n", nil
	case d.Truncated:
		return d.Diff + "\n(the diff is longer: synapse page diff shows it whole)\n", nil
	}
	return d.Diff, nil
}

// restore writes back the revision before e's write, through the restore
// operation (itself a write and a revision, so it can be undone).
func (s activitySource) restore(e entry) (string, error) {
	d, err := s.pageDiff(e)
	if err != nil {
		return "", err
	}
	if d.From == nil {
		return "", errs.E(errs.Invalid, "this write created %q: there is no revision before it to restore", e.title)
	}
	out, err := call[ops.RestorePageOut](s.ctx, s.c, opRestore, map[string]any{"title": e.page, "rev": d.From.Rev})
	if err != nil {
		return "", err
	}
	if out.Revision > 0 {
		return fmt.Sprintf("restored %q to revision %d (now revision %d)", e.title, d.From.Rev, out.Revision), nil
	}
	return fmt.Sprintf("restored %q to revision %d", e.title, d.From.Rev), nil
}
