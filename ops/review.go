package ops

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// The review queue (docs/review.md): typed proposals from producers (write_page,
// lint, agents, users) that a human decides. Two promises hold on every
// path: a decided (terminal) item is never changed again, and the same
// proposal never piles up twice (idempotent enqueue by ReviewKey).

// Review item types.
const (
	TypeMissingPage       = "missing-page"
	TypeSuggestion        = "suggestion"
	TypeContradiction     = "contradiction"
	TypeDuplicate         = "duplicate"
	TypeConfirm           = "confirm"
	TypePurposeSuggestion = "purpose-suggestion"
	TypeSchemaSuggestion  = "schema-suggestion"
)

// ReviewTypes lists every review item type.
var ReviewTypes = []string{TypeMissingPage, TypeSuggestion, TypeContradiction, TypeDuplicate,
	TypeConfirm, TypePurposeSuggestion, TypeSchemaSuggestion}

// Review item origins: who proposed the item.
const (
	OriginRule  = "rule"  // write_page, for a dangling link
	OriginLint  = "lint"  // synapse lint --to-review
	OriginAgent = "agent" // review add (default)
	OriginUser  = "user"  // review add --origin user
)

// Review statuses: pending is live, every other one is terminal.
const (
	StatusPending        = store.ReviewPending
	StatusCreated        = "created"
	StatusSkipped        = "skipped"
	StatusDismissed      = "dismissed"
	StatusDeepResearched = "deep_researched"
	StatusAutoResolved   = "auto_resolved"
)

// ReviewStatuses lists every status, pending first.
var ReviewStatuses = []string{StatusPending, StatusCreated, StatusSkipped, StatusDismissed,
	StatusDeepResearched, StatusAutoResolved}

// Review actions.
const (
	ActionSkip         = "skip"
	ActionDismiss      = "dismiss"
	ActionResolve      = "resolve"
	ActionMarkResolved = "mark-resolved" // alias of resolve
	ActionCreate       = "create"
	ActionDeepResearch = "deep-research"
)

// ReviewActions lists every action, aliases included.
var ReviewActions = []string{ActionSkip, ActionDismiss, ActionResolve, ActionMarkResolved, ActionCreate, ActionDeepResearch}

// actionStatus maps each action to the terminal status it leads to.
var actionStatus = map[string]string{
	ActionSkip: StatusSkipped, ActionDismiss: StatusDismissed, ActionResolve: StatusAutoResolved,
	ActionMarkResolved: StatusAutoResolved, ActionCreate: StatusCreated, ActionDeepResearch: StatusDeepResearched,
}

// bulkActions are the actions a bulk verb applies: those that only change
// the status, so that a whole batch commits in one transaction.
var bulkActions = []string{ActionSkip, ActionDismiss, ActionResolve, ActionMarkResolved}

// Caps of review items. Lists beyond their cap are clamped.
const (
	MaxReviewTitle     = 200      // characters; longer titles are invalid
	MaxReviewRationale = 16 << 10 // bytes; longer is too_large
	MaxReviewField     = 1000     // characters of page, source and list entries
	MaxReferencedPages = 8
	MaxSearchQueries   = 3
	MaxBulkIDs         = 200 // ids per bulk request; more is refused before anything changes
)

// ReviewItem is a review item as every surface shows it.
type ReviewItem struct {
	ID              string   `json:"id"`
	Type            string   `json:"type"`
	Status          string   `json:"status"`
	Resolution      string   `json:"resolution"` // how it was decided: the page written, the research output…
	Title           string   `json:"title"`
	Rationale       string   `json:"rationale"`
	Page            string   `json:"page"`   // the page the item is about (a vault path or title)
	Source          string   `json:"source"` // the raw source it is about
	ReferencedPages []string `json:"referenced_pages"`
	SearchQueries   []string `json:"search_queries"`
	Origin          string   `json:"origin"`
	CreatedAt       string   `json:"created_at"`  // RFC 3339, UTC
	ReviewedAt      *string  `json:"reviewed_at"` // RFC 3339, UTC; null while pending
}

func itemOf(r *store.ReviewRec) ReviewItem {
	it := ReviewItem{ID: r.ID, Type: r.Type, Status: r.Status, Resolution: r.Resolution, Title: r.Title,
		Rationale: r.Rationale, Page: r.Page, Source: r.Source, Origin: r.Origin,
		ReferencedPages: nonNil(r.Referenced), SearchQueries: nonNil(r.Queries),
		CreatedAt: rfc3339(r.CreatedNS)}
	if r.ReviewedNS != 0 {
		s := rfc3339(r.ReviewedNS)
		it.ReviewedAt = &s
	}
	return it
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// proposalPrefixes are the words a producer may put before the proposed
// title ("Missing page: Example"); they are not part of the proposal.
var proposalPrefixes = []string{"missing page", "missing", "create page", "create", "new page", "page",
	"stub", "todo", "suggestion", "proposal"}

// ProposedTitle returns the title a proposal is about: whitespace
// collapsed, a leading proposal prefix ("Missing page:", "Create:", …)
// and surrounding [[ ]] removed, case kept. "Missing page:  [[Example]]"
// → "Example".
func ProposedTitle(title string) string {
	t := strings.Join(strings.Fields(title), " ")
	for {
		head, rest, ok := strings.Cut(t, ":")
		rest = strings.TrimSpace(rest)
		switch {
		case ok && rest != "" && slices.Contains(proposalPrefixes, strings.ToLower(strings.TrimSpace(head))):
			t = rest
		case len(t) > 4 && strings.HasPrefix(t, "[[") && strings.HasSuffix(t, "]]"):
			t = strings.TrimSpace(t[2 : len(t)-2])
		default:
			return t
		}
	}
}

// ReviewKey is the idempotency key of a proposal (docs/review.md): FNV-1a 64 of
// type, 0x1f and the normalized title (ProposedTitle, NFC, lowercased).
func ReviewKey(typ, title string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(typ))
	h.Write([]byte{0x1f})
	h.Write([]byte(store.Fold(ProposedTitle(title))))
	return h.Sum64()
}

// Proposal is what a producer asks to put in the queue.
type Proposal struct {
	Type            string
	Title           string
	Rationale       string
	Page            string
	Source          string
	ReferencedPages []string
	SearchQueries   []string
	Origin          string
}

// clean validates p and brings it to its stored form. Errors are invalid
// (naming the field) or too_large (the rationale).
func (p *Proposal) clean() error {
	p.Type = strings.ToLower(strings.TrimSpace(p.Type))
	if !slices.Contains(ReviewTypes, p.Type) {
		return errs.E(errs.Invalid, "unknown review type %q; valid types: %s", p.Type, strings.Join(ReviewTypes, ", "))
	}
	p.Origin = strings.ToLower(strings.TrimSpace(p.Origin))
	if !slices.Contains([]string{OriginRule, OriginLint, OriginAgent, OriginUser}, p.Origin) {
		return errs.E(errs.Invalid, "unknown origin %q; valid origins: rule, lint, agent, user", p.Origin)
	}
	p.Title = strings.Join(strings.Fields(p.Title), " ")
	if err := checkText("title", p.Title, MaxReviewTitle); err != nil {
		return err
	}
	if ProposedTitle(p.Title) == "" {
		return errs.E(errs.Invalid, "title is required")
	}
	p.Rationale = strings.TrimSpace(p.Rationale)
	if len(p.Rationale) > MaxReviewRationale {
		return errs.E(errs.TooLarge, "rationale is %d bytes; at most %d are allowed", len(p.Rationale), MaxReviewRationale)
	}
	if !utf8.ValidString(p.Rationale) {
		return errs.E(errs.Invalid, "rationale is not valid UTF-8")
	}
	p.Page, p.Source = strings.TrimSpace(p.Page), strings.TrimSpace(p.Source)
	if err := checkText("page", p.Page, MaxReviewField); err != nil {
		return err
	}
	if err := checkText("source", p.Source, MaxReviewField); err != nil {
		return err
	}
	var err error
	if p.ReferencedPages, err = cleanList("referenced_pages", p.ReferencedPages, MaxReferencedPages); err != nil {
		return err
	}
	p.SearchQueries, err = cleanList("search_queries", p.SearchQueries, MaxSearchQueries)
	return err
}

// checkText refuses invalid UTF-8, control characters and more than max
// characters.
func checkText(name, s string, max int) error {
	if !utf8.ValidString(s) {
		return errs.E(errs.Invalid, "%s is not valid UTF-8", name)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return errs.E(errs.Invalid, "%s is %d characters; at most %d are allowed", name, n, max)
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return errs.E(errs.Invalid, "%s contains a control character", name)
	}
	return nil
}

// cleanList trims entries, drops empty ones and duplicates, checks each and
// clamps the list to max entries.
func cleanList(name string, l []string, max int) ([]string, error) {
	var out []string
	for _, s := range l {
		s = strings.Join(strings.Fields(s), " ")
		if s == "" || slices.Contains(out, s) {
			continue
		}
		if err := checkText(name+" entry", s, MaxReviewField); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) > max {
		out = out[:max]
	}
	return out, nil
}

// Enqueue outcomes.
const (
	EnqueueAdded           = "added"            // a new pending item
	EnqueueRefreshed       = "refreshed"        // a pending item with the same key was updated in place
	EnqueueAlreadyTerminal = "already_terminal" // an item with the same key was decided; left alone
)

// enqueue files p idempotently in tx. A pending item with the
// same key is refreshed in place with the fields p provides — title, and
// rationale, page and source when non-empty; referenced pages and search
// queries are merged, newest first, within their caps — keeping its id,
// type, origin, creation time and queue position. A terminal match is left
// alone: the human's decision wins. p must have been cleaned.
func enqueue(tx *store.Tx, p *Proposal, now time.Time) (*store.ReviewRec, string, error) {
	k := ReviewKey(p.Type, p.Title)
	old, err := tx.ReviewByKey(k)
	if err != nil {
		return nil, "", err
	}
	if old == nil {
		r := &store.ReviewRec{Key: k, Type: p.Type, Status: StatusPending, Title: p.Title, Rationale: p.Rationale,
			Page: p.Page, Source: p.Source, Referenced: p.ReferencedPages, Queries: p.SearchQueries,
			Origin: p.Origin, CreatedNS: now.UnixNano()}
		if err := tx.PutReview(r); err != nil {
			return nil, "", err
		}
		return r, EnqueueAdded, nil
	}
	if old.Terminal() {
		return old, EnqueueAlreadyTerminal, nil
	}
	r := *old
	r.Title = p.Title
	r.Rationale = cmp.Or(p.Rationale, r.Rationale)
	r.Page = cmp.Or(p.Page, r.Page)
	r.Source = cmp.Or(p.Source, r.Source)
	r.Referenced = mergeList(p.ReferencedPages, old.Referenced, MaxReferencedPages)
	r.Queries = mergeList(p.SearchQueries, old.Queries, MaxSearchQueries)
	if !sameReview(&r, old) {
		if err := tx.PutReview(&r); err != nil {
			return nil, "", err
		}
	}
	return &r, EnqueueRefreshed, nil
}

func mergeList(newer, older []string, max int) []string {
	out := append([]string(nil), newer...)
	for _, s := range older {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) > max {
		out = out[:max]
	}
	return out
}

func sameReview(a, b *store.ReviewRec) bool {
	return a.Title == b.Title && a.Rationale == b.Rationale && a.Page == b.Page && a.Source == b.Source &&
		slices.Equal(a.Referenced, b.Referenced) && slices.Equal(a.Queries, b.Queries)
}

// parseAction returns the canonical action (mark-resolved → resolve), or
// invalid listing the valid ones.
func parseAction(a string, valid []string) (string, error) {
	a = strings.ToLower(strings.TrimSpace(a))
	if !slices.Contains(valid, a) {
		return "", errs.E(errs.Invalid, "unknown action %q; valid actions: %s", a, strings.Join(valid, ", "))
	}
	if a == ActionMarkResolved {
		a = ActionResolve
	}
	return a, nil
}

// findReview returns the item with a public id, or not_found.
func findReview(tx *store.Tx, id string) (*store.ReviewRec, error) {
	r, err := tx.ReviewByID(id)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errs.E(errs.NotFound, "no review item %q; see `%s`", id, errs.Cmd("review.list", "status", "all"))
	}
	return r, nil
}

// claimed reports whether a command is acting on a pending item: its
// claim's deadline is ahead and the process that took it is still there
// (one killed meanwhile holds nothing).
func claimed(tx *store.Tx, r *store.ReviewRec, now time.Time) bool {
	return r.ClaimNS > now.UnixNano() && !tx.ClaimHolderGone(r.Seq)
}

// decidable returns a conflict naming the status when r is terminal, or
// naming the claim when another command is acting on it.
func decidable(tx *store.Tx, r *store.ReviewRec, now time.Time) error {
	if r.Terminal() {
		return errs.E(errs.Conflict, "review item %s is already %s; a decided item is never changed", r.ID, r.Status)
	}
	if claimed(tx, r, now) {
		return errs.E(errs.Conflict, "review item %s is being acted on by another command (until %s); try again then",
			r.ID, time.Unix(0, r.ClaimNS).UTC().Format(time.RFC3339))
	}
	return nil
}

// decide moves a pending item to a terminal status.
func decide(tx *store.Tx, r *store.ReviewRec, status, resolution string, now time.Time) error {
	r.Status, r.Resolution, r.ReviewedNS, r.ClaimNS = status, resolution, now.UnixNano(), 0
	if err := tx.ClearClaimHolder(r.Seq); err != nil {
		return err
	}
	return tx.PutReview(r)
}

// simpleResolution describes a decision that changes only the status.
var simpleResolution = map[string]string{
	ActionSkip: "skipped", ActionDismiss: "dismissed", ActionResolve: "marked resolved",
}

// ---- review.list ----------------------------------------------------------

// ListReviewsIn is the input of list_reviews.
type ListReviewsIn struct {
	Status string `json:"status,omitempty" default:"pending" desc:"pending (default; open is an alias), created, skipped, dismissed, deep_researched, auto_resolved, resolved (every decided item) or all"`
	Type   string `json:"type,omitempty" desc:"Only items of this type (missing-page, suggestion, contradiction, duplicate, confirm, purpose-suggestion, schema-suggestion)"`
	Origin string `json:"origin,omitempty" desc:"Only items from this origin (rule, lint, agent, user)"`
	Text   string `json:"text,omitempty" desc:"Only items whose id, title, rationale, page, source or referenced pages contain this text (case-insensitive)"`
	Limit  int    `json:"limit,omitempty" default:"50" min:"1" max:"100" desc:"Maximum items to return (1..100, default 50; larger values are clamped)"`
	Offset int    `json:"offset,omitempty" min:"0" desc:"Items to skip"`
}

// ListReviewsOut is the result of list_reviews: the matching items, oldest
// first, and how many match in all.
type ListReviewsOut struct {
	Total int          `json:"total"`
	Items []ReviewItem `json:"items"`
}

var opListReviews = register(Op{
	Name: "review.list", Summary: "List review items, oldest first",
	CLI: "review list", MCP: "list_reviews", REST: []Route{{Method: "GET", Path: "/review/queue"}},
	Access: Read, Limits: "limit 1..100 (default 50)",
	Title: "List review items",
	Examples: []Example{
		{`synapse review list`, "pending items, oldest first"},
		{`synapse review list --type missing-page --status all --json`, "every missing-page item, decided ones too"},
		{`synapse review list --origin lint --text coffee`, "pending items lint filed that mention coffee"},
	},
}, listReviews)

// listStatuses is the status vocabulary of list_reviews, for messages.
var listStatuses = append(append([]string{}, ReviewStatuses...), "open", store.ReviewClassResolved, store.ReviewClassAll)

func listReviews(ctx context.Context, e *Env, in *ListReviewsIn) (*ListReviewsOut, error) {
	class := strings.ToLower(in.Status)
	if class == "open" {
		class = StatusPending
	}
	if !slices.Contains(listStatuses, class) {
		return nil, errs.E(errs.Invalid, "unknown review status %q; valid statuses: %s", in.Status, strings.Join(listStatuses, ", "))
	}
	typ := strings.ToLower(in.Type)
	if typ != "" && !slices.Contains(ReviewTypes, typ) {
		return nil, errs.E(errs.Invalid, "unknown review type %q; valid types: %s", in.Type, strings.Join(ReviewTypes, ", "))
	}
	match, err := reviewMatch(in.Origin, in.Text)
	if err != nil {
		return nil, err
	}
	out := &ListReviewsOut{Items: []ReviewItem{}}
	err = e.Store.View(func(tx *store.Tx) error {
		recs, total, err := tx.ListReviews(store.ReviewFilter{Type: typ, Class: class, Offset: in.Offset, Limit: in.Limit, Match: match})
		if err != nil {
			return err
		}
		out.Total = total
		for _, r := range recs {
			out.Items = append(out.Items, itemOf(r))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ---- review.resolve / review.patch ----------------------------------------

// ResolveReviewIn is the input of resolve_review.
type ResolveReviewIn struct {
	ID     string `json:"id" arg:"0" required:"true" several:"synapse review bulk-resolve --action ACTION ID..." desc:"Review item id (from list_reviews)"`
	Action string `json:"action" required:"true" desc:"skip, dismiss, resolve (alias mark-resolved), create (a stub page for a missing-page item or a suggestion titled 'Create page: Title'; a purpose/schema suggestion is appended to purpose.md/schema.md; other items refuse it) or deep-research (run $SYNAPSE_RESEARCH_CMD)"`
}

// ResolveReviewOut is the decided item, with the pages a create wrote.
type ResolveReviewOut struct {
	ReviewItem
	Pages []PageRef `json:"pages,omitempty"`
}

var opResolveReview = register(Op{
	Name: "review.resolve", Summary: "Decide a pending review item",
	CLI: "review resolve", MCP: "resolve_review",
	REST:   []Route{{Method: "POST", Path: "/review/queue/{id}/{action}"}},
	Access: Write, Limits: "a decided item is never changed (conflict)",
	// deep-research runs $SYNAPSE_RESEARCH_CMD; a repeated call is refused
	// (conflict), so it has no further effect
	OpenWorld: true, Idempotent: true,
	Title: "Decide a review item",
	Examples: []Example{
		{`synapse review resolve k3j9xq --action create`, "write the stub page the item proposes"},
		{`synapse review resolve k3j9xq --action dismiss --json`, "decide it; the item as JSON"},
	},
	Exits: map[int]string{
		3: "not found: no item has this id",
		4: "conflict: the item is already decided (the message names its status)",
		5: "unavailable: deep-research without $SYNAPSE_RESEARCH_CMD, or the research command failed",
	},
}, func(ctx context.Context, e *Env, in *ResolveReviewIn) (*ResolveReviewOut, error) {
	return resolveReview(ctx, e, in.ID, in.Action)
})

// PatchReviewIn is the body of PATCH /review/queue/{id}: an action, or the
// terminal status to move to (which names its action).
type PatchReviewIn struct {
	ID     string `json:"id" required:"true" desc:"Review item id"`
	Action string `json:"action,omitempty" desc:"skip, dismiss, resolve (alias mark-resolved), create or deep-research"`
	Status string `json:"status,omitempty" desc:"created, skipped, dismissed, deep_researched or auto_resolved (the action leading to it is taken)"`
}

// review.patch is REST only: the generic table cannot express "one of two
// body fields" on the resolve_review row without weakening its MCP schema
// (action required), so PATCH has a row of its own over the same function.
var opPatchReview = register(Op{
	Name: "review.patch", Summary: "Decide a pending review item by action or target status",
	REST:   []Route{{Method: "PATCH", Path: "/review/queue/{id}", Body: "*"}},
	Access: Write, Limits: "exactly one of action or status; a decided item is never changed (conflict)",
}, func(ctx context.Context, e *Env, in *PatchReviewIn) (*ResolveReviewOut, error) {
	switch {
	case in.Action != "" && in.Status != "":
		return nil, errs.E(errs.Invalid, "give either action or status, not both")
	case in.Action != "":
		return resolveReview(ctx, e, in.ID, in.Action)
	case in.Status == "":
		return nil, errs.E(errs.Invalid, "give an action (%s) or a status (%s)",
			strings.Join(ReviewActions, ", "), strings.Join(ReviewStatuses[1:], ", "))
	}
	st := strings.ToLower(in.Status)
	for _, a := range ReviewActions {
		if actionStatus[a] == st {
			return resolveReview(ctx, e, in.ID, a)
		}
	}
	return nil, errs.E(errs.Invalid, "status %q is not a decision; valid statuses: %s", in.Status, strings.Join(ReviewStatuses[1:], ", "))
})

// resolveReview decides one item. Errors: invalid (unknown action),
// not_found (unknown id), conflict (the item is decided, naming its
// status, or another command is acting on it), unavailable (deep-research
// without SYNAPSE_RESEARCH_CMD, or the research command failed), and the
// errors of write_page for create.
func resolveReview(ctx context.Context, e *Env, id, action string) (*ResolveReviewOut, error) {
	act, err := parseAction(action, ReviewActions)
	if err != nil {
		return nil, err
	}
	if act == ActionCreate || act == ActionDeepResearch {
		return resolveWithEffect(ctx, e, id, act)
	}
	out := &ResolveReviewOut{}
	err = e.Store.Update(func(tx *store.Tx) error {
		r, err := findReview(tx, id)
		if err != nil {
			return err
		}
		now := e.now()
		if err := decidable(tx, r, now); err != nil {
			return err
		}
		if err := decide(tx, r, actionStatus[act], simpleResolution[act], now); err != nil {
			return err
		}
		out.ReviewItem = itemOf(r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// claimForCreate bounds how long a create may hold an item.
const claimForCreate = 2 * time.Minute

// resolveWithEffect runs an action with a side effect outside the store
// (a page write, a file append, the research command) in three steps:
// claim the pending item (so that producers and other commands leave it
// alone — write_page's hook would otherwise auto-resolve the very item
// whose page create is writing), act, then decide it; if the act fails the
// claim is released and the item stays pending, unchanged.
func resolveWithEffect(ctx context.Context, e *Env, id, act string) (*ResolveReviewOut, error) {
	var research researchConfig
	var rec *store.ReviewRec
	err := e.Store.Update(func(tx *store.Tx) error {
		r, err := findReview(tx, id)
		if err != nil {
			return err
		}
		now := e.now()
		if err := decidable(tx, r, now); err != nil {
			return err
		}
		if act == ActionCreate {
			if err := createApplies(r); err != nil {
				return err
			}
		}
		hold := claimForCreate
		if act == ActionDeepResearch {
			if research, err = researchFromEnv(ctx); err != nil {
				return err
			}
			hold = research.timeout + time.Minute
		}
		r.ClaimNS = now.Add(hold).UnixNano()
		rec = r
		if err := tx.SetClaimHolder(r.Seq, os.Getpid()); err != nil {
			return err
		}
		return tx.PutReview(r)
	})
	if err != nil {
		return nil, err
	}
	var (
		resolution string
		pages      []PageRef
	)
	switch {
	case act == ActionDeepResearch:
		resolution, err = runResearch(ctx, e, research, itemOf(rec))
	case rec.Type == TypePurposeSuggestion:
		resolution, err = appendSuggestion(e, vault.PurposeFile, rec)
	case rec.Type == TypeSchemaSuggestion:
		resolution, err = appendSuggestion(e, vault.SchemaFile, rec)
	default:
		var p *PageRef
		if p, err = createStub(ctx, e, rec); err == nil {
			pages = []PageRef{*p}
			resolution = "created " + p.Path
		}
	}
	if err == nil && act == ActionDeepResearch && callerContext(ctx).Err() != nil {
		// the caller cancelled: the research is not recorded (Detach)
		err = errs.E(errs.Unavailable, "deep-research cancelled; the item stays pending")
	}
	out := &ResolveReviewOut{Pages: pages}
	uerr := e.Store.Update(func(tx *store.Tx) error {
		r, ferr := findReview(tx, rec.ID)
		if ferr != nil {
			return ferr
		}
		if r.Terminal() { // nothing but this command can decide a claimed item
			return errs.E(errs.Conflict, "review item %s became %s while this command acted on it", r.ID, r.Status)
		}
		if err != nil {
			r.ClaimNS = 0
			if cerr := tx.ClearClaimHolder(r.Seq); cerr != nil {
				return cerr
			}
			return tx.PutReview(r)
		}
		if derr := decide(tx, r, actionStatus[act], resolution, e.now()); derr != nil {
			return derr
		}
		out.ReviewItem = itemOf(r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if uerr != nil {
		return nil, uerr
	}
	return out, nil
}

// pageProposals are the title prefixes by which a suggestion proposes a
// page ("Create page: Pour over"); other proposal prefixes ("todo:",
// "suggestion:") do not name a page.
var pageProposals = []string{"create page", "new page", "missing page", "page", "stub", "create"}

// proposesPage reports whether a suggestion's title proposes a page: a
// page-proposal prefix before a title, or the title as a wikilink.
func proposesPage(title string) bool {
	t := strings.Join(strings.Fields(title), " ")
	if head, rest, ok := strings.Cut(t, ":"); ok && strings.TrimSpace(rest) != "" &&
		slices.Contains(pageProposals, strings.ToLower(strings.TrimSpace(head))) {
		return true
	}
	return len(t) > 4 && strings.HasPrefix(t, "[[") && strings.HasSuffix(t, "]]") && !strings.Contains(t[2:len(t)-2], "]]")
}

// createApplies says whether create applies to an item (create writes a
// stub page per proposed title): a missing-page item, a
// suggestion whose title proposes a page, a purpose or schema suggestion
// (appended instead). For any other item the title is no page title (lint's
// "Orphan page: X", a duplicate's shared title, a contradiction): create
// is invalid, naming the actions that apply, and nothing is written.
func createApplies(r *store.ReviewRec) error {
	switch {
	case r.Type == TypeMissingPage, r.Type == TypePurposeSuggestion, r.Type == TypeSchemaSuggestion:
		return nil
	case r.Type == TypeSuggestion && proposesPage(r.Title):
		return nil
	}
	return errs.E(errs.Invalid, "review item %s is a %s that proposes no page (%q): create writes a stub page for a missing-page item or a suggestion titled \"Create page: Title\", and appends a purpose or schema suggestion; decide this one with skip, dismiss, resolve or deep-research",
		r.ID, r.Type, r.Title)
}

// createStub writes the stub page of a create through write_page:
// "# Title", the pages linking to it as wikilinks, the item's
// rationale and search queries as context, tagged stub (stubBody). A page
// that already answers to the title (as a link would resolve it) is a
// conflict: create never overwrites.
func createStub(ctx context.Context, e *Env, r *store.ReviewRec) (*PageRef, error) {
	title := ProposedTitle(r.Title)
	var body string
	err := e.Store.View(func(tx *store.Tx) error {
		p, err := pageAnswering(tx, title)
		if err != nil {
			return err
		}
		if p != nil {
			return errs.E(errs.Conflict, "a page named %q already exists (%s); mark the item resolved instead: %s", title, p.Path, errs.Cmd("review.resolve", "id", r.ID, "action", "resolve"))
		}
		body, err = stubBody(tx, r, title)
		return err
	})
	if err != nil {
		return nil, err
	}
	w, err := WritePage(ctx, e, &WritePageIn{Title: title, Content: body, Tags: []string{"stub"}})
	if err != nil {
		return nil, err
	}
	return &PageRef{ID: w.ID, Title: w.Title, Type: w.Type, Path: w.Path}, nil
}

// maxStubLinkers bounds the linking pages a stub lists.
const maxStubLinkers = 50

// stubBody is the text of a stub page: what links to it (the pages whose
// links to this title match no page now, so they reach the stub once it
// is written), then the item's rationale and search queries as context,
// said to come from the item so that they stay true once the page exists.
// The stub never links to itself: a link in the rationale to the title is
// written as plain text.
func stubBody(tx *store.Tx, r *store.ReviewRec, title string) (string, error) {
	var b strings.Builder
	b.WriteString("# " + title + "\n")
	self := index.LinkKey(title)
	var linkers []string
	seen := map[uint32]bool{}
	for _, bl := range tx.DanglingFor(self) {
		p, err := tx.Page(bl.Src)
		if err != nil {
			return "", err
		}
		if p != nil && !p.Reserved && !seen[p.Doc] {
			seen[p.Doc] = true
			linkers = append(linkers, wikiLinkTo(tx, p))
		}
	}
	slices.SortFunc(linkers, func(a, b string) int { return strings.Compare(store.Fold(a), store.Fold(b)) })
	if len(linkers) > 0 {
		b.WriteString("\nLinked from:\n\n")
		for i, l := range linkers {
			if i == maxStubLinkers {
				fmt.Fprintf(&b, "- and %d more (synapse graph backlinks %q)\n", len(linkers)-i, title)
				break
			}
			b.WriteString("- " + l + "\n")
		}
	}
	// pages the item names that exist and are not listed above
	var related []string
	for _, name := range r.Referenced {
		p, err := pageAnswering(tx, name)
		if err != nil {
			return "", err
		}
		if p != nil && !p.Reserved && !seen[p.Doc] {
			seen[p.Doc] = true
			related = append(related, wikiLinkTo(tx, p))
		}
	}
	rationale := unlinkSelf(r.Rationale, self)
	if rationale == "" && len(r.Queries) == 0 && len(related) == 0 {
		return b.String(), nil
	}
	fmt.Fprintf(&b, "\n## Context\n\nFrom review item %s (%s, proposed %s):\n", r.ID, r.Type,
		time.Unix(0, r.CreatedNS).UTC().Format(time.DateOnly))
	if rationale != "" {
		b.WriteString("\n" + rationale + "\n")
	}
	if len(related) > 0 {
		b.WriteString("\nRelated: " + strings.Join(related, ", ") + "\n")
	}
	if len(r.Queries) > 0 {
		b.WriteString("\nSearch queries:\n\n")
		for _, q := range r.Queries {
			b.WriteString("- " + q + "\n")
		}
	}
	return b.String(), nil
}

// wikiLinkTo writes a wikilink that reaches p: [[Title]] when the title
// resolves to it, else its wiki path with the title as label.
func wikiLinkTo(tx *store.Tx, p *store.PageRec) string {
	if q, err := pageAnswering(tx, p.Title); err == nil && q != nil && q.Doc == p.Doc && !strings.ContainsAny(p.Title, "[]|#") {
		return "[[" + p.Title + "]]"
	}
	target := strings.TrimSuffix(strings.TrimPrefix(p.Path, vault.WikiDir+"/"), ".md")
	return "[[" + target + "|" + strings.NewReplacer("[", "", "]", "", "|", "-").Replace(p.Title) + "]]"
}

// selfLink matches a wikilink (or embed) in a rationale.
var selfLink = regexp.MustCompile(`!?\[\[([^\[\]\n]+)\]\]`)

// unlinkSelf writes the wikilinks of text whose target is key (a stub's
// own title) as their label or target, so the stub does not link to
// itself.
func unlinkSelf(text, key string) string {
	return selfLink.ReplaceAllStringFunc(text, func(m string) string {
		inner := selfLink.FindStringSubmatch(m)[1]
		target, label, hasLabel := strings.Cut(inner, "|")
		target, _, _ = strings.Cut(target, "#")
		if index.LinkKey(target) != key {
			return m
		}
		if hasLabel && strings.TrimSpace(label) != "" {
			return strings.TrimSpace(label)
		}
		return strings.TrimSpace(target)
	})
}

// pageAnswering returns the page a [[title]] link would reach, or nil.
func pageAnswering(tx *store.Tx, title string) (*store.PageRec, error) {
	res := index.Resolve(tx, index.LinkKey(title), "", false)
	if res.Doc == 0 {
		return nil, nil
	}
	return tx.Page(res.Doc)
}

// appendSuggestion appends a purpose or schema suggestion to its file
// (purpose.md, schema.md) as a section, atomically. Both steps go through
// the vault's file layer: a file that is a symlink out of the vault, a
// named pipe or another special file is refused (forbidden), never read
// or written through.
func appendSuggestion(e *Env, rel string, r *store.ReviewRec) (string, error) {
	data, info, err := e.files().ReadFile(context.Background(), rel, maxReservedRead)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fileError(err, "read %s: %v", rel, err)
	}
	if err := e.files().CheckWrite(rel); err != nil {
		return "", fileError(err, "write %s: %v", rel, err)
	}
	var b bytes.Buffer
	b.Write(data)
	if len(data) > 0 {
		if !bytes.HasSuffix(data, []byte("\n")) {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "## %s\n\n", ProposedTitle(r.Title))
	if r.Rationale != "" {
		b.WriteString(r.Rationale + "\n\n")
	}
	fmt.Fprintf(&b, "<!-- synapse review %s, %s -->\n", r.ID, e.now().UTC().Format(time.DateOnly))
	perm := fs.FileMode(0o644)
	if exists {
		perm = info.Mode().Perm()
	}
	// the file's permissions are kept (0644 when new); a file created
	// meanwhile is not replaced
	if err := writeAtomic(e.Vault.Abs(rel), b.Bytes(), perm, !exists); err != nil {
		return "", fileError(err, "write %s: %v", rel, err)
	}
	return "appended to " + rel, nil
}

// ---- bulk -----------------------------------------------------------------

// BulkResolveIn is the input of bulk-resolve.
type BulkResolveIn struct {
	IDs    []string `json:"ids" arg:"0" required:"true" cli:"stdin-list" desc:"Review item ids (at most 200); \"-\" reads them from standard input"`
	Action string   `json:"action" required:"true" desc:"skip, dismiss or resolve (alias mark-resolved)"`
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
		{`synapse review list --json | jq -r '.items[].id' | synapse review bulk-resolve --action dismiss -`, "ids from standard input"},
	},
	Exits: map[int]string{2: "invalid: more than 200 ids, or an action other than skip, dismiss, resolve"},
}, func(ctx context.Context, e *Env, in *BulkResolveIn) (*BulkResolveOut, error) {
	return bulkResolve(ctx, e, in.IDs, in.Action)
})

// BulkIn is the body of the UI bulk route.
type BulkIn struct {
	IDs    []string `json:"ids" required:"true" desc:"Review item ids (at most 200)"`
	Action string   `json:"action" required:"true" enum:"skip,dismiss,mark-resolved" desc:"skip, dismiss or mark-resolved"`
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
	r, err := bulkResolve(ctx, e, in.IDs, in.Action)
	if err != nil {
		return nil, err
	}
	return &BulkOut{Updated: r.Count, SkippedTerminal: len(r.AlreadyTerminal), NotFound: len(r.NotFound)}, nil
})

// bulkResolve applies a status-only action to up to MaxBulkIDs items in one
// transaction. Duplicate ids count once. Errors: too_large (more than 200
// ids; nothing changes), invalid (no ids, an unknown action, or create /
// deep-research, which act on one item at a time).
func bulkResolve(ctx context.Context, e *Env, ids []string, action string) (*BulkResolveOut, error) {
	if len(ids) > MaxBulkIDs {
		return nil, errs.E(errs.TooLarge, "%d ids given; a bulk request takes at most %d (nothing was changed)", len(ids), MaxBulkIDs)
	}
	act, err := parseAction(action, ReviewActions)
	if err != nil {
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
			case claimed(tx, r, now):
				return decidable(tx, r, now)
			default:
				if err := decide(tx, r, actionStatus[act], simpleResolution[act], now); err != nil {
					return err
				}
				out.Resolved = append(out.Resolved, r.ID)
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
	return out, nil
}

// ---- review.add -----------------------------------------------------------

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
	Examples: []Example{{`synapse review add --type contradiction --title "Two dates for the launch" --rationale "Plan says May, memo says June" --ref Plan --ref Memo`, "propose work (adding it again refreshes it)"}},
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

// ---- producers and status -------------------------------------------------

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

// onPageWritten is write_page's producer: an idempotent
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
	if err != nil || r == nil || r.Terminal() || claimed(tx, r, now) {
		return false, err
	}
	return true, decide(tx, r, StatusAutoResolved, resolution, now)
}
