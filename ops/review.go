package ops

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/store"
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

// Review item origins: who proposed the item, and who decided it
// (DecidedBy).
const (
	OriginRule  = "rule"  // write_page: a dangling link, a page that answers one
	OriginLint  = "lint"  // synapse lint (--to-review)
	OriginAgent = "agent" // review add or a decision by an agent (MCP's default)
	OriginUser  = "user"  // review add or a decision by a person (the CLI's default at a terminal)
)

// Origins lists every origin.
var Origins = []string{OriginRule, OriginLint, OriginAgent, OriginUser}

// callerOrigin checks who a caller says it is (user or agent: rule and
// lint are synapse's own producers); "" is an agent. name is the
// parameter, for the message.
func callerOrigin(name, o string) (string, error) {
	switch o = strings.ToLower(strings.TrimSpace(o)); o {
	case "":
		return OriginAgent, nil
	case OriginAgent, OriginUser:
		return o, nil
	}
	return "", errs.E(errs.Invalid, "unknown %s %q; give user or agent (rule and lint are synapse's own producers)", name, o)
}

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
	// DecidedBy says who decided: "user" or "agent" by hand, "rule"
	// (write_page) or "lint" automatically; "" while pending. A resolve by
	// hand and an automatic one share the status auto_resolved and differ
	// here and in the resolution.
	DecidedBy string `json:"decided_by"`
	// Note is the decider's own word on why (resolve_review's note).
	Note string `json:"note,omitempty"`
	// SameName are the existing pages whose name differs from a pending
	// missing-page item's title only by case, dashes, underscores or
	// spaces (at most maxSameName): the link may have meant one of them.
	// list_reviews fills it; show_review has it at the top level.
	SameName []PageRef `json:"same_name,omitempty" desc:"Review list, pending missing-page items: existing pages (at most 5) whose name differs from the item's title only by case, dashes, underscores or spaces, which the links may have meant: link one by its name, or add the title to its aliases"`
}

func itemOf(r *store.ReviewRec) ReviewItem {
	it := ReviewItem{ID: r.ID, Type: r.Type, Status: r.Status, Resolution: r.Resolution, Title: r.Title,
		Rationale: r.Rationale, Page: r.Page, Source: r.Source, Origin: r.Origin,
		ReferencedPages: nonNil(r.Referenced), SearchQueries: nonNil(r.Queries),
		CreatedAt: rfc3339(r.CreatedNS), DecidedBy: r.DecidedBy, Note: r.Note}
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
	if !slices.Contains(Origins, p.Origin) {
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

// enqueue files p idempotently in tx. A pending item with the same key is
// refreshed in place with the fields p provides (applyEvent: a text field
// takes p's value when p has one and the field is empty or was written
// by a producer that does not rank above p's origin; referenced pages and
// search queries are merged, newest first, within their caps), keeping
// its id, type, origin, creation time and queue position. A terminal match
// is left alone: the human's decision wins. p must have been cleaned. The
// change is journaled with the transaction (record).
func enqueue(tx *store.Tx, p *Proposal, now time.Time) (*store.ReviewRec, string, error) {
	k := ReviewKey(p.Type, p.Title)
	old, err := tx.ReviewByKey(k)
	if err != nil {
		return nil, "", err
	}
	if old != nil && old.Terminal() {
		return old, EnqueueAlreadyTerminal, nil
	}
	ev := &revEvent{Kind: evFiled, Key: k, Type: p.Type, Title: p.Title, Rationale: p.Rationale, Page: p.Page,
		Source: p.Source, Refs: p.ReferencedPages, Queries: p.SearchQueries, By: p.Origin}
	outcome := EnqueueAdded
	if old != nil {
		ev.Kind, outcome = evRefreshed, EnqueueRefreshed
	}
	r, _, err := record(tx, old, ev, now)
	if err != nil {
		return nil, "", err
	}
	return r, outcome, nil
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

// claimed reports whether a command is acting on a pending item.
func claimed(r *store.ReviewRec, now time.Time) bool { return r.ClaimNS > now.UnixNano() }

// decidable returns a conflict naming the status when r is terminal, or
// naming the claim when another command is acting on it.
func decidable(r *store.ReviewRec, now time.Time) error {
	if r.Terminal() {
		return errs.E(errs.Conflict, "review item %s is already %s; a decided item is never changed", r.ID, r.Status)
	}
	if claimed(r, now) {
		return errs.E(errs.Conflict, "review item %s is being acted on by another command (until %s); try again then",
			r.ID, time.Unix(0, r.ClaimNS).UTC().Format(time.RFC3339))
	}
	return nil
}

// findDecidable returns the item with a public id when it can be decided
// now: not_found, or a conflict naming its status or its claim
// (decidable).
func findDecidable(tx *store.Tx, id string, now time.Time) (*store.ReviewRec, error) {
	r, err := findReview(tx, id)
	if err != nil {
		return nil, err
	}
	return r, decidable(r, now)
}

// decide moves a pending item to a terminal status, saying who decided
// (by: an origin), and journals it. r is updated to the decided item.
func decide(tx *store.Tx, r *store.ReviewRec, status, resolution, by string, now time.Time) error {
	return decideNoted(tx, r, status, resolution, by, "", now)
}

// decideNoted is decide with the decider's note (why), journalled with
// the decision and kept on the item.
func decideNoted(tx *store.Tx, r *store.ReviewRec, status, resolution, by, note string, now time.Time) error {
	next, _, err := record(tx, r, &revEvent{Kind: evDecided, Status: status, Resolution: resolution, By: by, Note: note}, now)
	if err != nil {
		return err
	}
	*r = *next
	return tx.ClearClaimHolder(r.Key)
}

// claim marks a pending item as acted on by a command until until (the
// zero time releases it), and journals it; this process is recorded as
// the claim's holder (claims.go). r is updated.
func claim(tx *store.Tx, r *store.ReviewRec, until, now time.Time) error {
	ev := &revEvent{Kind: evClaimed}
	if !until.IsZero() {
		ev.Until = until.UnixNano()
	}
	next, _, err := record(tx, r, ev, now)
	if err != nil {
		return err
	}
	*r = *next
	if until.IsZero() {
		return tx.ClearClaimHolder(r.Key)
	}
	return tx.SetClaimHolder(r.Key, os.Getpid())
}

// simpleResolution describes a decision that changes only the status.
var simpleResolution = map[string]string{
	ActionSkip: "skipped", ActionDismiss: "dismissed", ActionResolve: "marked resolved",
}

// review.list

// ListReviewsIn is the input of list_reviews.
type ListReviewsIn struct {
	Status string `json:"status,omitempty" default:"pending" desc:"pending (default; open is an alias), created, skipped, dismissed, deep_researched, auto_resolved, resolved (every decided item) or all"`
	Type   string `json:"type,omitempty" desc:"Only items of this type (missing-page, suggestion, contradiction, duplicate, confirm, purpose-suggestion, schema-suggestion)"`
	Origin string `json:"origin,omitempty" desc:"Only items from this origin (rule, lint, agent, user)"`
	Text   string `json:"text,omitempty" desc:"Only items whose id, title, rationale, page, source or referenced pages contain this text (case-insensitive)"`
	Limit  int    `json:"limit,omitempty" default:"20" min:"1" max:"100" desc:"Maximum items to return (1..100, default 20; larger values are clamped)"`
	Offset int    `json:"offset,omitempty" min:"0" desc:"Items to skip"`
}

// ListReviewsOut is the result of list_reviews: the matching items, oldest
// first, and how many match in all.
type ListReviewsOut struct {
	Total int          `json:"total"`
	Items []ReviewItem `json:"items"`
	Note  string       `json:"note,omitempty"` // an empty queue beside links no item proposes
	// Types counts the matching items by type when they take more than
	// one part and no type was asked for: what --type can narrow to.
	Types []ReviewTypeCount `json:"types,omitempty" desc:"When the items take more than one part and no type was asked for: how many of them are of each type, most first (narrow with type)"`
	// NextOffset is the offset of the next part while more remain.
	NextOffset int `json:"next_offset,omitempty" desc:"Where the next part starts (the offset to ask for) while more remain; absent on the last part"`
}

var opListReviews = register(Op{
	Name: "review.list", Summary: "List review items, oldest first",
	CLI: "review list", MCP: "list_reviews", REST: []Route{{Method: "GET", Path: "/review/queue"}},
	Access: Read, Limits: "limit 1..100 (default 20)",
	Title: "List review items",
	Examples: []Example{
		{`synapse review list`, "pending items, oldest first"},
		{`synapse review list --type missing-page --status all --json`, "every missing-page item, decided ones too"},
		{`synapse review list --origin lint --text coffee`, "pending items lint filed that mention coffee"},
	},
}, listReviews)

// listStatuses is the status vocabulary of list_reviews, for messages.
var listStatuses = append(append([]string{}, ReviewStatuses...), "open", store.ReviewClassResolved, store.ReviewClassAll)

// listClass is the listing class a status filter names (open is
// pending), or invalid.
func listClass(status string) (string, error) {
	class := strings.ToLower(status)
	if class == "open" {
		class = StatusPending
	}
	if !slices.Contains(listStatuses, class) {
		return "", errs.E(errs.Invalid, "unknown review status %q; valid statuses: %s", status, strings.Join(listStatuses, ", "))
	}
	return class, nil
}

func listReviews(ctx context.Context, e *Env, in *ListReviewsIn) (*ListReviewsOut, error) {
	class, err := listClass(in.Status)
	if err != nil {
		return nil, err
	}
	typ := strings.ToLower(in.Type)
	if typ != "" && !slices.Contains(ReviewTypes, typ) {
		return nil, errs.E(errs.Invalid, "unknown review type %q; valid types: %s", in.Type, strings.Join(ReviewTypes, ", "))
	}
	match, err := reviewMatch(in.Origin, in.Text)
	if err != nil {
		return nil, err
	}
	if err := e.syncQueue(); err != nil {
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
			it := itemOf(r)
			if r.Type == TypeMissingPage && !r.Terminal() {
				if it.SameName, err = sameNamePages(tx, ProposedTitle(r.Title)); err != nil {
					return err
				}
			}
			out.Items = append(out.Items, it)
		}
		if total == 0 && class == StatusPending && typ == "" && match == nil && in.Offset == 0 {
			out.Note = unfiledNote(tx)
		}
		if typ == "" && len(out.Items) < total {
			out.Types, err = reviewTypeCounts(tx, store.ReviewFilter{Class: class, Match: match, Limit: total})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	out.NextOffset = nextOffset(in.Offset, len(out.Items), out.Total)
	return out, nil
}

// ReviewTypeCount is how many listed review items are of one type.
type ReviewTypeCount struct {
	Type  string `json:"type"`
	Items int    `json:"items"`
}

// reviewTypeCounts counts the items f matches by type, most first (then
// by name).
func reviewTypeCounts(tx *store.Tx, f store.ReviewFilter) ([]ReviewTypeCount, error) {
	var n map[string]int
	if f.Match == nil {
		n = tx.ReviewTypeCounts(f.Class) // the stored counts: no item read
	} else {
		recs, _, err := tx.ListReviews(f)
		if err != nil {
			return nil, err
		}
		n = map[string]int{}
		for _, r := range recs {
			n[r.Type]++
		}
	}
	out := make([]ReviewTypeCount, 0, len(n))
	for t, c := range n {
		out = append(out, ReviewTypeCount{Type: t, Items: c})
	}
	slices.SortFunc(out, func(a, b ReviewTypeCount) int {
		if a.Items != b.Items {
			return b.Items - a.Items
		}
		return strings.Compare(a.Type, b.Type)
	})
	return out, nil
}

// nextOffset is where the part after one of shown items from offset
// starts, 0 when none remains.
func nextOffset(offset, shown, total int) int {
	if n := offset + shown; shown > 0 && n < total {
		return n
	}
	return 0
}

// unfiledNote says, for an empty queue, how many links point to no page:
// a queue starts empty (a write files only the links it adds), so a wiki
// written before synapse kept it has findings nobody filed.
func unfiledNote(tx *store.Tx) string {
	links, targets := 0, 0
	for _, d := range tx.Dangling() {
		if r, err := tx.ReviewByKey(ReviewKey(TypeMissingPage, d.Raw)); err != nil || r != nil {
			continue // proposed already (and decided: the queue is empty)
		}
		links += d.Count
		targets++
	}
	if links == 0 {
		return ""
	}
	what := fmt.Sprintf("%d links point to %d missing pages", links, targets)
	switch {
	case links == 1:
		what = "1 link points to a missing page"
	case targets == 1:
		what = fmt.Sprintf("%d links point to a missing page", links)
	}
	return "no pending items, but " + what + " that no item proposes (a write files only the links it adds); " +
		"lint with to_review (on the CLI `synapse lint --to-review`) files lint's findings as items: ask the user first, it adds to their queue"
}
