package index

import (
	"github.com/synapse-wiki/synapse/store"
)

// Moved describes a page as a move will leave it: the same page (Doc) at
// another path, perhaps under another title, its aliases unchanged.
// ResolveMoved resolves a link as it will resolve once the page is there,
// so a move can tell which links it must rewrite, and check that each
// rewritten link reaches what it reached before.
type Moved struct {
	Doc     uint32
	Path    string // the new vault path
	Title   string // the new title
	Aliases []string
}

// ResolveMoved is Resolve in the vault as it will be after the move m:
// the page answers to its new path, file name and title (and its
// aliases), no longer to its old ones; every other page and file as now.
// srcPath is the linking page's path after the move.
func ResolveMoved(tx *store.Tx, m Moved, key, srcPath string, markdownLink bool) Resolution {
	return lookupAnyIn(movedNames{tx: tx, m: m}, tx, key, srcPath, markdownLink).pickFrom(srcPath)
}

// movedNames is the store with one page moved.
type movedNames struct {
	tx *store.Tx
	m  Moved
}

func (n movedNames) DocByPath(p string) uint32 {
	if store.PathKey(p) == store.PathKey(n.m.Path) {
		return n.m.Doc
	}
	if d := n.tx.DocByPath(p); d != n.m.Doc {
		return d
	}
	return 0 // the page's old path
}

func (n movedNames) LookupName(kind byte, name string) []store.NameCandidate {
	var out []store.NameCandidate
	for _, c := range n.tx.LookupName(kind, name) {
		if c.Doc != n.m.Doc {
			out = append(out, c)
		}
	}
	f := store.Fold(name)
	var mine []string
	switch kind {
	case store.NameFile:
		mine = []string{store.Stem(n.m.Path)}
	case store.NameTitle:
		mine = []string{n.m.Title}
	case store.NameAlias:
		mine = n.m.Aliases
	}
	for _, s := range mine {
		if store.Fold(s) == f {
			out = append(out, store.NameCandidate{Doc: n.m.Doc, Path: n.m.Path})
			break
		}
	}
	return out
}
