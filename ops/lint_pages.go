package ops

import (
	"reflect"

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

// add sums another report's counts into o and appends its lists, for
// every category of the table (lint_categories.go).
func (o *LintOut) add(x *LintOut) {
	counts := reflect.ValueOf(&o.Counts).Elem()
	for _, c := range lintCategories {
		if f, ok := fieldByJSON(counts, c.Name); ok {
			f.SetInt(f.Int() + int64(x.Counts.of(c.Name)))
		}
		l := o.listOf(c.Name)
		l.Set(reflect.AppendSlice(l, x.listOf(c.Name)))
	}
}
