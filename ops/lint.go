package ops

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
)

// LintIn is the input of lint.
type LintIn struct {
	ToReview bool `json:"to_review,omitempty" desc:"File each finding in the review queue (idempotent, origin lint) and auto-resolve missing-page items whose page now exists"`
}

// LintSource is a cited source whose file does not exist.
type LintSource struct {
	Source string    `json:"source"` // vault path under raw/sources/
	Pages  []PageRef `json:"pages"`  // pages citing it
}

// LintDuplicate is a title shared by several pages.
type LintDuplicate struct {
	Title string    `json:"title"`
	Pages []PageRef `json:"pages"`
}

// LintFiled counts what --to-review did to the queue.
type LintFiled struct {
	Added           int `json:"added"`
	Refreshed       int `json:"refreshed"`
	AlreadyTerminal int `json:"already_terminal"`
	AutoResolved    int `json:"auto_resolved"`
}

// LintOut is the lint report. Reserved pages (index, log, overview) are
// never part of it.
type LintOut struct {
	Findings        int             `json:"findings"`
	BrokenLinks     []MissingTarget `json:"broken_links"`     // link targets that match no page
	Orphans         []PageRef       `json:"orphans"`          // pages no page links to
	NoOutlinks      []PageRef       `json:"no_outlinks"`      // pages linking to no other page
	MissingSources  []LintSource    `json:"missing_sources"`  // cited sources that do not exist
	DuplicateTitles []LintDuplicate `json:"duplicate_titles"` // titles shared by several pages
	Filed           *LintFiled      `json:"filed,omitempty"`  // with to_review
}

var opLint = register(Op{
	Name: "lint", Summary: "Check the wiki: broken links, orphans, pages without outlinks, missing sources, duplicate titles",
	CLI: "lint", REST: []Route{{Method: "POST", Path: "/lint", Body: "*"}},
	Access: Write, Limits: "rescans changed files first; --to-review files findings idempotently (origin lint)",
}, lint)

// lint first brings the index up to date with the files (the incremental
// scanner, as `source rescan`: unchanged files are skipped by size and
// mtime), so the report is about the vault as it is now.
func lint(ctx context.Context, e *Env, in *LintIn) (*LintOut, error) {
	if _, err := rescan(ctx, e, &RescanIn{}); err != nil {
		return nil, err
	}
	broken, err := missing(ctx, e, &MissingIn{})
	if err != nil {
		return nil, err
	}
	orph, err := orphans(ctx, e, &OrphansIn{})
	if err != nil {
		return nil, err
	}
	out := &LintOut{BrokenLinks: broken.Targets, Orphans: orph.Pages, NoOutlinks: []PageRef{},
		MissingSources: []LintSource{}, DuplicateTitles: []LintDuplicate{}}
	err = e.Store.View(func(tx *store.Tx) error {
		cited := map[string][]PageRef{}
		err := tx.EachPage(func(p *store.PageRec) bool {
			if p.Reserved {
				return true
			}
			if !linksOut(tx, p) {
				out.NoOutlinks = append(out.NoOutlinks, refOf(p))
			}
			for _, s := range p.SourceKeys {
				if _, ok, _ := tx.File(s); !ok {
					cited[s] = append(cited[s], refOf(p))
				}
			}
			return true
		})
		if err != nil {
			return err
		}
		for s, pages := range cited {
			sortRefs(pages)
			out.MissingSources = append(out.MissingSources, LintSource{Source: s, Pages: pages})
		}
		sort.Slice(out.MissingSources, func(i, j int) bool { return out.MissingSources[i].Source < out.MissingSources[j].Source })
		sortRefs(out.NoOutlinks)
		// titles are indexed folded, so equal titles are neighbours
		var group []uint32
		prev := ""
		flush := func() error {
			if len(group) > 1 {
				d := LintDuplicate{}
				for _, doc := range group {
					p, err := tx.Page(doc)
					if err != nil {
						return err
					}
					if p != nil {
						d.Pages = append(d.Pages, refOf(p))
					}
				}
				if len(d.Pages) > 1 {
					sortRefs(d.Pages)
					d.Title = d.Pages[0].Title
					out.DuplicateTitles = append(out.DuplicateTitles, d)
				}
			}
			group = group[:0]
			return nil
		}
		tx.EachTitle(func(doc uint32, folded string) bool {
			if folded != prev {
				if err = flush(); err != nil {
					return false
				}
				prev = folded
			}
			group = append(group, doc)
			return true
		})
		if err != nil {
			return err
		}
		return flush()
	})
	if err != nil {
		return nil, err
	}
	out.Findings = len(out.BrokenLinks) + len(out.Orphans) + len(out.NoOutlinks) + len(out.MissingSources) + len(out.DuplicateTitles)
	if in.ToReview {
		if out.Filed, err = fileLint(e, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// linksOut reports whether p links to another page. Links not resolved yet
// (the scanner's pending drain) are resolved here.
func linksOut(tx *store.Tx, p *store.PageRec) bool {
	for _, l := range p.Links {
		to := l.To
		if p.LinksPending {
			to = index.Resolve(tx, l.Key, p.Path, l.Markdown).Doc
		}
		if to != 0 && to != p.Doc {
			return true
		}
	}
	return false
}

// lintProposals turns the report into review proposals (origin lint).
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
			Rationale: fmt.Sprintf("%d link(s) to [[%s]] match no page; linked from %s.", b.Links, b.Target, joinWiki(titles(refs)))}
		if len(refs) > 0 {
			p.Page = refs[0].Path
		}
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

// fileLint files the findings in one transaction and auto-resolves pending
// missing-page items whose title now resolves to a page (one written
// outside synapse, which write_page's producer never saw).
func fileLint(e *Env, out *LintOut) (*LintFiled, error) {
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
			name, path string
		}
		var found []stale
		var perr error
		err := tx.EachPendingReview(TypeMissingPage, func(r *store.ReviewRec) bool {
			var p *store.PageRec
			if p, perr = pageAnswering(tx, ProposedTitle(r.Title)); p != nil {
				found = append(found, stale{r.Title, p.Path})
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
			ok, err := autoResolveMissing(tx, s.name, "page exists: "+s.path, now)
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
