package ops

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// Lint category names (lint_categories.go declares the categories).
const (
	LintBrokenLinks       = "broken_links"
	LintBrokenFileLinks   = "broken_file_links"
	LintAmbiguousLinks    = "ambiguous_links"
	LintOrphans           = "orphans"
	LintNoOutlinks        = "no_outlinks"
	LintMissingSources    = "missing_sources"
	LintDuplicateTitles   = "duplicate_titles"
	LintFrontmatterErrors = "frontmatter_errors"
	LintReservedFiles     = "reserved_files"
	LintRefusedFiles      = "refused_files"
	LintOverCap           = "over_cap"
)

// LintIn is the input of lint.
type LintIn struct {
	Page           []string `json:"page,omitempty" flag:"page" desc:"Only findings on or from this page (resolved like a [[link]]): its broken, ambiguous and file links, missing sources and frontmatter error, whether it is an orphan or links nowhere, and the pages sharing its title. Repeat it to check several pages at once (up to 100; each page's findings listed within --limit)"`
	Category       string   `json:"category,omitempty" enum:"broken_links,broken_file_links,ambiguous_links,orphans,no_outlinks,missing_sources,duplicate_titles,frontmatter_errors,reserved_files,refused_files,over_cap" desc:"Only this category, in full (up to 20 findings unless --limit, each with up to 20 linking pages): broken_links, broken_file_links, ambiguous_links, orphans, no_outlinks, missing_sources, duplicate_titles, frontmatter_errors, reserved_files, refused_files or over_cap"`
	Full           bool     `json:"full,omitempty" desc:"Every category in full: up to 50 findings each (unless --limit), each with up to 20 pages that link to it; without it the report is a summary: 10 findings per category and the number of linking pages"`
	Limit          int      `json:"limit,omitempty" min:"0" max:"1000" desc:"Findings listed per category (1..1000; default 10, 20 with --category, 50 with --full; larger values are clamped); the counts always cover every finding"`
	Offset         int      `json:"offset,omitempty" min:"0" desc:"Findings skipped in each category before the listed ones"`
	ToReview       bool     `json:"to_review,omitempty" desc:"File the listed findings in the review queue (idempotent, origin lint; bounded by --page, --category, --limit and --offset) and auto-resolve missing-page items whose page now exists. This makes lint a write: refused on a read-only server"`
	FailOnFindings bool     `json:"fail_on_findings,omitempty" desc:"Treat any finding as a failure, for scripts and CI: the CLI exits 6 after printing the report, and the result carries failed: true"`
}

// LintBrokenLink is a link target that matches no page (nor file).
type LintBrokenLink struct {
	Target     string `json:"target"`      // as first written
	Links      int    `json:"links"`       // links to it (from the page of --page only, with --page)
	PagesTotal int    `json:"pages_total"` // pages linking to it
	// Pages are the linking pages with their link counts: listed with
	// --full or --category only.
	Pages []BacklinkItem `json:"pages,omitempty"`
}

// LintAmbiguousLink is a link target that matches several pages where
// the linking page's folder does not decide: Obsidian's tie-break (the
// shortest path, then name order) chose one, which may not be the page
// meant (en/ and ru/ twins with the same file names). Findings are
// grouped by target and the page chosen.
type LintAmbiguousLink struct {
	Target string `json:"target"` // as first written
	Chosen string `json:"chosen"` // the page the links reach, by path
	// ChosenBy is the rule that chose it: "shortest path" or "name order".
	ChosenBy string   `json:"chosen_by"`
	Others   []string `json:"others"` // the other pages the target matches, by path
	Links    int      `json:"links"`
	// PagesTotal counts the linking pages; Pages lists them with --full
	// or --category.
	PagesTotal int            `json:"pages_total"`
	Pages      []BacklinkItem `json:"pages,omitempty"`
}

// LintSource is a cited source file that does not exist.
type LintSource struct {
	Source     string    `json:"source"`          // vault path under raw/sources/, as cited
	Pages      []PageRef `json:"pages,omitempty"` // pages citing it (at most 20; with --full or --category)
	PagesTotal int       `json:"pages_total"`     // every page citing it
}

// LintFileLink is a link naming a file that does not exist: an
// attachment ([[diagram.png]]) that no file under raw/ or wiki/ answers to
// by name, or an explicit path into raw/ (outside raw/sources/: a cited
// source that is gone is a missing source) with no file there. It is
// never a missing page.
type LintFileLink struct {
	Target string `json:"target"`         // as first written
	Path   string `json:"path,omitempty"` // the vault path the link names, when it names one
	Links  int    `json:"links"`          // links to it (from the page of --page only, with --page)
	// Outside is a file of that name elsewhere in the vault (outside
	// wiki/ and raw/, where synapse does not look: an Obsidian
	// attachments folder), and Fix says how to make the link reach it.
	Outside string `json:"outside,omitempty"`
	Fix     string `json:"fix,omitempty"`
	// PagesTotal counts the linking pages; Pages lists them with the
	// lines of their links, with --full or --category.
	PagesTotal int               `json:"pages_total"`
	Pages      []LintLinkingPage `json:"pages,omitempty"`
}

// LintLinkingPage is a page holding broken file links, with their lines.
type LintLinkingPage struct {
	PageRef
	Lines []int `json:"lines"`
}

// LintDuplicate is a title shared by several pages.
type LintDuplicate struct {
	Title string    `json:"title"`
	Pages []PageRef `json:"pages"`
}

// LintFrontmatter is a page whose frontmatter block does not parse: the
// page is indexed by its file name and body, and a write keeps the block
// as it is or refuses, so a person has to fix it.
type LintFrontmatter struct {
	PageRef
	Error string `json:"error"`          // the YAML parser's message
	Line  int    `json:"line,omitempty"` // the file line it names (1 = the opening ---), when it names one
}

// LintCounts counts the findings of each category in scope (the page of
// --page, or the vault), whatever was listed.
type LintCounts struct {
	BrokenLinks       int `json:"broken_links"`
	BrokenFileLinks   int `json:"broken_file_links"`
	AmbiguousLinks    int `json:"ambiguous_links"`
	Orphans           int `json:"orphans"`
	NoOutlinks        int `json:"no_outlinks"`
	MissingSources    int `json:"missing_sources"`
	DuplicateTitles   int `json:"duplicate_titles"`
	FrontmatterErrors int `json:"frontmatter_errors"`
	ReservedFiles     int `json:"reserved_files"`
	RefusedFiles      int `json:"refused_files"`
	OverCap           int `json:"over_cap"`
}

// LintFiled counts what --to-review did to the queue.
type LintFiled struct {
	Added           int `json:"added"`
	Refreshed       int `json:"refreshed"`
	AlreadyTerminal int `json:"already_terminal"`
	AutoResolved    int `json:"auto_resolved"`
	// NotListed counts the findings in scope that were not filed because
	// the report did not list them (beyond --limit/--offset, or in another
	// category than --category): run again with --offset to file them.
	NotListed int `json:"not_listed"`
}

// LintOut is the lint report: counts of every category on top, then up to
// Limit findings of each (after Offset). A category with nothing listed
// is left out of the JSON, so the lists present are the categories that
// have findings (counts still give every category). Reserved pages
// (index, log, overview) are never part of it.
type LintOut struct {
	// Findings is the number of findings in scope, over the categories
	// reported (one with --category).
	Findings int        `json:"findings"`
	Counts   LintCounts `json:"counts"`
	Page     *PageRef   `json:"page,omitempty"` // the page of --page (the first, with several)
	// Pages are the pages of --page when it is given more than once.
	Pages    []PageRef `json:"pages,omitempty" desc:"The pages checked, when page is given more than once"`
	Category string    `json:"category,omitempty"`
	// Full is set when each finding lists its linking pages (--full or
	// --category); otherwise the report is a summary that gives their
	// number only.
	Full   bool `json:"full"`
	Limit  int  `json:"limit"`
	Offset int  `json:"offset"`

	BrokenLinks       []LintBrokenLink    `json:"broken_links,omitempty"`       // link targets that match no page (nor file)
	BrokenFileLinks   []LintFileLink      `json:"broken_file_links,omitempty"`  // links naming files that do not exist
	AmbiguousLinks    []LintAmbiguousLink `json:"ambiguous_links,omitempty"`    // link targets matching several pages, chosen by a tie-break
	Orphans           []PageRef           `json:"orphans,omitempty"`            // pages no page links to
	NoOutlinks        []PageRef           `json:"no_outlinks,omitempty"`        // pages linking to no other page
	MissingSources    []LintSource        `json:"missing_sources,omitempty"`    // cited source files that do not exist
	DuplicateTitles   []LintDuplicate     `json:"duplicate_titles,omitempty"`   // titles shared by several pages
	FrontmatterErrors []LintFrontmatter   `json:"frontmatter_errors,omitempty"` // pages whose frontmatter does not parse
	ReservedFiles     []ReservedFile      `json:"reserved_files,omitempty"`     // top files synapse leaves alone (a hand-written index.md), vault-wide only
	// RefusedFiles are the files the last scans skipped instead of reading
	// (named pipes, devices, symlinks out of the vault: docs/vault.md#the-file-layer), as status
	// lists them; vault-wide only.
	RefusedFiles []index.Refused `json:"refused_files,omitempty"`
	// OverCap are the pages indexed only in part because they go past a
	// parse limit, each saying what was left out, as status lists them.
	OverCap []store.CappedPage `json:"over_cap,omitempty"`
	// ReviewJournal is what the last replay of the review journal found
	// (lines skipped, items two machines decided differently), vault-wide
	// only, absent when nothing.
	ReviewJournal *JournalProblems `json:"review_journal,omitempty"`
	Filed         *LintFiled       `json:"filed,omitempty"` // with to_review
	// Failed is set with fail_on_findings when there are findings.
	Failed bool `json:"failed,omitempty"`
	// Cut is set when the size bound of a report without --limit or
	// --full (16 KiB of JSON) left out findings: the longest lists were
	// shortened; --offset and --limit read on.
	Cut bool `json:"cut,omitempty"`
}

// Failure is the reason the CLI exits non-zero after printing the report
// ("" when it should not): lint with fail_on_findings found something.
func (o *LintOut) Failure() string {
	if !o.Failed {
		return ""
	}
	return fmt.Sprintf("lint found %d %s (--fail-on-findings)", o.Findings, pluralWord(o.Findings, "finding", "findings"))
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

var opLint = register(Op{
	Name: "lint", Summary: "Check the wiki: broken links, links to files that do not exist, ambiguous links, orphans, pages without outlinks, missing source files, duplicate titles, frontmatter that does not parse, a hand-written index.md synapse leaves alone, files refused instead of read (named pipes, symlinks out of the vault), pages indexed only in part (past a parse limit) or too big to write whole (past the write cap)",
	CLI: "lint", REST: []Route{{Method: "GET", Path: "/lint"}, {Method: "POST", Path: "/lint", Body: "*"}},
	Access: Read, WriteWith: "to_review", Rescans: true,
	Limits: "rescans changed files first; findings listed per category: 10 by default (a summary: the number of linking pages only), 20 with --category, 50 with --full, --limit up to 1000; at most 20 linking pages per finding; counts cover all; --to-review files only the listed findings",
	Examples: []Example{
		{`synapse lint`, "broken links, orphans, pages without outlinks, missing sources, duplicate titles"},
		{`synapse lint --to-review --json`, "file every finding in the review queue (a write)"},
	},
}, lint)

// lint first brings the index up to date with the files (the incremental
// scanner, as `source rescan`: unchanged files are skipped by size and
// mtime), so the report is about the vault as it is now. A store opened
// read-only is reported as it is.
func lint(ctx context.Context, e *Env, in *LintIn) (*LintOut, error) {
	if in.Category != "" && !slices.Contains(LintCategories, in.Category) {
		return nil, errs.E(errs.Invalid, "unknown lint category %q; valid categories: %s", in.Category, strings.Join(LintCategories, ", "))
	}
	if !e.Store.ReadOnly() {
		if _, err := rescan(ctx, e, &RescanIn{}); err != nil {
			return nil, err
		}
	}
	full := in.Full || in.Category != ""
	limit := in.Limit
	switch {
	case limit > 0:
	case in.Full:
		limit = lintFullLimit
	case full:
		limit = lintCategoryLimit
	default:
		limit = lintCompactLimit
	}
	out := &LintOut{Category: in.Category, Full: full, Limit: limit, Offset: in.Offset}
	out.emptyLists()
	w := window{offset: in.Offset, limit: limit}
	var err error
	if len(in.Page) > 0 {
		err = e.Store.View(func(tx *store.Tx) error { return lintPages(tx, in.Page, w, out) })
	} else {
		err = lintVault(ctx, e, w, out)
		out.ReviewJournal = journalProblems(e)
	}
	if err != nil {
		return nil, err
	}
	for _, c := range LintCategories {
		if in.Category == "" || in.Category == c {
			out.Findings += out.Counts.of(c)
		}
	}
	if in.Category != "" {
		keepCategory(out, in.Category)
	}
	out.outsideFiles(e)
	listed := out.listed()
	out.Failed = in.FailOnFindings && out.Findings > 0
	if in.ToReview {
		if out.Filed, err = fileLint(e, out); err != nil {
			return nil, err
		}
		out.Filed.NotListed = out.Findings - listed
	}
	if !full {
		out.compact()
	}
	out.capPages()
	if in.Limit <= 0 && !in.Full {
		out.Cut = out.fit()
	}
	return out, nil
}

// window is one page of a list: the items at [offset, offset+limit). A
// limit of 0 (a direct call that skipped Normalize) lists everything.
type window struct{ offset, limit int }

// has reports whether the i-th item (0-based) is listed.
func (w window) has(i int) bool { return i >= w.offset && (w.limit <= 0 || i < w.offset+w.limit) }

// cut returns the listed part of a list of n items.
func (w window) cut(n int) (lo, hi int) {
	lo = min(max(w.offset, 0), n)
	if w.limit <= 0 {
		return lo, n
	}
	return lo, min(lo+w.limit, n)
}

// lintVault reports on every page. Each category is counted in full, but
// page records are read only for the findings listed.
func lintVault(ctx context.Context, e *Env, w window, out *LintOut) error {
	// missing source files: exactly the `source list --state missing`
	// computation, so the two always agree
	src, err := listSources(ctx, e, &ListSourcesIn{State: StateMissing, Limit: w.limit, Offset: w.offset})
	if err != nil {
		return err
	}
	out.Counts.MissingSources = src.Total
	for _, s := range src.Sources {
		out.MissingSources = append(out.MissingSources, LintSource{Source: s.Path, Pages: s.CitedBy, PagesTotal: s.CitedByCount})
	}
	rf := reservedFiles(e) // a hand-written index.md (reserved.go)
	out.Counts.ReservedFiles = len(rf)
	lo, hi := w.cut(len(rf))
	out.ReservedFiles = append(out.ReservedFiles, rf[lo:hi]...)
	return e.Store.View(func(tx *store.Tx) error {
		// the files the scans refused (named pipes, symlinks out): the
		// list status shows, so the two agree
		rl := index.RefusedFiles(tx)
		out.Counts.RefusedFiles = rl.Count
		rlo, rhi := w.cut(len(rl.Files))
		out.RefusedFiles = append(out.RefusedFiles, rl.Files[rlo:rhi]...)
		// pages indexed only in part (past a parse limit), or past the write cap
		var oc []store.CappedPage
		out.Counts.OverCap, oc = tx.CappedPages(w.offset, w.limit)
		out.OverCap = append(out.OverCap, oc...)
		var targets []MissingTarget
		var err error
		out.Counts.BrokenLinks, targets, err = vaultDangling(tx, w)
		if err != nil {
			return err
		}
		out.BrokenLinks = append(out.BrokenLinks, brokenLinks(targets)...)
		pending := map[uint32]bool{}
		for _, d := range tx.LinksDirty(0) {
			pending[d] = true
		}
		reserved := reservedDocs(tx)
		// one pass over the titles: orphans, pages without outlinks and
		// duplicate titles, from the graph nodes
		var group []uint32
		prev := ""
		flush := func() error {
			if len(group) > 1 {
				if w.has(out.Counts.DuplicateTitles) {
					d, err := duplicate(tx, group)
					if err != nil {
						return err
					}
					out.DuplicateTitles = append(out.DuplicateTitles, d)
				}
				out.Counts.DuplicateTitles++
			}
			group = group[:0]
			return nil
		}
		var ferr error
		tx.EachTitle(func(doc uint32, folded string) bool {
			if ferr = ctx.Err(); ferr != nil {
				return false // SIGTERM, a cancelled call: a page at most
			}
			if folded != prev {
				if ferr = flush(); ferr != nil {
					return false
				}
				prev = folded
			}
			group = append(group, doc)
			in, outl, err := degree(tx, doc, pending[doc], reserved)
			if err != nil {
				ferr = err
				return false
			}
			if !in {
				if ferr = listRef(tx, doc, w.has(out.Counts.Orphans), &out.Orphans); ferr != nil {
					return false
				}
				out.Counts.Orphans++
			}
			if !outl {
				if ferr = listRef(tx, doc, w.has(out.Counts.NoOutlinks), &out.NoOutlinks); ferr != nil {
					return false
				}
				out.Counts.NoOutlinks++
			}
			return true
		})
		if ferr != nil {
			return ferr
		}
		if err := flush(); err != nil {
			return err
		}
		return lintPagePass(ctx, tx, w, out)
	})
}

// lintPagePass finds, in one pass over the pages, frontmatter that does
// not parse (few pages: all are collected), links to files that do not
// exist and ambiguous links.
func lintPagePass(ctx context.Context, tx *store.Tx, w window, out *LintOut) error {
	var fm []LintFrontmatter
	files := newFileFindings()
	amb := newAmbiguousFindings()
	err := tx.EachPage(func(p *store.PageRec) bool {
		if !p.Reserved && p.FMError != "" {
			fm = append(fm, fmFinding(p))
		}
		files.add(tx, p)
		amb.add(tx, p)
		return ctx.Err() == nil
	})
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return err
	}
	out.Counts.BrokenFileLinks, out.BrokenFileLinks = files.list(w)
	if out.Counts.AmbiguousLinks, out.AmbiguousLinks, err = amb.list(tx, w); err != nil {
		return err
	}
	sort.Slice(fm, func(i, j int) bool { return fm[i].Path < fm[j].Path })
	out.Counts.FrontmatterErrors = len(fm)
	lo, hi := w.cut(len(fm))
	out.FrontmatterErrors = append(out.FrontmatterErrors, fm[lo:hi]...)
	return nil
}

// listRef appends doc's page reference to list when listed.
func listRef(tx *store.Tx, doc uint32, listed bool, list *[]PageRef) error {
	if !listed {
		return nil
	}
	r, ok, err := refOfDoc(tx, doc)
	if err != nil {
		return err
	}
	if ok {
		*list = append(*list, r)
	}
	return nil
}

// duplicate describes a group of pages sharing a title.
func duplicate(tx *store.Tx, docs []uint32) (LintDuplicate, error) {
	d := LintDuplicate{}
	for _, doc := range docs {
		r, ok, err := refOfDoc(tx, doc)
		if err != nil {
			return d, err
		}
		if ok {
			d.Pages = append(d.Pages, r)
		}
	}
	sortRefs(d.Pages)
	if len(d.Pages) > 0 {
		d.Title = d.Pages[0].Title
	}
	return d, nil
}

func reservedDocs(tx *store.Tx) map[uint32]bool {
	r := map[uint32]bool{}
	for _, p := range []string{vault.IndexPage, vault.LogPage, vault.OverviewPage} {
		if d := tx.DocByPath(p); d != 0 {
			r[d] = true
		}
	}
	return r
}

// degree reports whether a page has backlinks and whether it links to
// another page (self-links and links to the reserved top files do not
// count), from its graph node. The links of a page still pending
// resolution (the scanner's links drain) are resolved here.
func degree(tx *store.Tx, doc uint32, pending bool, reserved map[uint32]bool) (in, out bool, err error) {
	a, err := tx.Adj(doc)
	if err != nil {
		return false, false, err
	}
	if a != nil {
		for _, e := range a.Edges {
			in = in || e.In > 0
			out = out || e.Out > 0
		}
	}
	if pending && !out {
		p, err := tx.Page(doc)
		if err != nil || p == nil {
			return in, out, err
		}
		out = linksOut(tx, p, reserved)
	}
	return in, out, nil
}

// linksOut reports whether p links to another page (not itself, not a
// reserved top file). Links not resolved yet (the scanner's pending drain)
// are resolved here.
func linksOut(tx *store.Tx, p *store.PageRec, reserved map[uint32]bool) bool {
	for _, l := range p.Links {
		to := l.To
		if p.LinksPending {
			to = index.Resolve(tx, l.Key, p.Path, l.Markdown).Doc
		}
		if to != 0 && to != p.Doc && !reserved[to] {
			return true
		}
	}
	return false
}

// yamlLine finds the line a YAML error names ("line 3: …").
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bline (\d+)\b`) })

// fmFinding describes a page whose frontmatter does not parse; FMError
// names the line counting from the top of the file (markdown.Parse).
func fmFinding(p *store.PageRec) LintFrontmatter {
	f := LintFrontmatter{PageRef: refOf(p), Error: p.FMError}
	if m := yamlLine().FindStringSubmatch(p.FMError); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			f.Line = n
		}
	}
	return f
}

// lintPage reports the findings on or from one page.
func lintPage(tx *store.Tx, title string, w window, out *LintOut) error {
	p, err := resolvePage(tx, title)
	if err != nil {
		return err
	}
	ref := refOf(p)
	out.Page = &ref
	if p.Reserved {
		return nil // index, log and overview are not part of lint
	}
	var broken []MissingTarget
	if broken, err = danglingFrom(tx, p); err != nil {
		return err
	}
	out.Counts.BrokenLinks = len(broken)
	lo, hi := w.cut(len(broken))
	out.BrokenLinks = append(out.BrokenLinks, brokenLinks(broken[lo:hi])...)
	ff := newFileFindings()
	ff.add(tx, p)
	out.Counts.BrokenFileLinks, out.BrokenFileLinks = ff.list(w)
	amb := newAmbiguousFindings()
	amb.add(tx, p)
	if out.Counts.AmbiguousLinks, out.AmbiguousLinks, err = amb.list(tx, w); err != nil {
		return err
	}
	in, outl, err := degree(tx, p.Doc, p.LinksPending, reservedDocs(tx))
	if err != nil {
		return err
	}
	if !in {
		out.Counts.Orphans = 1
		if w.has(0) {
			out.Orphans = append(out.Orphans, ref)
		}
	}
	if !outl {
		out.Counts.NoOutlinks = 1
		if w.has(0) {
			out.NoOutlinks = append(out.NoOutlinks, ref)
		}
	}
	var missing []LintSource
	files := foldedFiles(tx)
	for _, k := range p.SourceKeys {
		if !files.has(k) {
			missing = append(missing, LintSource{Source: k, Pages: []PageRef{ref}, PagesTotal: len(tx.CitingPages(k))})
		}
	}
	out.Counts.MissingSources = len(missing)
	lo, hi = w.cut(len(missing))
	out.MissingSources = append(out.MissingSources, missing[lo:hi]...)
	var same []uint32
	for _, c := range tx.LookupName(store.NameTitle, p.Title) {
		if !vault.IsReserved(c.Path) {
			same = append(same, c.Doc)
		}
	}
	if len(same) > 1 {
		out.Counts.DuplicateTitles = 1
		if w.has(0) {
			d, err := duplicate(tx, same)
			if err != nil {
				return err
			}
			out.DuplicateTitles = append(out.DuplicateTitles, d)
		}
	}
	if p.FMError != "" {
		out.Counts.FrontmatterErrors = 1
		if w.has(0) {
			out.FrontmatterErrors = append(out.FrontmatterErrors, fmFinding(p))
		}
	}
	if msg := tx.Capped(p.Path); msg != "" {
		out.Counts.OverCap = 1
		if w.has(0) {
			out.OverCap = append(out.OverCap, store.CappedPage{Path: p.Path, Message: msg})
		}
	}
	return nil
}

// fileSet answers whether a source file exists, matching as source list
// does: the exact path, else case-insensitively (NFC).
type fileSet struct {
	tx     *store.Tx
	folded map[string]bool // built on the first inexact lookup
}

func foldedFiles(tx *store.Tx) *fileSet { return &fileSet{tx: tx} }

func (f *fileSet) has(p string) bool {
	if _, ok, _ := f.tx.File(p); ok {
		return true
	}
	if f.folded == nil {
		f.folded = map[string]bool{}
		_ = f.tx.EachFile(vault.SourcesDir+"/", func(q string, _ store.FileRec) bool {
			f.folded[store.Fold(q)] = true
			return true
		})
	}
	return f.folded[store.Fold(p)]
}

// lintProposals turns the listed findings into review proposals (origin
// lint).
func lintProposals(out *LintOut) []*Proposal {
	var ps []*Proposal
	add := func(p *Proposal) {
		p.Origin = OriginLint
		ps = append(ps, p)
	}
	titles := func(refs []PageRef) []string {
		var t []string
		for _, r := range refs {
			t = append(t, r.Title)
		}
		return t
	}
	paths := func(refs []PageRef) []string {
		var t []string
		for _, r := range refs {
			t = append(t, r.Path)
		}
		return t
	}
	for _, b := range out.BrokenLinks {
		var refs []PageRef
		for _, p := range b.Pages {
			refs = append(refs, p.PageRef)
		}
		p := &Proposal{Type: TypeMissingPage, Title: b.Target, ReferencedPages: titles(refs),
			Rationale: fmt.Sprintf("%d %s to %q from %s; no page had this name when lint ran.", b.Links, pluralWord(b.Links, "link", "links"), b.Target, joinWiki(titles(refs)))}
		if len(refs) > 0 {
			p.Page = refs[0].Path
		}
		add(p)
	}
	for _, b := range out.BrokenFileLinks {
		name := b.Path
		if name == "" {
			name = b.Target
		}
		var refs []PageRef
		var where []string
		for _, p := range b.Pages {
			refs = append(refs, p.PageRef)
			where = append(where, fmt.Sprintf("[[%s]] (line %s)", p.Title, joinInts(p.Lines)))
		}
		p := &Proposal{Type: TypeConfirm, Title: "Missing file: " + name, ReferencedPages: titles(refs),
			Rationale: fmt.Sprintf("%s %s to %q, but no such file is in the vault (synapse looks under raw/ and wiki/). Add the file or correct the %s.",
				strings.Join(where, ", "), pluralWord(len(b.Pages), "links", "link"), b.Target, pluralWord(b.Links, "link", "links"))}
		if len(refs) > 0 {
			p.Page = refs[0].Path
		}
		add(p)
	}
	for _, a := range out.AmbiguousLinks {
		var refs []PageRef
		for _, p := range a.Pages {
			refs = append(refs, p.PageRef)
		}
		p := &Proposal{Type: TypeSuggestion, Title: "Ambiguous link: " + a.Target + " → " + a.Chosen, Page: a.Chosen, ReferencedPages: titles(refs),
			Rationale: fmt.Sprintf("%d %s to %q from %s %s %s, chosen by %s, but the name also matches %s. If another page was meant, link it by its path ([[%s|%s]]); else dismiss this item.",
				a.Links, pluralWord(a.Links, "link", "links"), a.Target, joinWiki(titles(refs)), pluralWord(a.Links, "reaches", "reach"), a.Chosen, a.ChosenBy,
				strings.Join(a.Others, ", "), strings.TrimSuffix(firstOr(a.Others, a.Chosen), ".md"), a.Target)}
		add(p)
	}
	// page findings are keyed by title; a title shared by several pages
	// (a duplicate-title finding) gets the path, so each page has its item
	shared := map[string]bool{}
	for _, d := range out.DuplicateTitles {
		shared[store.Fold(d.Title)] = true
	}
	label := func(r PageRef) string {
		if shared[store.Fold(r.Title)] {
			return r.Title + " (" + r.Path + ")"
		}
		return r.Title
	}
	for _, r := range out.Orphans {
		add(&Proposal{Type: TypeSuggestion, Title: "Orphan page: " + label(r), Page: r.Path, ReferencedPages: []string{r.Title},
			Rationale: fmt.Sprintf("No page links to [[%s]]. Link it from a related page, or dismiss this item.", r.Title)})
	}
	for _, r := range out.NoOutlinks {
		add(&Proposal{Type: TypeSuggestion, Title: "No outgoing links: " + label(r), Page: r.Path, ReferencedPages: []string{r.Title},
			Rationale: fmt.Sprintf("[[%s]] links to no other page. Link the pages it mentions, or dismiss this item.", r.Title)})
	}
	for _, s := range out.MissingSources {
		p := &Proposal{Type: TypeConfirm, Title: "Missing source: " + s.Source, Source: s.Source, ReferencedPages: titles(s.Pages),
			Rationale: fmt.Sprintf("%s is cited by %s but does not exist. Restore the file or correct the citations.", s.Source, joinWiki(titles(s.Pages)))}
		if len(s.Pages) > 0 {
			p.Page = s.Pages[0].Path
		}
		add(p)
	}
	for _, d := range out.DuplicateTitles {
		add(&Proposal{Type: TypeDuplicate, Title: d.Title, ReferencedPages: paths(d.Pages), Page: d.Pages[0].Path,
			Rationale: fmt.Sprintf("%d pages share the title %q: %s. Merge them or retitle all but one.", len(d.Pages), d.Title, strings.Join(paths(d.Pages), ", "))})
	}
	for _, f := range out.FrontmatterErrors {
		where := ""
		if f.Line > 0 {
			where = fmt.Sprintf(" (line %d)", f.Line)
		}
		add(&Proposal{Type: TypeSuggestion, Title: "Fix frontmatter: " + f.Path, Page: f.Path, ReferencedPages: []string{f.Title},
			Rationale: fmt.Sprintf("The frontmatter of %s does not parse%s: %s. Until it is fixed the page is indexed by its file name and body only.", f.Path, where, f.Error)})
	}
	return ps
}

func joinWiki(titles []string) string {
	const show = 5
	var parts []string
	for i, t := range titles {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(titles)-show))
			break
		}
		parts = append(parts, "[["+t+"]]")
	}
	return strings.Join(parts, ", ")
}

// fileLint files the listed findings in one transaction and auto-resolves
// pending missing-page items whose title now resolves to a page (one
// written outside synapse, which write_page's producer never saw).
func fileLint(e *Env, out *LintOut) (*LintFiled, error) {
	if err := e.syncQueue(); err != nil {
		return nil, err
	}
	filed := &LintFiled{}
	err := e.Store.Update(func(tx *store.Tx) error {
		now := e.now()
		for _, p := range lintProposals(out) {
			if p.clean() != nil {
				continue // e.g. a dangling target too long to be a title
			}
			_, outcome, err := enqueue(tx, p, now)
			if err != nil {
				return err
			}
			switch outcome {
			case EnqueueAdded:
				filed.Added++
			case EnqueueRefreshed:
				filed.Refreshed++
			case EnqueueAlreadyTerminal:
				filed.AlreadyTerminal++
			}
		}
		type stale struct {
			name, path string // path: the resolution
		}
		var found []stale
		var perr error
		err := tx.EachPendingReview(TypeMissingPage, func(r *store.ReviewRec) bool {
			var p *store.PageRec
			if p, perr = pageAnswering(tx, ProposedTitle(r.Title)); p != nil {
				found = append(found, stale{r.Title, "page exists: " + p.Path})
			} else if res := index.Resolve(tx, index.LinkKey(ProposedTitle(r.Title)), "", false); res.File != "" {
				// a link by that name reaches a file now (a raw source,
				// an attachment): no page is missing
				found = append(found, stale{r.Title, "a file answers to the name: " + res.File})
			}
			return perr == nil
		})
		if err != nil {
			return err
		}
		if perr != nil {
			return perr
		}
		for _, s := range found {
			ok, err := autoResolveMissing(tx, s.name, OriginLint, s.path, now)
			if err != nil {
				return err
			}
			if ok {
				filed.AutoResolved++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return filed, nil
}

// brokenLinks turns dangling link targets into lint findings.
func brokenLinks(ts []MissingTarget) []LintBrokenLink {
	out := make([]LintBrokenLink, len(ts))
	for i, t := range ts {
		out[i] = LintBrokenLink(t)
	}
	return out
}

func firstOr(list []string, def string) string {
	if len(list) > 0 {
		return list[0]
	}
	return def
}
