package desk

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/ops"
)

// activitySource reads the activity through the operations this build
// has: the history operations (recent activity, a write's diff, restore)
// when they are in the table, else the log of writes (wiki/log.md) and
// the decided review items, without diffs.
type activitySource struct {
	ctx context.Context
	c   Caller
	has func(string) bool
}

// The history operations the activity view uses when the table has them.
const (
	opRecent  = "recent"
	opDiff    = "page.diff"
	opRestore = "page.restore"
)

// missing says which of the operations this build lacks, or "".
func (s activitySource) missing(names ...string) string {
	var lack []string
	for _, n := range names {
		if !s.has(n) {
			lack = append(lack, n)
		}
	}
	if len(lack) == 0 {
		return ""
	}
	return "this synapse keeps no page history (" + strings.Join(lack, ", ") + "): no diffs, no restore"
}

// recent is the activity, newest first, and a note on what is missing.
func (s activitySource) recent() ([]entry, string, error) {
	if s.has(opRecent) {
		es, err := s.fromHistory()
		return es, s.missing(opDiff, opRestore), err
	}
	decided, err := s.decisions()
	if err != nil {
		return nil, "", err
	}
	writes, err := s.logWrites()
	if err != nil {
		return nil, "", err
	}
	es := append(writes, decided...)
	sortEntries(es)
	return es, s.missing(opRecent, opDiff, opRestore), nil
}

// recentItem is an entry of the recent operation.
type recentItem struct {
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"` // page or review
	Action string    `json:"action"`
	Title  string    `json:"title"`
	ID     string    `json:"id"`
	Path   string    `json:"path"`
	Rev    int       `json:"rev"`
	From   int       `json:"from"`
	Type   string    `json:"type"`
}

// fromHistory is the activity as the recent operation lists it.
func (s activitySource) fromHistory() ([]entry, error) {
	out, err := call[struct {
		Items []recentItem `json:"items"`
	}](s.ctx, s.c, opRecent, map[string]any{"limit": 200})
	if err != nil {
		return nil, err
	}
	var es []entry
	for _, it := range out.Items {
		e := entry{when: it.Time.UTC().Format(time.RFC3339), title: it.Title, detail: it.Action}
		switch it.Kind {
		case "review":
			e.kind, e.detail = "decision", fmt.Sprintf("%s %s (%s)", it.ID, it.Action, it.Type)
		default:
			e.kind, e.page, e.rev = "write", it.ID, it.Rev
			if e.page == "" {
				e.page = it.Path
			}
			if it.Rev > 0 {
				e.detail = fmt.Sprintf("%s · revision %d · %s", it.Action, it.Rev, it.Path)
			}
			if it.From > 0 {
				e.detail += fmt.Sprintf(" (from revision %d)", it.From)
			}
		}
		es = append(es, e)
	}
	return es, nil
}

// decisions are the last decided review items.
func (s activitySource) decisions() ([]entry, error) {
	first, err := call[ops.ListReviewsOut](s.ctx, s.c, "review.list", map[string]any{"status": "resolved", "limit": 1})
	if err != nil {
		return nil, err
	}
	off := max(0, first.Total-decisionsShown)
	out, err := call[ops.ListReviewsOut](s.ctx, s.c, "review.list", map[string]any{"status": "resolved", "limit": decisionsShown, "offset": off})
	if err != nil {
		return nil, err
	}
	return decisionEntries(out.Items), nil
}

// logEntry matches a write's line in wiki/log.md.
var logEntry = regexp.MustCompile(`^## \[(\d{4}-\d\d-\d\d)\] (\w[\w-]*) \| (.+)$`)

// writesShown bounds the writes read from the log.
const writesShown = 100

// logWrites are the last writes wiki/log.md records (a vault without a
// log has none).
func (s activitySource) logWrites() ([]entry, error) {
	p, err := call[ops.GetPageOut](s.ctx, s.c, "page.get", map[string]string{"title": "wiki/log.md"})
	if errs.CodeOf(err) == errs.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	lines := strings.Split(p.Content, "\n")
	var es []entry
	for i := len(lines) - 1; i >= 0 && len(es) < writesShown; i-- {
		if g := logEntry.FindStringSubmatch(strings.TrimSpace(lines[i])); g != nil {
			es = append(es, entry{kind: "write", when: g[1], title: g[3], detail: g[2], page: g[3]})
		}
	}
	return es, nil
}

// revision is a revision as page.diff names it.
type revision struct {
	Rev    int    `json:"rev"`
	SHA256 string `json:"sha256"`
}

// diffOut is what the desk reads of page.diff.
type diffOut struct {
	From *revision `json:"from"`
	To   revision  `json:"to"`
	Diff string    `json:"diff"`
}

// pageDiff is the diff of e's write against the revision before it.
func (s activitySource) pageDiff(e entry) (*diffOut, error) {
	if why := s.missing(opDiff); why != "" {
		return nil, errs.E(errs.Unavailable, "%s", why)
	}
	in := map[string]any{"title": e.page}
	if e.rev > 0 {
		in["rev"] = e.rev
	}
	return call[diffOut](s.ctx, s.c, opDiff, in)
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
	}
	return d.Diff, nil
}

// restore writes back the revision before e's write, through the restore
// operation (itself a write and a revision, so it can be undone).
func (s activitySource) restore(e entry) (string, error) {
	if why := s.missing(opDiff, opRestore); why != "" {
		return "", errs.E(errs.Unavailable, "%s", why)
	}
	d, err := s.pageDiff(e)
	if err != nil {
		return "", err
	}
	if d.From == nil {
		return "", errs.E(errs.Invalid, "this write created %q: there is no revision before it to restore", e.title)
	}
	_, err = call[struct{}](s.ctx, s.c, opRestore, map[string]any{"title": e.page, "rev": d.From.Rev})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("restored %q to revision %d", e.title, d.From.Rev), nil
}
