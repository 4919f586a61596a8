package ops

import (
	"sort"
	"strconv"
	"strings"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// fileFindings collects lint's broken file links: links that can name
// only a file (an attachment, an explicit path into raw/) and reach none.
// A link into raw/sources/ is left out: it cites the source, and a cited
// source that is gone is a missing source (the same count as source list
// --state missing).
type fileFindings struct {
	byKey map[string]*LintFileLink
	order []*LintFileLink
}

func newFileFindings() *fileFindings { return &fileFindings{byKey: map[string]*LintFileLink{}} }

// add collects the broken file links of one page (links still pending
// resolution are resolved here).
func (f *fileFindings) add(tx *store.Tx, p *store.PageRec) {
	if p.Reserved || len(p.FileLinks) == 0 {
		return
	}
	var page *LintLinkingPage
	var pageOf = map[*LintFileLink]*LintLinkingPage{}
	for _, l := range p.FileLinks {
		file := l.File
		if p.LinksPending {
			file = index.ResolveFileLink(tx, l, p.Path).File
		}
		if file != "" {
			continue
		}
		named := index.NamedFile(p.Path, l)
		if vault.IsSourcePath(named) {
			continue // a missing source (missing_sources)
		}
		key := store.Fold(named)
		if named == "" {
			key = "\x00" + l.Key // by name: grouped by the name
		}
		b := f.byKey[key]
		if b == nil {
			b = &LintFileLink{Target: l.Target, Path: named}
			f.byKey[key] = b
			f.order = append(f.order, b)
		}
		b.Links++
		if page = pageOf[b]; page == nil {
			b.Pages = append(b.Pages, LintLinkingPage{PageRef: refOf(p)})
			page = &b.Pages[len(b.Pages)-1]
			pageOf[b] = page
		}
		page.Lines = append(page.Lines, l.Line)
	}
}

// list returns how many files are named and not found, and those in the
// window: most linked first, then by target; each one's pages by title.
func (f *fileFindings) list(w window) (int, []LintFileLink) {
	sort.SliceStable(f.order, func(i, j int) bool {
		a, b := f.order[i], f.order[j]
		if a.Links != b.Links {
			return a.Links > b.Links
		}
		return store.Fold(a.Target) < store.Fold(b.Target)
	})
	lo, hi := w.cut(len(f.order))
	out := make([]LintFileLink, 0, hi-lo)
	for _, b := range f.order[lo:hi] {
		sort.Slice(b.Pages, func(i, j int) bool { return lessRef(b.Pages[i].PageRef, b.Pages[j].PageRef) })
		out = append(out, *b)
	}
	return len(f.order), out
}

func joinInts(n []int) string {
	s := make([]string, len(n))
	for i, x := range n {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
