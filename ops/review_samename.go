package ops

import (
	"fmt"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
)

// A missing page's title often differs from an existing page's name only
// by case, dashes or spaces ([[atlas-ivory]] beside a page "Atlas
// Ivory"): Obsidian does not resolve the link, but a stub of that title
// would be a second page of the same name, and page move refuses that
// name. sameNamePages finds such pages the way page move checks a new
// title: each spelling of the title resolved as a link would be.

// maxSameName bounds the pages sameNamePages returns.
const maxSameName = 5

// nameSpellings are the spellings of title with dashes, underscores and
// spaces exchanged (and its slug), other than title itself.
func nameSpellings(title string) []string {
	fields := strings.FieldsFunc(title, func(r rune) bool { return r == '-' || r == '_' || r == ' ' })
	cands := []string{strings.Join(fields, " "), strings.Join(fields, "-"), Slug(title)}
	var out []string
	seen := map[string]bool{index.LinkKey(title): true}
	for _, c := range cands {
		if k := index.LinkKey(c); c != "" && !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	return out
}

// sameNamePages returns the pages (not title's own) that a spelling of
// title differing only by case, dashes, underscores or spaces reaches.
func sameNamePages(tx *store.Tx, title string) ([]PageRef, error) {
	own := index.Resolve(tx, index.LinkKey(title), "", false).Doc
	var out []PageRef
	seen := map[uint32]bool{}
	for _, s := range nameSpellings(title) {
		r := index.Resolve(tx, index.LinkKey(s), "", false)
		if r.Doc == 0 || r.Doc == own || seen[r.Doc] {
			continue
		}
		seen[r.Doc] = true
		p, err := tx.Page(r.Doc)
		if err != nil {
			return nil, err
		}
		if p == nil || p.Reserved {
			continue
		}
		out = append(out, PageRef{ID: p.ID, Title: p.Title, Type: p.Type, Path: p.Path})
		if len(out) == maxSameName {
			break
		}
	}
	return out, nil
}

// sameNameConflict refuses a stub titled title when another page has
// the same name but for case, dashes or spaces.
func sameNameConflict(tx *store.Tx, r *store.ReviewRec, title string) error {
	same, err := sameNamePages(tx, title)
	if err != nil || len(same) == 0 {
		return err
	}
	p := same[0]
	return errs.E(errs.Conflict, "%q differs only by case, dashes or spaces from the page %q (%s): a stub would be a second page of that name. "+
		"Make the links reach it instead — add %q to its aliases (a write of it then resolves this item) or link [[%s]] — or dismiss the item: %s; "+
		"to write a separate page anyway, use %s", title, p.Title, p.Path, title, p.Title,
		errs.Cmd("review.resolve", "id", r.ID, "action", "dismiss"), fmt.Sprintf("%s with another title", errs.Cmd("page.write")))
}
