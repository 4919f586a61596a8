package ops

import (
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// SharedAlias is an alias a write added that other pages answer to as
// well.
type SharedAlias struct {
	Alias string `json:"alias"`
	// By says how the first of the other pages has the name: "title",
	// "file name" or "alias". A title or file name wins over an alias
	// when a link is resolved, so [[Alias]] reaches that page.
	By    string   `json:"by" desc:"How the other page has the name: title or file name (a [[link]] by it reaches that page, not this one), or alias (either may be reached)"`
	Pages []string `json:"pages" desc:"The other pages with that name, by path (the first 5)"`
}

// maxSharedAliases bounds the aliases a write lists as shared.
const maxSharedAliases = 20

// sharedAliases returns the aliases rec has and old (the page before the
// write; nil for a new page) had not that another page answers to by its
// file name, title or alias.
func sharedAliases(tx *store.Tx, old, rec *store.PageRec) []SharedAlias {
	had := map[string]bool{}
	if old != nil {
		for _, a := range old.Aliases {
			had[store.Fold(a)] = true
		}
	}
	var out []SharedAlias
	for _, a := range rec.Aliases {
		f := store.Fold(a)
		if had[f] || len(out) == maxSharedAliases {
			continue
		}
		had[f] = true
		s := SharedAlias{Alias: a}
		seen := map[uint32]bool{}
		for _, kind := range []struct {
			k  byte
			by string
		}{{store.NameFile, "file name"}, {store.NameTitle, "title"}, {store.NameAlias, "alias"}} {
			for _, c := range tx.LookupName(kind.k, f) {
				if c.Doc == rec.Doc || seen[c.Doc] || len(s.Pages) == MaxAmbiguousOthers || vault.IsReserved(c.Path) {
					continue
				}
				seen[c.Doc] = true
				if s.By == "" {
					s.By = kind.by
				}
				s.Pages = append(s.Pages, c.Path)
			}
		}
		if len(s.Pages) > 0 {
			out = append(out, s)
		}
	}
	return out
}
