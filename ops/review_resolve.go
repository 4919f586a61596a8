package ops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// review.resolve / review.patch

// ResolveReviewIn is the input of resolve_review.
type ResolveReviewIn struct {
	ID        string `json:"id" arg:"0" required:"true" several:"synapse review bulk-resolve --action ACTION ID..." desc:"Review item id (from list_reviews)"`
	Action    string `json:"action" required:"true" desc:"skip, dismiss, resolve (alias mark-resolved), create (a stub page for a missing-page item or a suggestion titled 'Create page: Title'; a purpose/schema suggestion is appended to purpose.md/schema.md; other items refuse it) or deep-research (run $SYNAPSE_RESEARCH_CMD)"`
	DecidedBy string `json:"decided_by,omitempty" flag:"by" enum:"user,agent" tty:"user" desc:"Who decides: user (a person decided, or approved this decision when an agent asked) or agent (the agent decided on its own; default agent; the CLI's default is user when its standard input is a terminal); the item records it as decided_by"`
	Note      string `json:"note,omitempty" desc:"Why, in one line (≤ 500 characters): kept on the item (note in review show and list), in the review journal, in the wiki/log.md entry and in recent"`
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
		{`synapse review resolve k3j9xq --action skip --by agent`, "decide it as an agent (decided_by; a terminal's default is user)"},
		{`synapse review resolve k3j9xq --action dismiss --note "one mention in one source"`, "say why: kept on the item, in log.md and in recent"},
	},
	Exits: map[int]string{
		3: "not found: no item has this id",
		4: "conflict: the item is already decided (the message names its status)",
		5: "unavailable: deep-research without $SYNAPSE_RESEARCH_CMD, or the research command failed",
	},
}, func(ctx context.Context, e *Env, in *ResolveReviewIn) (*ResolveReviewOut, error) {
	return resolveReview(ctx, e, in.ID, in.Action, in.DecidedBy, in.Note)
})

// PatchReviewIn is the body of PATCH /review/queue/{id}: an action, or the
// terminal status to move to (which names its action).
type PatchReviewIn struct {
	ID        string `json:"id" required:"true" desc:"Review item id"`
	Action    string `json:"action,omitempty" desc:"skip, dismiss, resolve (alias mark-resolved), create or deep-research"`
	Status    string `json:"status,omitempty" desc:"created, skipped, dismissed, deep_researched or auto_resolved (the action leading to it is taken)"`
	DecidedBy string `json:"decided_by,omitempty" flag:"by" enum:"user,agent" tty:"user" desc:"Who decides: user (a person decided, or approved this decision when an agent asked) or agent (the agent decided on its own; default agent; the CLI's default is user when its standard input is a terminal); the item records it as decided_by"`
	Note      string `json:"note,omitempty" desc:"Why, in one line (≤ 500 characters): kept on the item, in the review journal, in the wiki/log.md entry and in recent"`
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
		return resolveReview(ctx, e, in.ID, in.Action, in.DecidedBy, in.Note)
	case in.Status == "":
		return nil, errs.E(errs.Invalid, "give an action (%s) or a status (%s)",
			strings.Join(ReviewActions, ", "), strings.Join(ReviewStatuses[1:], ", "))
	}
	st := strings.ToLower(in.Status)
	for _, a := range ReviewActions {
		if actionStatus[a] == st {
			return resolveReview(ctx, e, in.ID, a, in.DecidedBy, in.Note)
		}
	}
	return nil, errs.E(errs.Invalid, "status %q is not a decision; valid statuses: %s", in.Status, strings.Join(ReviewStatuses[1:], ", "))
})

// resolveReview decides one item, recording who decided (by: user or
// agent; "" is an agent) and why (note, one line; "" = none). Errors: invalid (unknown action or decider),
// not_found (unknown id), conflict (the item is decided, naming its
// status, or another command is acting on it), unavailable (deep-research
// without SYNAPSE_RESEARCH_CMD, or the research command failed), and the
// errors of write_page for create.
func resolveReview(ctx context.Context, e *Env, id, action, by, note string) (*ResolveReviewOut, error) {
	act, err := parseAction(action, ReviewActions)
	if err != nil {
		return nil, err
	}
	if note, err = checkNote("note", note); err != nil {
		return nil, err
	}
	if by, err = callerOrigin("decided_by", by); err != nil {
		return nil, err
	}
	if err := checkLogWritable(e.Vault); err != nil { // decisions are logged
		return nil, err
	}
	if err := e.syncQueue(); err != nil {
		return nil, err
	}
	if act == ActionCreate || act == ActionDeepResearch {
		return resolveWithEffect(ctx, e, id, act, by, note)
	}
	out := &ResolveReviewOut{}
	err = e.Store.Update(func(tx *store.Tx) error {
		now := e.now()
		r, err := findDecidable(tx, id, now)
		if err != nil {
			return err
		}
		if err := decideNoted(tx, r, actionStatus[act], simpleResolution[act], by, note, now); err != nil {
			return err
		}
		out.ReviewItem = itemOf(r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, logDecisions(ctx, e, []ReviewItem{out.ReviewItem})
}

// claimForCreate bounds how long a create may hold an item.
const claimForCreate = 2 * time.Minute

// resolveWithEffect runs an action with a side effect outside the store
// (a page write, a file append, the research command) in three steps:
// claim the pending item (so that producers and other commands leave it
// alone — write_page's hook would otherwise auto-resolve the very item
// whose page create is writing), act, then decide it; if the act fails the
// claim is released and the item stays pending, unchanged.
func resolveWithEffect(ctx context.Context, e *Env, id, act, by, note string) (*ResolveReviewOut, error) {
	var research researchConfig
	var rec *store.ReviewRec
	err := e.Store.Update(func(tx *store.Tx) error {
		now := e.now()
		r, err := findDecidable(tx, id, now)
		if err != nil {
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
		if err := claim(tx, r, now.Add(hold), now); err != nil {
			return err
		}
		rec = r
		return nil
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
			return claim(tx, r, time.Time{}, e.now())
		}
		if derr := decideNoted(tx, r, actionStatus[act], resolution, by, note, e.now()); derr != nil {
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
	return out, logDecisions(ctx, e, []ReviewItem{out.ReviewItem})
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

// createApplies says whether create applies to an item (create
// writes a stub page per proposed title): a missing-page item, a
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

// createStub writes the stub page of a create through write_page: "#
// Title", the pages linking to it as wikilinks, the item's
// rationale and search queries as context, tagged stub (stubBody). A page
// that already answers to the title (as a link would resolve it) is a
// conflict: create never overwrites.
func createStub(ctx context.Context, e *Env, r *store.ReviewRec) (*PageRef, error) {
	title := ProposedTitle(r.Title)
	var body, at string
	err := e.Store.View(func(tx *store.Tx) error {
		at = stubPath(tx, title) // beside the pages that link to it
		p, err := pageAnswering(tx, title)
		if err != nil {
			return err
		}
		if p != nil {
			return errs.E(errs.Conflict, "a page named %q already exists (%s); mark the item resolved instead: %s", title, p.Path, errs.Cmd("review.resolve", "id", r.ID, "action", "resolve"))
		}
		if err := sameNameConflict(tx, r, title); err != nil {
			return err
		}
		body, err = stubBody(tx, r, title)
		return err
	})
	if err != nil {
		return nil, err
	}
	w, err := WritePage(ctx, e, &WritePageIn{Title: title, Content: body, Tags: []string{"stub"}, Path: at})
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
var selfLink = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`!?\[\[([^\[\]\n]+)\]\]`) })

// unlinkSelf writes the wikilinks of text whose target is key (a stub's
// own title) as their label or target, so the stub does not link to
// itself.
func unlinkSelf(text, key string) string {
	return selfLink().ReplaceAllStringFunc(text, func(m string) string {
		inner := selfLink().FindStringSubmatch(m)[1]
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
	if err := writeAtomic(e.writeFS(), e.Vault.Abs(rel), b.Bytes(), perm, !exists); err != nil {
		return "", fileError(err, "write %s: %v", rel, err)
	}
	return "appended to " + rel, nil
}
