package index

import (
	"errors"
	"io/fs"
	"os"
	"sort"

	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"golang.org/x/text/unicode/norm"
)

// Twins are page files whose paths differ only by case or Unicode
// normalization (wiki/Upper.md and wiki/upper.md; Résumé.md in NFC and in
// NFD): two files on a file system that tells them apart, one page to
// links, which fold case and normalize (Obsidian's rule). One of them is
// indexed — the one the index holds already, else the one spelled in NFC,
// else the first in byte order — and the others are refused by name
// (reason twin), so no file is a page in silence, and a write to the
// title that names both goes to neither.

// TwinReason is the Refused reason of a twin.
const TwinReason = "twin"

func twinRefusal(p, of string) Refused {
	how := "differs from " + of + "'s only by case"
	if norm.NFC.String(p) == norm.NFC.String(of) {
		how = "is " + of + "'s in another Unicode normalization (" + normForm(p) + " beside " + normForm(of) + ")"
	}
	return Refused{Path: p, Reason: TwinReason, TwinOf: of,
		Message: p + " is not indexed: its name " + how + ", so links cannot tell the two apart; rename one of them"}
}

func normForm(s string) string {
	switch {
	case norm.NFC.IsNormalString(s):
		return "NFC"
	case norm.NFD.IsNormalString(s):
		return "NFD"
	}
	return "mixed"
}

// dropTwins removes the twins from the files a scan found (sorted by
// path), refusing each by name: twins among them, and a new page file
// whose name folds to that of an indexed page whose file is still there.
func (ix *Indexer) dropTwins(tx *store.Tx, disk []diskFile, rep *Report) ([]diskFile, error) {
	groups := map[string][]int{}
	for i, d := range disk {
		if vault.IsPagePath(d.path) {
			k := store.PathKey(d.path)
			groups[k] = append(groups[k], i)
		}
	}
	drop := map[int]bool{}
	for _, g := range groups {
		if len(g) > 1 {
			keep := ix.chooseTwin(tx, disk, g)
			for _, i := range g {
				if i != keep {
					drop[i] = true
					rep.refuseWith(twinRefusal(disk[i].path, disk[keep].path))
				}
			}
			continue
		}
		// one file of this name on disk: a twin still if the index holds
		// another spelling whose file is there (a scan of a few paths)
		d := disk[g[0]]
		if _, known, err := tx.File(d.path); err != nil || known {
			if err != nil {
				return nil, err
			}
			continue
		}
		if h, ok, err := tx.Head(tx.DocByPath(d.path)); err != nil {
			return nil, err
		} else if ok && h.Path != d.path && ix.exists(h.Path) {
			drop[g[0]] = true
			rep.refuseWith(twinRefusal(d.path, h.Path))
		}
	}
	if len(drop) == 0 {
		return disk, nil
	}
	out := disk[:0]
	for i, d := range disk {
		if !drop[i] {
			out = append(out, d)
		}
	}
	return out, nil
}

// chooseTwin picks the twin to index: the one the index holds, else the
// one spelled in NFC, else the first in byte order.
func (ix *Indexer) chooseTwin(tx *store.Tx, disk []diskFile, g []int) int {
	sort.Slice(g, func(a, b int) bool { return disk[g[a]].path < disk[g[b]].path })
	for _, i := range g {
		if f, ok, _ := tx.File(disk[i].path); ok && f.Kind == store.KindPage {
			return i
		}
	}
	for _, i := range g {
		if norm.NFC.IsNormalString(disk[i].path) {
			return i
		}
	}
	return g[0]
}

func (ix *Indexer) exists(p string) bool {
	_, err := os.Lstat(ix.Vault.Abs(p))
	return !errors.Is(err, fs.ErrNotExist)
}
