// Package index keeps the store in step with the vault's files: the
// incremental scanner of SPEC §3, link resolution (SPEC §2.2) and the
// persisted, incrementally maintained graph (SPEC §2.3). It never prints;
// progress goes to an optional callback.
package index

import (
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
)

// LinkKey returns the folded resolution key of a link target (see
// store.LinkKey).
func LinkKey(target string) string { return store.LinkKey(target) }

// SourceKey returns the vault path of the file under raw/sources/ that a
// `sources` entry names ("raw/sources/x.md", "x.md", "sources/x.md"), or ""
// for an entry that names no such file: an external citation, a wikilink,
// free text, a bare name or a path outside raw/sources/ (see
// markdown.ClassifySource, the one place entries are classified).
func SourceKey(s string) string { return markdown.ClassifySource(s).Path }

// typeAffinity is the type term of the SPEC §2.3 edge weight.
func typeAffinity(a, b string) float64 {
	if a > b {
		a, b = b, a
	}
	switch a + "|" + b {
	case "concept|entity", "concept|synthesis":
		return 1.2
	case "entity|source", "entity|synthesis", "concept|source", "concept|query",
		"source|synthesis", "query|synthesis":
		return 1.0
	case "entity|entity", "entity|query", "concept|concept", "query|source",
		"synthesis|synthesis":
		return 0.8
	}
	return 0.5
}

// pageNames returns the folded names under which links can reach a page:
// its file stem, title and aliases.
func pageNames(r *store.PageRec) []string {
	names := append([]string{store.Stem(r.Path), r.Title}, r.Aliases...)
	for i, n := range names {
		names[i] = store.Fold(n)
	}
	return names
}

func sameNames(a, b *store.PageRec) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := pageNames(a), pageNames(b)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return a.Path == b.Path
}

// LinkRecs converts parsed links into stored ones (unresolved), keeping
// only page links, exactly as the scanner stores them (write_page uses it
// for the index.md it generates).
func LinkRecs(ls []markdown.Link) []store.LinkRec { return linkRecs(ls) }

// linkRecs converts parsed links into stored ones (unresolved), keeping
// only page links.
func linkRecs(ls []markdown.Link) []store.LinkRec {
	out := make([]store.LinkRec, 0, len(ls))
	for _, l := range ls {
		if !l.IsPageLink() {
			continue
		}
		k := LinkKey(l.Target)
		if k == "" {
			continue
		}
		out = append(out, store.LinkRec{
			Target: l.Target, Key: k, Heading: l.Heading,
			Embed: l.Embed, Markdown: l.Kind == markdown.MarkdownLink, Line: l.Line,
		})
	}
	return out
}
