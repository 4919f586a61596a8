package ops

import (
	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/store"
)

// MaxLintPages caps the pages one lint checks by name.
const MaxLintPages = 100

// lintPages reports the findings on or from each of the pages named,
// their counts summed, each page's lists cut to the window; a page named
// twice is checked once.
func lintPages(tx *store.Tx, titles []string, w window, out *LintOut) error {
	if len(titles) > MaxLintPages {
		return errs.E(errs.Invalid, "%s is given %d times; the limit is %d pages", errs.Param("page"), len(titles), MaxLintPages)
	}
	if len(titles) == 1 {
		return lintPage(tx, titles[0], w, out)
	}
	seen := map[string]bool{}
	for _, title := range titles {
		one := &LintOut{}
		one.emptyLists()
		if err := lintPage(tx, title, w, one); err != nil {
			return err
		}
		if seen[one.Page.Path] {
			continue
		}
		seen[one.Page.Path] = true
		for i, b := range one.BrokenLinks {
			if len(b.Pages) == 0 { // say whose link it is
				one.BrokenLinks[i].Pages = []BacklinkItem{{PageRef: *one.Page, Count: b.Links}}
			}
		}
		if out.Page == nil {
			out.Page = one.Page
		}
		out.Pages = append(out.Pages, *one.Page)
		out.add(one)
	}
	return nil
}

// add sums another report's counts into o and appends its lists.
func (o *LintOut) add(x *LintOut) {
	c, d := &o.Counts, x.Counts
	c.BrokenLinks += d.BrokenLinks
	c.BrokenFileLinks += d.BrokenFileLinks
	c.AmbiguousLinks += d.AmbiguousLinks
	c.Orphans += d.Orphans
	c.NoOutlinks += d.NoOutlinks
	c.MissingSources += d.MissingSources
	c.DuplicateTitles += d.DuplicateTitles
	c.FrontmatterErrors += d.FrontmatterErrors
	c.OverCap += d.OverCap
	o.BrokenLinks = append(o.BrokenLinks, x.BrokenLinks...)
	o.BrokenFileLinks = append(o.BrokenFileLinks, x.BrokenFileLinks...)
	o.AmbiguousLinks = append(o.AmbiguousLinks, x.AmbiguousLinks...)
	o.Orphans = append(o.Orphans, x.Orphans...)
	o.NoOutlinks = append(o.NoOutlinks, x.NoOutlinks...)
	o.MissingSources = append(o.MissingSources, x.MissingSources...)
	o.DuplicateTitles = append(o.DuplicateTitles, x.DuplicateTitles...)
	o.FrontmatterErrors = append(o.FrontmatterErrors, x.FrontmatterErrors...)
	o.OverCap = append(o.OverCap, x.OverCap...)
}
