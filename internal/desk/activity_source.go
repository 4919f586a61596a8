package desk

import (
	"context"
	"regexp"
	"strings"

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
var (
	opsRecent  = []string{"page.recent"}
	opsDiff    = []string{"page.diff"}
	opsRestore = []string{"page.restore", "page.history"}
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
	return "this synapse has no page history yet (" + strings.Join(lack, ", ") + "): diffs and restore need it"
}

// recent is the activity, newest first, and a note on what is missing.
func (s activitySource) recent() ([]entry, string, error) {
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
	return es, s.missing(append(opsDiff, opsRestore...)...), nil
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

// diff is the unified diff of a write against the revision before it.
func (s activitySource) diff(e entry) (string, error) {
	if why := s.missing(opsDiff...); why != "" {
		return "", errs.E(errs.Unavailable, "%s", why)
	}
	out, err := call[struct {
		Diff string `json:"diff"`
	}](s.ctx, s.c, "page.diff", map[string]any{"title": e.page})
	if err != nil {
		return "", err
	}
	return out.Diff, nil
}

// restore writes back the revision before e's write.
func (s activitySource) restore(e entry) (string, error) {
	if why := s.missing(opsRestore...); why != "" {
		return "", errs.E(errs.Unavailable, "%s", why)
	}
	return "", errs.E(errs.Unavailable, "restore is not wired to this build's history yet")
}
