package ops

import (
	"context"
	"slices"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/store"
)

// bulk

// BulkResolveIn is the input of bulk-resolve.
type BulkResolveIn struct {
	IDs    []string `json:"ids" arg:"0" required:"true" cli:"stdin-list" desc:"Review item ids (at most 200); \"-\" reads them from standard input"`
	Action string   `json:"action" required:"true" desc:"skip, dismiss or resolve (alias mark-resolved)"`
	// DecidedBy: as resolve_review's
	DecidedBy string `json:"decided_by,omitempty" flag:"by" enum:"user,agent" tty:"user" desc:"Who decides: user (a person decided, or approved this decision when an agent asked) or agent (the agent decided on its own; default agent; the CLI's default is user when its standard input is a terminal); each item records it as decided_by"`
	Note      string `json:"note,omitempty" desc:"Why, in one line (≤ 500 characters): kept on each item decided, in the review journal, in the wiki/log.md entry and in recent"`
}

// TerminalRef names an item that was already decided.
type TerminalRef struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// BulkResolveOut is the result of bulk-resolve: what was decided now, what
// had been decided before (left unchanged) and which ids match no item.
type BulkResolveOut struct {
	Count           int           `json:"count"`  // items decided by this request
	Status          string        `json:"status"` // the status they now have: skipped, dismissed or auto_resolved
	Resolved        []string      `json:"resolved"`
	AlreadyTerminal []TerminalRef `json:"already_terminal"`
	NotFound        []string      `json:"not_found"`
}

var opBulkResolve = register(Op{
	Name: "review.bulk_resolve", Summary: "Decide many review items in one transaction",
	CLI:        "review bulk-resolve",
	REST:       []Route{{Method: "POST", Path: "/review/queue/bulk-resolve", Body: "*"}},
	Access:     Write,
	Limits:     "at most 200 ids, more is refused before anything changes (REST 422); actions skip, dismiss, resolve",
	RESTStatus: map[errs.Code]int{errs.TooLarge: 422},
	Examples: []Example{
		{`synapse review bulk-resolve --action skip k3j9xq p0w2mm`, "decide several items in one transaction"},
		{`synapse review bulk-resolve --action skip --note "the user restores raw files" k3j9xq p0w2mm`, "the same reason on each item and in one log entry"},
		{`synapse review list --json | jq -r '.items[].id' | synapse review bulk-resolve --action dismiss -`, "ids from standard input"},
	},
	Exits: map[int]string{2: "invalid: more than 200 ids, or an action other than skip, dismiss, resolve"},
}, func(ctx context.Context, e *Env, in *BulkResolveIn) (*BulkResolveOut, error) {
	return bulkResolve(ctx, e, in.IDs, in.Action, in.DecidedBy, in.Note)
})

// BulkIn is the body of the UI bulk route.
type BulkIn struct {
	IDs    []string `json:"ids" required:"true" desc:"Review item ids (at most 200)"`
	Action string   `json:"action" required:"true" enum:"skip,dismiss,mark-resolved" desc:"skip, dismiss or mark-resolved"`
	// DecidedBy defaults to a person: this is the web UI's form
	DecidedBy string `json:"decided_by,omitempty" default:"user" enum:"user,agent" desc:"Who decides: user (default: the form of a UI a person uses) or agent; each item records it as decided_by"`
}

// BulkOut is the result of the UI bulk route: counts only.
type BulkOut struct {
	Updated         int `json:"updated"`
	SkippedTerminal int `json:"skipped_terminal"`
	NotFound        int `json:"not_found"`
}

var opBulk = register(Op{
	Name: "review.bulk", Summary: "Decide many review items (web UI form of bulk-resolve)",
	REST:       []Route{{Method: "POST", Path: "/review/queue/bulk", Body: "*"}},
	Access:     Write,
	Limits:     "at most 200 ids, more is refused before anything changes (REST 400); actions skip, dismiss, mark-resolved",
	RESTStatus: map[errs.Code]int{errs.TooLarge: 400},
}, func(ctx context.Context, e *Env, in *BulkIn) (*BulkOut, error) {
	r, err := bulkResolve(ctx, e, in.IDs, in.Action, in.DecidedBy, "")
	if err != nil {
		return nil, err
	}
	return &BulkOut{Updated: r.Count, SkippedTerminal: len(r.AlreadyTerminal), NotFound: len(r.NotFound)}, nil
})

// bulkResolve applies a status-only action to up to MaxBulkIDs items in one
// transaction, recording who decided (by: user or agent; "" is an agent) and why (note). Duplicate ids count once. Errors: too_large (more than 200
// ids; nothing changes), invalid (no ids, an unknown action, or create /
// deep-research, which act on one item at a time).
func bulkResolve(ctx context.Context, e *Env, ids []string, action, by, note string) (*BulkResolveOut, error) {
	if len(ids) > MaxBulkIDs {
		return nil, errs.E(errs.TooLarge, "%d ids given; a bulk request takes at most %d (nothing was changed)", len(ids), MaxBulkIDs)
	}
	act, err := parseAction(action, ReviewActions)
	if err != nil {
		return nil, err
	}
	if by, err = callerOrigin("decided_by", by); err != nil {
		return nil, err
	}
	if note, err = checkNote("note", note); err != nil {
		return nil, err
	}
	if !slices.Contains(bulkActions, act) {
		return nil, errs.E(errs.Invalid, "bulk requests take %s; %s acts on one item at a time: %s",
			strings.Join(bulkActions, ", "), act, errs.Cmd("review.resolve", "id", "ID", "action", act))
	}
	var uniq []string
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id != "" && !slices.Contains(uniq, id) {
			uniq = append(uniq, id)
		}
	}
	if len(uniq) == 0 {
		return nil, errs.E(errs.Invalid, "no review ids given")
	}
	if err := checkLogWritable(e.Vault); err != nil { // decisions are logged
		return nil, err
	}
	var decided []ReviewItem
	if err := e.syncQueue(); err != nil {
		return nil, err
	}
	out := &BulkResolveOut{Status: actionStatus[act], Resolved: []string{}, AlreadyTerminal: []TerminalRef{}, NotFound: []string{}}
	err = e.Store.Update(func(tx *store.Tx) error {
		now := e.now()
		seen := map[string]bool{} // item ids: one item may be named in several spellings
		for _, id := range uniq {
			r, err := tx.ReviewByID(id)
			if err != nil {
				return err
			}
			switch {
			case r == nil:
				out.NotFound = append(out.NotFound, id)
			case seen[r.ID]:
				continue
			case r.Terminal():
				out.AlreadyTerminal = append(out.AlreadyTerminal, TerminalRef{ID: r.ID, Status: r.Status})
			case claimed(r, now):
				return decidable(r, now)
			default:
				if err := decideNoted(tx, r, actionStatus[act], simpleResolution[act], by, note, now); err != nil {
					return err
				}
				out.Resolved = append(out.Resolved, r.ID)
				decided = append(decided, itemOf(r))
			}
			if r != nil {
				seen[r.ID] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Count = len(out.Resolved)
	return out, logDecisions(ctx, e, decided)
}
