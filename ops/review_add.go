package ops

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// review.add

// AddReviewIn is the input of review add.
type AddReviewIn struct {
	Type            string   `json:"type" required:"true" desc:"missing-page, suggestion, contradiction, duplicate, confirm, purpose-suggestion or schema-suggestion"`
	Title           string   `json:"title" required:"true" desc:"What the item proposes (≤ 200 characters); for missing-page, the page title"`
	Rationale       string   `json:"rationale,omitempty" desc:"Why (≤ 16 KiB); a create action puts it in the stub page or appends it to purpose.md/schema.md"`
	Page            string   `json:"page,omitempty" desc:"The page the item is about"`
	Source          string   `json:"source,omitempty" desc:"The raw source the item is about"`
	ReferencedPages []string `json:"referenced_pages,omitempty" flag:"ref" desc:"A related page (at most 8): its title or its vault path (wiki/…/x.md: a path when the title is ambiguous), kept as given"`
	SearchQueries   []string `json:"search_queries,omitempty" flag:"query" desc:"A search query for research (at most 3)"`
	Origin          string   `json:"origin,omitempty" enum:"agent,user" tty:"user" desc:"Who proposes it: user or agent (default agent; the CLI's default is user when its standard input is a terminal)"`
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
	Examples: []Example{{`synapse review add --type contradiction --title "Two dates for the launch" --rationale "Plan says May, memo says June" --ref Plan --ref Memo`, "propose work (adding it again refreshes it)"}},
}, addReview)

func addReview(ctx context.Context, e *Env, in *AddReviewIn) (*AddReviewOut, error) {
	p := &Proposal{Type: in.Type, Title: in.Title, Rationale: in.Rationale, Page: in.Page, Source: in.Source,
		ReferencedPages: in.ReferencedPages, SearchQueries: in.SearchQueries, Origin: in.Origin}
	var err error
	if p.Origin, err = callerOrigin("origin", p.Origin); err != nil {
		return nil, err
	}
	if err := p.clean(); err != nil {
		return nil, err
	}
	if err := e.syncQueue(); err != nil {
		return nil, err
	}
	out := &AddReviewOut{}
	err = e.Store.Update(func(tx *store.Tx) error {
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

// reviewStatus adds the review queue's counts and its journal's state to
// a status.
func reviewStatus(tx *store.Tx, l *vaultfs.FS, out *StatusOut) {
	counts := tx.ReviewStatusCounts()
	for _, s := range ReviewStatuses {
		out.Reviews[s] = counts[s]
	}
	out.ReviewsDecidedBy = tx.ReviewDeciderCounts()
	out.ReviewJournal = journalStatus(tx, l)
}

// onPageWritten is write_page's producer: an idempotent missing-page item
// (origin rule) per dangling target, and the pending missing-page items
// whose target a link now reaches, as Obsidian resolves it, through any
// of the page's names (its title, an alias, its file name, its path or a
// path suffix: pageNames) become auto_resolved, decided by rule. A target
// that cannot be a review title (too long) is skipped rather than failing
// the write. It returns the targets filed as new items and the items
// resolved.
func onPageWritten(tx *store.Tx, page *store.PageRec, dangling []string, why string, now time.Time) (reviewsTouched, error) {
	var filed []string
	var resolved []ReviewItem
	for _, t := range dangling {
		p := &Proposal{Type: TypeMissingPage, Title: t, Origin: OriginRule, Page: page.Path,
			ReferencedPages: []string{page.Title},
			Rationale:       fmt.Sprintf("[[%s]] links to %q; no page had that name when it was written.", page.Title, t)}
		if p.clean() != nil {
			continue
		}
		_, how, err := enqueue(tx, p, now)
		if err != nil {
			return reviewsTouched{}, err
		}
		if how == EnqueueAdded {
			filed = append(filed, t)
		}
	}
	for _, name := range pageNames(page) {
		r, err := tx.ReviewByKey(ReviewKey(TypeMissingPage, name))
		if err != nil {
			return reviewsTouched{}, err
		}
		if r == nil || r.Terminal() || claimed(r, now) {
			continue
		}
		// the name is one of the page's, but a link by it may reach
		// another page first (a shorter path): either way no page is
		// missing; a name that reaches nothing (a path suffix shared by
		// two folders) stays pending
		if p, err := pageAnswering(tx, ProposedTitle(r.Title)); err != nil {
			return reviewsTouched{}, err
		} else if p == nil {
			continue
		}
		res := fmt.Sprintf("page written: %s (it answers [[%s]] by its %s)", page.Path, ProposedTitle(r.Title), nameKind(page, name))
		if err := decideNoted(tx, r, StatusAutoResolved, res, OriginRule, why, now); err != nil {
			return reviewsTouched{}, err
		}
		resolved = append(resolved, itemOf(r))
	}
	return reviewsTouched{filed: filed, resolved: resolved}, nil
}

// nameKind says which of a page's names (pageNames) name is: its
// "title", an "alias", its "file name" or its "path".
func nameKind(p *store.PageRec, name string) string {
	f := store.Fold(name)
	switch {
	case f == store.Fold(p.Title):
		return "title"
	case slices.ContainsFunc(p.Aliases, func(a string) bool { return store.Fold(a) == f }):
		return "alias"
	case f == store.Fold(store.Stem(p.Path)):
		return "file name"
	}
	return "path"
}

// pageNames are the names by which a link can reach a page: its title, its
// aliases, its vault path and every suffix of it down to the file name
// (without ".md": wiki/concepts/work-folders, concepts/work-folders,
// work-folders), each once.
func pageNames(p *store.PageRec) []string {
	names := append([]string{p.Title}, p.Aliases...)
	parts := strings.Split(strings.TrimSuffix(p.Path, path.Ext(p.Path)), "/")
	for i := range parts {
		names = append(names, strings.Join(parts[i:], "/"))
	}
	seen := map[uint64]bool{}
	out := names[:0]
	for _, n := range names {
		if k := ReviewKey(TypeMissingPage, n); n != "" && !seen[k] {
			seen[k] = true
			out = append(out, n)
		}
	}
	return out
}

// autoResolveMissing marks the pending missing-page item for name
// auto_resolved, decided by a producer (by: rule or lint), unless a
// command is acting on it. It reports whether an item changed.
func autoResolveMissing(tx *store.Tx, name, by, resolution string, now time.Time) (bool, error) {
	r, err := tx.ReviewByKey(ReviewKey(TypeMissingPage, name))
	if err != nil || r == nil || r.Terminal() || claimed(r, now) {
		return false, err
	}
	return true, decide(tx, r, StatusAutoResolved, resolution, by, now)
}
