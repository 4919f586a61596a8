package ops

import (
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// A review item is decided by a person, who needs to see why it exists:
// review.show returns an item with its context (docs/desk.md) — the pages
// and lines that link to a missing page, the relevant part of each page a
// contradiction or duplicate names, and the stub a create would write.

// Caps of an item's context.
const (
	maxShowLinkers  = 20 // linking pages listed (LinkersTotal counts all)
	maxShowLines    = 5  // link lines quoted per linking page
	maxExcerptLines = 12 // lines of a page's relevant part
	maxShowLine     = 300
)

// ShowReviewIn is the input of review show.
type ShowReviewIn struct {
	ID string `json:"id" arg:"0" required:"true" desc:"Review item id (from list_reviews)"`
}

// LineText is one line of a page, numbered from the top of its file.
type LineText struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// LinkingPage is a page that links to a missing page, with the lines
// that hold those links.
type LinkingPage struct {
	PageRef
	Lines []LineText `json:"lines"`
}

// PageExcerpt is a page an item names, with its part most relevant to
// the item. Name is the page as the item names it; Found is false when no
// page answers to it (then only Name is set).
type PageExcerpt struct {
	Name  string `json:"name"`
	Found bool   `json:"found"`
	PageRef
	Lines []LineText `json:"lines,omitempty"`
}

// StubPreview is what a create would write: the page of a stub, or the
// section a purpose or schema suggestion appends to its file. Path is
// where it would go (a new page may get a numbered name when that one is
// taken meanwhile).
type StubPreview struct {
	Title   string   `json:"title"`
	Path    string   `json:"path"`
	Tags    []string `json:"tags,omitempty"`
	Append  bool     `json:"append,omitempty"` // appended to an existing file rather than a new page
	Content string   `json:"content"`
}

// ShowReviewOut is an item with its context and the actions that apply.
type ShowReviewOut struct {
	Item ReviewItem `json:"item"`
	// Linkers are the pages whose links to the proposed title match no
	// page (a missing page), at most 20; LinkersTotal counts them all.
	Linkers      []LinkingPage `json:"linkers,omitempty"`
	LinkersTotal int           `json:"linkers_total,omitempty"`
	// Pages are the pages the item names (its page, then its referenced
	// pages), each with its part most relevant to the item.
	Pages []PageExcerpt `json:"pages,omitempty"`
	// Stub is what create would write, when create applies.
	Stub *StubPreview `json:"stub,omitempty"`
	// SameName are existing pages whose name differs from a missing
	// page's title only by case, dashes or spaces: create refuses a stub
	// beside them.
	SameName []PageRef `json:"same_name,omitempty" desc:"For a missing page: existing pages whose name differs from its title only by case, dashes or spaces (create refuses a stub beside them: alias one, or dismiss the item)"`
	// Actions are those a pending item accepts now (deep-research only
	// when a research command is configured); none for a decided item.
	Actions []string `json:"actions"`
}

var opShowReview = register(Op{
	Name: "review.show", Summary: "Show a review item with its context: linking lines, the pages it names, the stub a create would write",
	CLI: "review show", REST: []Route{{Method: "GET", Path: "/review/queue/{id}"}},
	Access: Read, Limits: "at most 20 linking pages, 5 lines each; 12 lines per page excerpt",
	Examples: []Example{
		{`synapse review show k3j9xq`, "why the item exists: linking lines, the pages it names, the stub create would write"},
		{`synapse review show k3j9xq --json`, "the same as JSON, with the actions the item takes now"},
	},
	Exits: map[int]string{3: "not found: no item has this id"},
}, showReview)

func showReview(ctx context.Context, e *Env, in *ShowReviewIn) (*ShowReviewOut, error) {
	out := &ShowReviewOut{Actions: []string{}}
	var rec *store.ReviewRec
	var reads []pageRead
	if err := e.syncQueue(); err != nil {
		return nil, err
	}
	err := e.Store.View(func(tx *store.Tx) error {
		var err error
		if rec, err = findReview(tx, in.ID); err != nil {
			return err
		}
		out.Item = itemOf(rec)
		if rec.Type == TypeMissingPage {
			reads = append(reads, linkersOf(tx, rec, out)...)
			if out.SameName, err = sameNamePages(tx, ProposedTitle(rec.Title)); err != nil {
				return err
			}
		}
		reads = append(reads, namedPages(tx, rec, out)...)
		if !rec.Terminal() {
			out.Actions = applicableActions(ctx, rec)
			if slices.Contains(out.Actions, ActionCreate) {
				out.Stub, err = stubPreview(tx, rec)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	words := itemWords(rec)
	for _, r := range reads {
		lines, err := e.pageLines(ctx, r.path)
		if err != nil {
			continue // a page gone or unreadable since it was indexed: no lines to quote
		}
		r.fill(lines, words)
	}
	return out, nil
}

// pageRead is a page whose file is read after the transaction, and what
// to fill in from its lines.
type pageRead struct {
	path string
	fill func(lines []string, words map[string]bool)
}

// linkersOf lists the pages whose links to the item's title match no
// page, and schedules the reads of their link lines.
func linkersOf(tx *store.Tx, r *store.ReviewRec, out *ShowReviewOut) []pageRead {
	key := index.LinkKey(ProposedTitle(r.Title))
	type linker struct {
		p  *store.PageRec
		at []int // the lines of its links to the title
	}
	var found []linker
	for _, bl := range tx.DanglingFor(key) {
		p, err := tx.Page(bl.Src)
		if err != nil || p == nil || p.Reserved {
			continue
		}
		var at []int
		for _, l := range p.Links {
			if l.Key == key && !slices.Contains(at, l.Line) {
				at = append(at, l.Line)
			}
		}
		found = append(found, linker{p, at})
	}
	out.LinkersTotal = len(found)
	// sorted before the reads are scheduled: each read fills its own entry
	slices.SortStableFunc(found, func(a, b linker) int {
		return strings.Compare(store.Fold(a.p.Title), store.Fold(b.p.Title))
	})
	found = found[:min(len(found), maxShowLinkers)]
	var reads []pageRead
	for i, f := range found {
		out.Linkers = append(out.Linkers, LinkingPage{PageRef: refOf(f.p), Lines: []LineText{}})
		reads = append(reads, pageRead{path: f.p.Path, fill: func(lines []string, _ map[string]bool) {
			for _, n := range f.at[:min(len(f.at), maxShowLines)] {
				if n >= 1 && n <= len(lines) {
					out.Linkers[i].Lines = append(out.Linkers[i].Lines, LineText{Line: n, Text: clipAround(lines[n-1], ProposedTitle(r.Title))})
				}
			}
		}})
	}
	return reads
}

// namedPages resolves the pages an item names (its page, then its
// referenced pages; a missing page's own title is no page) and schedules
// the reads of their relevant parts.
func namedPages(tx *store.Tx, r *store.ReviewRec, out *ShowReviewOut) []pageRead {
	var reads []pageRead
	seen := map[uint32]bool{}
	for _, name := range append([]string{r.Page}, r.Referenced...) {
		if name == "" {
			continue
		}
		p, err := resolvePage(tx, name)
		if err != nil || p == nil {
			out.Pages = append(out.Pages, PageExcerpt{Name: name})
			continue
		}
		if seen[p.Doc] || r.Type == TypeMissingPage && linksTo(out.Linkers, p.Path) {
			continue // listed once; a missing page's linkers show their lines already
		}
		seen[p.Doc] = true
		i := len(out.Pages)
		out.Pages = append(out.Pages, PageExcerpt{Name: name, Found: true, PageRef: refOf(p)})
		top := r.Type == TypeDuplicate
		reads = append(reads, pageRead{path: p.Path, fill: func(lines []string, words map[string]bool) {
			out.Pages[i].Lines = excerpt(lines, words, top)
		}})
	}
	return reads
}

func linksTo(ls []LinkingPage, path string) bool {
	return slices.ContainsFunc(ls, func(l LinkingPage) bool { return l.Path == path })
}

// applicableActions are the actions a pending item accepts now.
func applicableActions(ctx context.Context, r *store.ReviewRec) []string {
	acts := []string{}
	if createApplies(r) == nil {
		acts = append(acts, ActionCreate)
	}
	acts = append(acts, ActionResolve, ActionSkip, ActionDismiss)
	if _, err := researchFromEnv(ctx); err == nil {
		acts = append(acts, ActionDeepResearch)
	}
	return acts
}

// stubPreview is what create would write for r, or nil when a page
// already answers to the title (create would then refuse).
func stubPreview(tx *store.Tx, r *store.ReviewRec) (*StubPreview, error) {
	title := ProposedTitle(r.Title)
	switch r.Type {
	case TypePurposeSuggestion, TypeSchemaSuggestion:
		file := vault.PurposeFile
		if r.Type == TypeSchemaSuggestion {
			file = vault.SchemaFile
		}
		text := "## " + title + "\n"
		if r.Rationale != "" {
			text += "\n" + r.Rationale + "\n"
		}
		return &StubPreview{Title: title, Path: file, Append: true, Content: text}, nil
	}
	if p, err := pageAnswering(tx, title); err != nil || p != nil {
		return nil, err
	}
	body, err := stubBody(tx, r, title)
	if err != nil {
		return nil, err
	}
	at := stubPath(tx, title) // where create puts it: beside its linking pages
	if at == "" {
		at = newPageDir(tx, "concept") + "/" + Slug(title) + ".md"
	}
	return &StubPreview{Title: title, Path: at, Tags: []string{"stub"}, Content: body}, nil
}

// pageLines reads a page's file as lines (a trailing newline ends the
// last line, it opens no new one).
func (e *Env) pageLines(ctx context.Context, rel string) ([]string, error) {
	data, _, err := e.files().ReadFile(ctx, rel, index.MaxPageBytes)
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"), nil
}

// bodyStart is the index of the first body line of a page's lines (after
// its frontmatter block).
func bodyStart(lines []string) int {
	doc := strings.Join(lines, "\n")
	body := markdown.SplitDocument(doc).Body
	if !strings.HasSuffix(doc, body) {
		return 0
	}
	return strings.Count(doc[:len(doc)-len(body)], "\n")
}

// excerpt is the part of a page most relevant to an item: the block
// (lines between blank lines) sharing most words with the item, or with
// top (or no shared word) the top of the body, at most maxExcerptLines
// lines.
func excerpt(lines []string, words map[string]bool, top bool) []LineText {
	start := bodyStart(lines)
	best, bestScore := start, 0
	for i := start; i < len(lines) && !top; {
		j := i
		score := 0
		for j < len(lines) && strings.TrimSpace(lines[j]) != "" {
			score += overlap(lines[j], words)
			j++
		}
		if score > bestScore {
			best, bestScore = i, score
		}
		i = j + 1
	}
	for best < len(lines) && strings.TrimSpace(lines[best]) == "" {
		best++
	}
	out := []LineText{}
	for i := best; i < len(lines) && len(out) < maxExcerptLines; i++ {
		if strings.TrimSpace(lines[i]) == "" && bestScore > 0 {
			break // the block ends
		}
		out = append(out, LineText{Line: i + 1, Text: clip(lines[i])})
	}
	return out
}

// itemWords are the words an item is about: its title, rationale and
// search queries, folded, without short and common words.
func itemWords(r *store.ReviewRec) map[string]bool {
	out := map[string]bool{}
	text := ProposedTitle(r.Title) + " " + r.Rationale + " " + strings.Join(r.Queries, " ")
	for _, w := range wordsOf(text) {
		if !commonWords[w] {
			out[w] = true
		}
	}
	return out
}

func overlap(line string, words map[string]bool) int {
	n := 0
	for _, w := range wordsOf(line) {
		if words[w] {
			n++
		}
	}
	return n
}

// wordsOf splits text into folded words of at least 3 letters or digits.
func wordsOf(text string) []string {
	f := strings.FieldsFunc(store.Fold(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := f[:0]
	for _, w := range f {
		if len([]rune(w)) >= 3 {
			out = append(out, w)
		}
	}
	return out
}

var commonWords = map[string]bool{"the": true, "and": true, "for": true, "that": true, "this": true, "with": true,
	"from": true, "are": true, "was": true, "not": true, "but": true, "has": true, "have": true, "page": true,
	"pages": true, "links": true, "link": true, "one": true, "its": true, "had": true, "name": true, "when": true,
	"than": true, "then": true, "they": true, "there": true, "which": true, "what": true, "into": true}

// clip bounds a quoted line.
func clip(s string) string {
	if r := []rune(s); len(r) > maxShowLine {
		return string(r[:maxShowLine]) + "…"
	}
	return s
}

// clipAround bounds a quoted line that links to name so that the link
// shows: a long line is cut to a window starting a little before the
// first mention of name (or of a [[link]] when name is not written out).
func clipAround(s, name string) string {
	r := []rune(s)
	if len(r) <= maxShowLine {
		return s
	}
	low := strings.ToLower(s)
	at := -1
	for _, needle := range []string{strings.ToLower(name), "[["} {
		if i := strings.Index(low, needle); needle != "" && i >= 0 {
			at = utf8.RuneCountInString(low[:i])
			break
		}
	}
	start := max(0, min(at-maxShowLine/3, len(r)-maxShowLine))
	if at < 0 || start == 0 {
		return clip(s)
	}
	end := min(len(r), start+maxShowLine)
	out := "…" + string(r[start:end])
	if end < len(r) {
		out += "…"
	}
	return out
}

// reviewMatch is list_reviews' filter on origin and text (nil when
// neither is given). An unknown origin is invalid, naming the valid ones.
func reviewMatch(origin, text string) (func(*store.ReviewRec) bool, error) {
	origin = strings.ToLower(origin)
	origins := []string{OriginRule, OriginLint, OriginAgent, OriginUser}
	if origin != "" && !slices.Contains(origins, origin) {
		return nil, errs.E(errs.Invalid, "unknown origin %q; valid origins: %s", origin, strings.Join(origins, ", "))
	}
	if origin == "" && text == "" {
		return nil, nil
	}
	needle := store.Fold(text)
	return func(r *store.ReviewRec) bool {
		if origin != "" && r.Origin != origin {
			return false
		}
		if needle == "" {
			return true
		}
		for _, s := range append([]string{r.ID, r.Title, r.Rationale, r.Page, r.Source}, r.Referenced...) {
			if strings.Contains(store.Fold(s), needle) {
				return true
			}
		}
		return false
	}, nil
}
