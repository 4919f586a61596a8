package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// PageRef identifies a page in results.
type PageRef struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Type  string `json:"type"`
	Path  string `json:"path"`
}

func refOf(p *store.PageRec) PageRef {
	return PageRef{ID: p.ID, Title: p.Title, Type: p.Type, Path: p.Path}
}

// refOfDoc is the reference of a page by doc, from its record's head only
// (ok false when there is no such page).
func refOfDoc(tx *store.Tx, doc uint32) (PageRef, bool, error) {
	h, ok, err := tx.Head(doc)
	return PageRef{ID: h.ID, Title: h.Title, Type: h.Type, Path: h.Path}, ok, err
}

// GetPageIn is the input of get_page.
type GetPageIn struct {
	Title   string `json:"title" arg:"0" words:"true" required:"true" desc:"Page title, alias, file name, path or id; resolved like a [[link]]"`
	Section string `json:"section,omitempty" desc:"Only this section: its heading and the text up to the next heading of the same or a higher level (\"Heading\", \"## Heading\" or \"Parent#Heading\"); links are then the section's; sha256 stays the whole file's (the if_match of a section write)"`
	Full    bool   `json:"full,omitempty" desc:"The content even when it is over 32 KiB (the page, or the section asked for); without it such content is left out (content empty, content_omitted true) and outline lists its headings with their sizes"`
	Outline bool   `json:"outline,omitempty" desc:"Only the outline, whatever the page's size: content left out (content_omitted true) and outline lists the headings with their line and size in bytes (with section: that section's); sha256, links and backlinks as usual"`
}

// LinkOut is one outgoing link of a page.
type LinkOut struct {
	Target   string `json:"target"`
	Heading  string `json:"heading,omitempty"`
	Resolved bool   `json:"resolved"`
	ID       string `json:"id,omitempty"`
	Title    string `json:"title,omitempty"`
	Path     string `json:"path,omitempty"`
	// File is the vault path of the file that is no page (a raw source,
	// an attachment) the link reaches when no page answers to its name.
	File      string `json:"file,omitempty"`
	Ambiguous int    `json:"ambiguous,omitempty"`
	Line      int    `json:"line,omitempty"`
}

// MaxFrontmatterText bounds the broken frontmatter block get_page returns.
const MaxFrontmatterText = 16 << 10

// GetPageOut is the result of get_page.
type GetPageOut struct {
	ID          string                `json:"id"`
	Title       string                `json:"title"`
	Type        string                `json:"type"`
	Path        string                `json:"path"`
	Frontmatter *markdown.Frontmatter `json:"frontmatter"`
	// FrontmatterError says why the file's frontmatter block is not valid
	// YAML ("line N: …", N counting from the top of the file); the block is
	// then kept as it is and Frontmatter is empty.
	FrontmatterError string `json:"frontmatter_error,omitempty"`
	// FrontmatterText is that block as the file holds it (between the
	// --- lines, at most MaxFrontmatterText bytes), to fix and send back.
	FrontmatterText string    `json:"frontmatter_text,omitempty" desc:"The frontmatter block as the file holds it, given when it is not valid YAML: fix it and write the page with the fixed block"`
	Content         string    `json:"content"`
	SHA256          string    `json:"sha256"`
	Links           []LinkOut `json:"links"`
	Backlinks       []PageRef `json:"backlinks"`
	// BacklinksTotal counts every page linking here; Backlinks holds at
	// most MaxPageBacklinks of them (graph backlinks lists all).
	BacklinksTotal int `json:"backlinks_total"`
	// Section is the heading of the section Content holds when one was
	// asked for ("## Setup"), and SectionLine its line in the file.
	Section     string `json:"section,omitempty"`
	SectionLine int    `json:"section_line,omitempty"`
	// AlsoMatched are the other pages that answer to the title given
	// (an ambiguous title); this page was chosen as a link would choose.
	AlsoMatched []PageRef `json:"also_matched,omitempty" desc:"Other pages that answer to the title as well (an ambiguous title); this page was chosen as a [[link]] would choose: an exact path, then the shortest path, then the first in order. Ask for one of them by its path or id"`
	// Size is the file's size in bytes (frontmatter included).
	Size int `json:"size"`
	// ContentOmitted is set when Content is empty because it is over
	// MaxPageGetBytes (and full was not asked); ContentBytes is its size
	// and Outline lists its headings instead.
	ContentOmitted bool           `json:"content_omitted,omitempty"`
	ContentBytes   int            `json:"content_bytes,omitempty"`
	Outline        []OutlineEntry `json:"outline,omitempty"`
	// OutlineTotal counts every heading; Outline holds the first
	// maxOutline.
	OutlineTotal int `json:"outline_total,omitempty"`
	// LinksTotal counts the links when Links holds only the first
	// maxOmittedLinks (content left out).
	LinksTotal int    `json:"links_total,omitempty"`
	Note       string `json:"note,omitempty"`
}

// MaxPageBacklinks bounds the backlinks get_page returns: a hub page can
// have tens of thousands, more than any caller wants inline.
const MaxPageBacklinks = 50

var opGetPage = register(Op{
	Name: "page.get", Summary: "Read a page: frontmatter, content, links and backlinks",
	CLI: "page get", MCP: "get_page", REST: []Route{{Method: "GET", Path: "/pages/{title}"}},
	Access: Read, Limits: "at most 50 backlinks inline (backlinks_total counts all; graph backlinks pages through them); content over 32 KiB comes as its outline unless full (or as one section)",
	Title: "Read a wiki page",
	Examples: []Example{
		{`synapse page get "Daily notes"`, "by title; an alias, file name, path or id works too"},
		{`synapse page get "Daily notes" > page.md`, "in a pipe: the file itself (frontmatter and body), to edit and write back"},
		{`synapse page get wiki/Home.md --json`, "frontmatter, content, sha256, links and backlinks as JSON"},
		{`synapse page get "Big page" --section "Setup" --json`, "one section; a page over 32 KiB comes as its outline (headings with their sizes) unless --full"},
	},
	Exits: map[int]string{3: "not found: no page answers to TITLE (the message lists the closest titles)"},
}, getPage)

// alsoMatched lists the other pages that title resolves among, as the
// link resolution tells them apart (by path).
func alsoMatched(tx *store.Tx, title string, chosen uint32) []PageRef {
	var out []PageRef
	for _, c := range index.Matches(tx, index.LinkKey(title), "", false) {
		if c.Doc == 0 || c.Doc == chosen {
			continue
		}
		if r, ok, err := refOfDoc(tx, c.Doc); err == nil && ok {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// resolvePage finds a page by title as a link would, then by id.
func resolvePage(tx *store.Tx, title string) (*store.PageRec, error) {
	r := index.Resolve(tx, index.LinkKey(title), "", false)
	doc := r.Doc
	if doc == 0 {
		doc = tx.DocByID(title)
	}
	if doc == 0 {
		return nil, notFoundPage(tx, title)
	}
	p, err := tx.Page(doc)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, notFoundPage(tx, title)
	}
	return p, nil
}

func notFoundPage(tx *store.Tx, title string) error {
	close := closestTitles(tx, title, 5)
	if len(close) == 0 {
		return errs.E(errs.NotFound, "no page titled %q", title)
	}
	return errs.E(errs.NotFound, "no page titled %q; closest: %s", title, strings.Join(quoteAll(close), ", "))
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = `"` + x + `"`
	}
	return out
}

func getPage(ctx context.Context, e *Env, in *GetPageIn) (*GetPageOut, error) {
	if in.Outline && in.Full {
		return nil, errs.E(errs.Invalid, "give outline or full, not both: outline leaves the content out, full asks for all of it")
	}
	var (
		rec            *store.PageRec
		links          []LinkOut
		backlinks      []PageRef
		backlinksTotal int
		also           []PageRef
	)
	err := e.Store.View(func(tx *store.Tx) error {
		var err error
		if rec, err = resolvePage(tx, in.Title); err != nil {
			return err
		}
		also = alsoMatched(tx, in.Title, rec.Doc)
		links = describeLinks(tx, rec, rec.Links)
		if len(rec.FileLinks) > 0 {
			// links to files that are no pages (attachments, sources by
			// their file name), in line order among the page links
			for _, l := range rec.FileLinks {
				links = append(links, LinkOut{Target: l.Target, Heading: l.Heading, Line: l.Line, Ambiguous: l.Ambiguous, Resolved: l.File != "", File: l.File})
			}
			sort.SliceStable(links, func(i, j int) bool { return links[i].Line < links[j].Line })
		}
		backlinks = []PageRef{}
		bls := tx.Backlinks(rec.Doc)
		backlinksTotal = len(bls)
		for _, b := range bls[:min(len(bls), MaxPageBacklinks)] {
			if r, ok, err := refOfDoc(tx, b.Src); err == nil && ok {
				backlinks = append(backlinks, r)
			}
		}
		sortRefs(backlinks)
		return nil
	})
	if err != nil {
		return nil, err
	}
	data, _, err := e.files().ReadFile(ctx, rec.Path, index.MaxPageBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errs.E(errs.NotFound, "page %q was indexed at %s but the file is gone; run `%s`", rec.Title, rec.Path, errs.Cmd("source.rescan"))
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fileError(err, "page %q cannot be read: %v", rec.Title, err)
	}
	sum := sha256.Sum256(data)
	parsed := markdown.Parse(rec.Path, data)
	if rec.Reserved {
		// the store keeps no links for index/log/overview: resolve the
		// file's own
		_ = e.Store.View(func(tx *store.Tx) error {
			links = describeLinks(tx, rec, index.LinkRecs(parsed.Links))
			return nil
		})
	}
	out := &GetPageOut{
		ID: rec.ID, Title: rec.Title, Type: rec.Type, Path: rec.Path,
		Frontmatter: parsed.Frontmatter, FrontmatterError: parsed.FMError, Content: parsed.Body, SHA256: hex.EncodeToString(sum[:]),
		Links: links, Backlinks: backlinks, BacklinksTotal: backlinksTotal, AlsoMatched: also,
	}
	if parsed.FMError != "" {
		if fm, _, ok := markdown.SplitFrontmatter(string(data)); ok && len(fm) <= MaxFrontmatterText {
			out.FrontmatterText = fm
		}
	}
	if in.Section != "" {
		if err := out.cutSection(data, in.Section); err != nil {
			return nil, err
		}
	}
	out.Size = len(data)
	if in.Outline || (!in.Full && len(out.Content) > MaxPageGetBytes) {
		out.omitContent(data, in.Outline)
	}
	return out, nil
}

// cutSection narrows a page read to one section: its text, and the links
// on its lines.
func (o *GetPageOut) cutSection(data []byte, name string) error {
	spec := markdown.ParseSectionSpec(name)
	sec, ok, amb := markdown.FindSection(o.Content, spec)
	switch {
	case len(amb) > 0:
		return errs.E(errs.Invalid, "%d sections of %s are headed %q: %s; name one by its level (\"## Heading\") or its parent (\"Parent#Heading\")", len(amb), o.Path, spec.Path[0], markdown.Lines(amb))
	case !ok:
		return errs.E(errs.NotFound, "%s has no section %q; its headings: %s", o.Path, spec.Raw, headingList(o.Content))
	}
	// the body's first line is this line of the file
	doc := strings.ToValidUTF8(string(data), "\uFFFD") // as markdown.Parse reads it
	first := 1 + strings.Count(doc[:len(doc)-len(o.Content)], "\n")
	from, to := first+sec.Line-1, first+sec.Line-1+strings.Count(o.Content[sec.Start:sec.End], "\n")
	if sec.End == len(o.Content) {
		to++ // the last line has no newline after it, or is the end
	}
	links := []LinkOut{}
	for _, l := range o.Links {
		if l.Line >= from && l.Line < to {
			links = append(links, l)
		}
	}
	o.Content, o.Links = o.Content[sec.Start:sec.End], links
	o.Section, o.SectionLine = strings.Repeat("#", sec.Level)+" "+sec.Text, from
	return nil
}

func sortRefs(r []PageRef) {
	sort.Slice(r, func(i, j int) bool {
		a, b := store.Fold(r[i].Title), store.Fold(r[j].Title)
		if a != b {
			return a < b
		}
		return r[i].Path < r[j].Path
	})
}

// ListPagesIn is the input of list_pages.
type ListPagesIn struct {
	Type   string `json:"type,omitempty" desc:"Only pages of this type: any type the vault uses (entity, concept, source, synthesis, comparison, query, note, or the vault's own, e.g. topic); a type no page has matches nothing"`
	Tag    string `json:"tag,omitempty" desc:"Only pages with this tag"`
	Match  string `json:"match,omitempty" desc:"Only pages whose title, an alias or path holds this text (case-insensitive), or whose title or path matches it as a glob when it has * ? or [ (* crosses folders): crystal, concepts/*, Crys*; total counts the matches"`
	Limit  int    `json:"limit,omitempty" default:"100" min:"1" max:"1000" desc:"Maximum pages to return (1..1000, default 100)"`
	Offset int    `json:"offset,omitempty" min:"0" desc:"Pages to skip"`
}

// PageItem is one row of list_pages.
type PageItem struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Type    string `json:"type"`
	Path    string `json:"path"`
	Updated string `json:"updated"` // YYYY-MM-DD: frontmatter updated, else the file's modification date
	Size    int64  `json:"size"`    // the file's size in bytes
}

// ListPagesOut is the result of list_pages.
type ListPagesOut struct {
	// Total is the number of pages matching the type, tag and match filters.
	Total int `json:"total"`
	// All is the number of pages in the vault, set when match is given
	// (what the matches are out of).
	All   int        `json:"all,omitempty"`
	Pages []PageItem `json:"pages"`
	// NextOffset is the offset of the next part while more remain.
	NextOffset int `json:"next_offset,omitempty" desc:"Where the next part starts (the offset to ask for) while more remain; absent on the last part"`
	// Types is set when the type filter names a type no page has: the
	// vault's types, closest to it first (a typo is seen).
	Types []TypeCount `json:"types,omitempty"`
}

var opListPages = register(Op{
	Name: "page.list", Summary: "List wiki pages ordered by title",
	CLI: "page list", MCP: "list_pages", REST: []Route{{Method: "GET", Path: "/pages"}},
	Access: Read, Limits: "limit 1..1000 (default 100)",
	Title: "List wiki pages",
	Examples: []Example{
		{`synapse page list --type concept --limit 20`, "the first 20 concept pages, by title"},
		{`synapse page list --tag plugins --offset 100 --json`, "the next page of results as JSON (total counts all)"},
		{`synapse page list --match crystal`, "pages with crystal in their title, an alias or path"},
	},
}, listPages)

func listPages(ctx context.Context, e *Env, in *ListPagesIn) (*ListPagesOut, error) {
	if in.Type != "" {
		// open types (docs/vault.md#pages): a well-formed type no page has matches
		// nothing (the result lists the vault's types); a malformed one,
		// upper case included, is invalid
		in.Type = strings.TrimSpace(in.Type)
		if !vault.WellFormedType(in.Type) {
			return nil, errs.E(errs.Invalid, "%s", vault.TypeProblem(in.Type))
		}
	}
	keep, err := pageMatcher(in.Match)
	if err != nil {
		return nil, err
	}
	out := &ListPagesOut{Pages: []PageItem{}}
	err = e.Store.View(func(tx *store.Tx) error {
		recs, total, err := tx.ListPages(store.ListFilter{Type: in.Type, Tag: in.Tag, Keep: keep, Offset: in.Offset, Limit: in.Limit})
		if err != nil {
			return err
		}
		out.Total = total
		if keep != nil {
			out.All = tx.PageCount()
		}
		if total == 0 && in.Type != "" {
			out.Types = unknownTypes(tx, []string{in.Type})
		}
		for _, p := range recs {
			out.Pages = append(out.Pages, PageItem{ID: p.ID, Title: p.Title, Type: p.Type, Path: p.Path, Updated: updatedOf(p), Size: p.Size})
		}
		out.NextOffset = nextOffset(in.Offset, len(out.Pages), total)
		return nil
	})
	return out, err
}

// updatedOf is when the page was last updated, always as a date
// (YYYY-MM-DD): the frontmatter `updated` (the date of a timestamp), else
// the file's modification time (UTC). One format on every surface, whatever
// format each page writes (dates and timestamps must not be mixed).
func updatedOf(p *store.PageRec) string {
	if d, ok := dateOfValue(p.Updated); ok {
		return d
	}
	return time.Unix(0, p.MtimeNS).UTC().Format(time.DateOnly)
}

// updatedLayouts are the forms of `updated` values read as dates.
var updatedLayouts = []string{time.RFC3339Nano, time.DateOnly, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006/01/02"}

// dateOfValue reads a frontmatter date or timestamp as a date; a
// timestamp with a zone keeps its own calendar day.
func dateOfValue(v string) (string, bool) {
	v = strings.TrimSpace(v)
	for _, l := range updatedLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t.Format(time.DateOnly), true
		}
	}
	return "", false
}

// closestTitles ranks page titles by similarity to q.
func closestTitles(tx *store.Tx, q string, n int) []string {
	fq := store.Fold(strings.TrimSpace(q))
	if fq == "" {
		return nil
	}
	type cand struct {
		doc   uint32
		title string
		score float64
	}
	var best []cand
	tx.EachTitle(func(doc uint32, t string) bool {
		s := similarity(fq, t)
		if s < 0.34 {
			return true
		}
		best = append(best, cand{doc, t, s})
		if len(best) > 4*n {
			sort.Slice(best, func(i, j int) bool { return best[i].score > best[j].score })
			best = best[:n]
		}
		return true
	})
	sort.Slice(best, func(i, j int) bool {
		if best[i].score != best[j].score {
			return best[i].score > best[j].score
		}
		return best[i].title < best[j].title
	})
	var out []string
	for _, c := range best {
		if len(out) == n {
			break
		}
		if h, ok, err := tx.Head(c.doc); err == nil && ok {
			out = append(out, h.Title)
		}
	}
	return out
}

// similarity scores two folded strings in [0,1]: normalized edit distance,
// raised when one contains the other or they share words.
func similarity(a, b string) float64 {
	if a == b {
		return 1
	}
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 {
		ra = ra[:64]
	}
	if len(rb) > 64 {
		rb = rb[:64]
	}
	d := levenshtein(ra, rb)
	s := 1 - float64(d)/float64(max(len(ra), len(rb)))
	if strings.Contains(b, a) || strings.Contains(a, b) {
		s = max(s, 0.7)
	}
	wa, wb := strings.Fields(a), strings.Fields(b)
	shared := 0
	for _, x := range wa {
		for _, y := range wb {
			if x == y && len(x) > 2 {
				shared++
				break
			}
		}
	}
	if shared > 0 {
		s = max(s, 0.35+0.5*float64(shared)/float64(max(len(wa), len(wb))))
	}
	return s
}

func levenshtein(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// describeLinks describes a page's links; unresolved ones (To 0) of a reserved
// page are resolved here.
func describeLinks(tx *store.Tx, rec *store.PageRec, ls []store.LinkRec) []LinkOut {
	out := make([]LinkOut, 0, len(ls))
	for _, l := range ls {
		lo := LinkOut{Target: l.Target, Heading: l.Heading, Line: l.Line, Ambiguous: l.Ambiguous}
		to, file := l.To, l.File
		if rec.Reserved || rec.LinksPending {
			r := index.Resolve(tx, l.Key, rec.Path, l.Markdown)
			to, file = r.Doc, r.File
			if r.Candidates > 1 {
				lo.Ambiguous = r.Candidates
			}
		}
		if to == 0 && file != "" {
			lo.Resolved, lo.File = true, file
		}
		if to != 0 {
			if t, ok, err := tx.Head(to); err == nil && ok {
				lo.Resolved, lo.ID, lo.Title, lo.Path = true, t.ID, t.Title, t.Path
			}
		}
		out = append(out, lo)
	}
	return out
}
