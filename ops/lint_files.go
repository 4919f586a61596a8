package ops

import (
	"fmt"
	"path"
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
			b.PagesTotal++
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

// outsideFiles tells, for each listed link to a file that does not
// exist, whether a file of that name is elsewhere in the vault, outside
// wiki/ and raw/ where synapse looks (an attachments/ folder left at the
// top when the notes moved into wiki/), and how to make the link reach it.
func (o *LintOut) outsideFiles(e *Env) {
	if len(o.BrokenFileLinks) == 0 || e.Vault == nil {
		return
	}
	var names []string
	for _, b := range o.BrokenFileLinks {
		names = append(names, fileLinkName(b))
	}
	found := vault.FilesOutside(e.Vault.Root, names)
	for i := range o.BrokenFileLinks {
		b := &o.BrokenFileLinks[i]
		p := found[strings.ToLower(fileLinkName(*b))]
		if p == "" {
			continue
		}
		b.Outside = p
		const why = "synapse finds files under wiki/ and raw/ only"
		dir := path.Dir(p)
		switch {
		case b.Path != "":
			b.Fix = fmt.Sprintf("%s: move %s into %s/ (mv %s %s/) and link it by its name, [[%s]]", why, p, vault.AssetsDir, shellWord(p), vault.AssetsDir, path.Base(p))
		case dir == ".":
			b.Fix = fmt.Sprintf("%s: move %s into %s/ (mv %s %s/); links by name then reach it", why, p, vault.AssetsDir, shellWord(p), vault.AssetsDir)
		default:
			top, _, _ := strings.Cut(dir, "/")
			b.Fix = fmt.Sprintf("%s: move the folder %s/ into %s/ (mv %s %s/); links by name then reach its files", why, top, vault.AssetsDir, shellWord(top), vault.AssetsDir)
		}
	}
}

// fileLinkName is the file name a broken file link names.
func fileLinkName(b LintFileLink) string {
	n := b.Path
	if n == "" {
		n = b.Target
	}
	n, _, _ = strings.Cut(n, "#")
	return path.Base(strings.ReplaceAll(n, "\\", "/"))
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
