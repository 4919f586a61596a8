package ops

import (
	"encoding/json"
	"reflect"
	"strings"
)

// LintCategory describes one kind of lint finding. The categories are
// declared once, in lintCategories: the report's order, the names
// --category takes, the headings people read and what each finds all come
// from there; the count and the list of a category are the fields of
// LintCounts and LintOut whose JSON name is the category's (a test checks
// that each has both).
type LintCategory struct {
	Name  string // the --category value, and the JSON name of its count and list
	Title string // the heading of its section in the report
	What  string // what one finding is
	// VaultOnly categories are reported for the whole vault only, never
	// with --page.
	VaultOnly bool
}

// lintCategories are the lint categories in report order.
var lintCategories = []LintCategory{
	{Name: LintBrokenLinks, Title: "Broken links", What: "a link target that matches no page (nor file)"},
	{Name: LintBrokenFileLinks, Title: "Links to files that do not exist", What: "a link naming a file (an attachment, a path into raw/) that synapse finds under neither wiki/ nor raw/"},
	{Name: LintAmbiguousLinks, Title: "Ambiguous links", What: "a link whose target matches several pages, none in the linking page's folder: the one chosen (shortest path, then name order) may not be the one meant"},
	{Name: LintOrphans, Title: "Orphan pages", What: "a page no page links to"},
	{Name: LintNoOutlinks, Title: "Pages without outgoing links", What: "a page linking to no other page"},
	{Name: LintMissingSources, Title: "Missing source files", What: "a cited source file that does not exist"},
	{Name: LintDuplicateTitles, Title: "Duplicate titles", What: "a title shared by several pages"},
	{Name: LintFrontmatterErrors, Title: "Frontmatter that does not parse", What: "a page whose frontmatter is not valid YAML"},
	{Name: LintReservedFiles, Title: "Top files synapse leaves alone", What: "a hand-written index.md synapse does not maintain", VaultOnly: true},
	{Name: LintRefusedFiles, Title: "Files refused instead of read", What: "a file the scans skipped (a named pipe, a device, a symlink out of the vault)", VaultOnly: true},
	{Name: LintOverCap, Title: "Pages over a limit (indexed in part, or too big to write whole)", What: "a page over a parse limit (size, links, aliases, frontmatter), indexed only in part, or over the write cap (1 MiB), which writes may not grow"},
}

// LintCategories lists the lint categories' names in report order.
var LintCategories = func() []string {
	names := make([]string, len(lintCategories))
	for i, c := range lintCategories {
		names[i] = c.Name
	}
	return names
}()

// LintCategoryList returns the lint categories in report order.
func LintCategoryList() []LintCategory { return append([]LintCategory(nil), lintCategories...) }

// Compact and full listings: by default lint lists few findings per
// category and leaves out the pages linking to each; --full or
// --category lists more, with those pages.
const (
	lintCompactLimit  = 10
	lintCategoryLimit = 20
	lintFullLimit     = 50
	// lintMaxPages bounds the linking pages listed per finding (a target
	// a thousand pages link to); pages_total counts them all.
	lintMaxPages = 20
)

// fieldByJSON returns the field of struct value v whose JSON name is name.
func fieldByJSON(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if n, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); n == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// Of is the count of a category (0 for a name that is none).
func (c LintCounts) Of(category string) int { return c.of(category) }

// of is the count of a category.
func (c LintCounts) of(category string) int {
	if f, ok := fieldByJSON(reflect.ValueOf(c), category); ok {
		return int(f.Int())
	}
	return 0
}

// listOf is the list of a category's findings in the report.
func (o *LintOut) listOf(category string) reflect.Value {
	f, _ := fieldByJSON(reflect.ValueOf(o).Elem(), category)
	return f
}

// Listed is the number of findings of a category listed in the report.
func (o *LintOut) Listed(category string) int {
	if l := o.listOf(category); l.IsValid() {
		return l.Len()
	}
	return 0
}

// listed counts the findings listed, over every category.
func (o *LintOut) listed() int {
	n := 0
	for _, c := range lintCategories {
		n += o.listOf(c.Name).Len()
	}
	return n
}

// keepCategory empties every list but category's.
func keepCategory(out *LintOut, category string) {
	for _, c := range lintCategories {
		if c.Name != category {
			l := out.listOf(c.Name)
			l.Set(reflect.MakeSlice(l.Type(), 0, 0))
		}
	}
}

// emptyLists gives every category an empty list, never nil, for Go
// callers; the JSON leaves an empty list out.
func (o *LintOut) emptyLists() {
	for _, c := range lintCategories {
		l := o.listOf(c.Name)
		if l.IsNil() {
			l.Set(reflect.MakeSlice(l.Type(), 0, 0))
		}
	}
}

// compact leaves out the pages linking to each listed finding (their
// number stays): what the default report lists per category is the
// finding, its size and where to look next (--category X for the pages).
// A report on several pages (page given more than once) keeps them: there
// they say which of the pages each finding is on.
func (o *LintOut) compact() {
	if len(o.Pages) > 1 {
		return
	}
	for i := range o.BrokenLinks {
		o.BrokenLinks[i].Pages = nil
	}
	for i := range o.BrokenFileLinks {
		o.BrokenFileLinks[i].Pages = nil
	}
	for i := range o.AmbiguousLinks {
		o.AmbiguousLinks[i].Pages = nil
	}
	for i := range o.MissingSources {
		o.MissingSources[i].Pages = nil
	}
}

// capPages keeps the first lintMaxPages linking pages of each finding.
func (o *LintOut) capPages() {
	for i := range o.BrokenLinks {
		o.BrokenLinks[i].Pages = firstN(o.BrokenLinks[i].Pages, lintMaxPages)
	}
	for i := range o.BrokenFileLinks {
		o.BrokenFileLinks[i].Pages = firstN(o.BrokenFileLinks[i].Pages, lintMaxPages)
	}
	for i := range o.AmbiguousLinks {
		o.AmbiguousLinks[i].Pages = firstN(o.AmbiguousLinks[i].Pages, lintMaxPages)
	}
}

func firstN[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// fit shortens the longest lists of the report, a quarter at a time,
// until its JSON is at most MaxListBytes (each list keeps one finding);
// it reports whether it left any finding out.
func (o *LintOut) fit() bool {
	cut := false
	for {
		b, err := json.Marshal(o)
		if err != nil || len(b) <= MaxListBytes {
			return cut
		}
		var longest reflect.Value
		for _, c := range lintCategories {
			if l := o.listOf(c.Name); !longest.IsValid() || l.Len() > longest.Len() {
				longest = l
			}
		}
		if longest.Len() <= 1 {
			return cut
		}
		longest.Set(longest.Slice(0, longest.Len()-max(longest.Len()/4, 1)))
		cut = true
	}
}
