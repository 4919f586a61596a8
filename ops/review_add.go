package ops

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/store"
)

// review.add

// AddReviewIn is the input of review add.
type AddReviewIn struct {
	Type            string   `json:"type" required:"true" desc:"missing-page, suggestion, contradiction, duplicate, confirm, purpose-suggestion or schema-suggestion"`
	Title           string   `json:"title" required:"true" desc:"What the item proposes (≤ 200 characters); for missing-page, the page title"`
	Rationale       string   `json:"rationale,omitempty" desc:"Why (≤ 16 KiB); a create action puts it in the stub page or appends it to purpose.md/schema.md"`
	Page            string   `json:"page,omitempty" desc:"The page the item is about"`
	Source          string   `json:"source,omitempty" desc:"The raw source the item is about"`
	ReferencedPages []string `json:"referenced_pages,omitempty" flag:"ref" desc:"A related page (at most 8)"`
	SearchQueries   []string `json:"search_queries,omitempty" flag:"query" desc:"A search query for research (at most 3)"`
	Origin          string   `json:"origin,omitempty" default:"agent" enum:"agent,user" desc:"Who proposes it: agent (default) or user"`
}

// AddReviewOut is the result of review add: what happened and the item.
type AddReviewOut struct {
	Outcome string     `json:"outcome"` // added, refreshed or already_terminal
	Item    ReviewItem `json:"item"`
}

// WasCreated reports a new item (REST: 201 Created).
func (o *AddReviewOut) WasCreated() bool { return o.Outcome == EnqueueAdded }

var opAddReview = register(Op{
	Name: "review.add", Summary: "Propose a review item (idempotent: the same type and title never pile up)",
	CLI: "review add", REST: []Route{{Method: "POST", Path: "/review/queue", Body: "*"}},
	Access: Write, Limits: "title ≤ 200 characters, rationale ≤ 16 KiB, referenced pages ≤ 8, search queries ≤ 3 (lists clamped)",
}, addReview)

func addReview(ctx context.Context, e *Env, in *AddReviewIn) (*AddReviewOut, error) {
	p := &Proposal{Type: in.Type, Title: in.Title, Rationale: in.Rationale, Page: in.Page, Source: in.Source,
		ReferencedPages: in.ReferencedPages, SearchQueries: in.SearchQueries, Origin: in.Origin}
	if o := strings.ToLower(p.Origin); o != OriginAgent && o != OriginUser {
		return nil, errs.E(errs.Invalid, "unknown origin %q; review add takes agent or user (rule and lint are synapse's own producers)", in.Origin)
	}
	if err := p.clean(); err != nil {
		return nil, err
	}
	out := &AddReviewOut{}
	err := e.Store.Update(func(tx *store.Tx) error {
		r, outcome, err := enqueue(tx, p, e.now())
		if err != nil {
			return err
		}
		out.Outcome, out.Item = outcome, itemOf(r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// producers and status

func init() {
	reviewHooks.OnPageWritten = onPageWritten
	statusHooks = append(statusHooks, func(tx *store.Tx, out *StatusOut) error {
		counts := tx.ReviewStatusCounts()
		for _, s := range ReviewStatuses {
			out.Reviews[s] = counts[s]
		}
		return nil
	})
}

// onPageWritten is write_page's producer (SPEC §4.2): an idempotent
// missing-page item (origin rule) per dangling target, and pending
// missing-page items that the page satisfies by title or alias become
// auto_resolved. A target that cannot be a review title (too long) is
// skipped rather than failing the write. It returns the targets filed as
// new items.
func onPageWritten(tx *store.Tx, page *store.PageRec, dangling []string, now time.Time) ([]string, error) {
	var filed []string
	for _, t := range dangling {
		p := &Proposal{Type: TypeMissingPage, Title: t, Origin: OriginRule, Page: page.Path,
			ReferencedPages: []string{page.Title},
			Rationale:       fmt.Sprintf("[[%s]] links to %q; no page had that name when it was written.", page.Title, t)}
		if p.clean() != nil {
			continue
		}
		_, how, err := enqueue(tx, p, now)
		if err != nil {
			return nil, err
		}
		if how == EnqueueAdded {
			filed = append(filed, t)
		}
	}
	for _, name := range append([]string{page.Title}, page.Aliases...) {
		if _, err := autoResolveMissing(tx, name, "page written: "+page.Path, now); err != nil {
			return nil, err
		}
	}
	return filed, nil
}

// autoResolveMissing marks the pending missing-page item for name
// auto_resolved, unless a command is acting on it. It reports whether an
// item changed.
func autoResolveMissing(tx *store.Tx, name, resolution string, now time.Time) (bool, error) {
	r, err := tx.ReviewByKey(ReviewKey(TypeMissingPage, name))
	if err != nil || r == nil || r.Terminal() || claimed(r, now) {
		return false, err
	}
	return true, decide(tx, r, StatusAutoResolved, resolution, now)
}
