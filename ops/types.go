package ops

import (
	"context"
	"sort"
	"strings"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// Open page types on the surfaces (docs/vault.md#pages): a type is a lower-case word
// (vault.WellFormedType; an upper-case one is invalid everywhere, with
// the lower-case spelling named: vault.TypeHint), and a type is never new
// or unknown in silence. A write that brings in a type no other page has
// says so (WritePageOut.NewType); a filter naming a well-formed type no
// page has matches nothing and lists the vault's types (ListPagesOut.Types,
// SearchOut.Types), closest to the one given first, so a typo is seen.

// TypeCount is a page type of the vault and how many pages have it.
type TypeCount struct {
	Type  string `json:"type"`
	Pages int    `json:"pages"`
	// Folder is where a new page of this type goes (the folder holding
	// most pages of the type, docs/vault.md#pages); status sets it.
	Folder string `json:"folder,omitempty"`
}

// MaxTypesListed caps the types a result lists.
const MaxTypesListed = 20

// typeCount returns how many pages have type typ.
func typeCount(tx *store.Tx, typ string) int {
	types, counts := tx.CatalogTypes()
	for i, t := range types {
		if t == typ {
			return counts[i]
		}
	}
	return 0
}

// vaultTypes lists the vault's page types but except, closest to near
// first (as closestTitles ranks titles), then the most used, then by
// name; at most MaxTypesListed. Never nil.
func vaultTypes(tx *store.Tx, near, except string) []TypeCount {
	types, counts := tx.CatalogTypes()
	out := make([]TypeCount, 0, len(types))
	score := make(map[string]float64, len(types))
	for i, t := range types {
		if t != except && counts[i] > 0 {
			out = append(out, TypeCount{Type: t, Pages: counts[i]})
			score[t] = similarity(near, t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if score[a.Type] != score[b.Type] {
			return score[a.Type] > score[b.Type]
		}
		if a.Pages != b.Pages {
			return a.Pages > b.Pages
		}
		return a.Type < b.Type
	})
	return out[:min(len(out), MaxTypesListed)]
}

// typesByUse lists the vault's page types, the most used first (then by
// name: vaultTypes near nothing), each with the folder a new page of that
// type goes to; at most MaxTypesListed. Never nil.
func typesByUse(tx *store.Tx) []TypeCount {
	out := vaultTypes(tx, "", "")
	for i := range out {
		out[i].Folder = newPageDir(tx, out[i].Type)
	}
	return out
}

// unknownTypes returns the vault's types (closest first) when one of the
// types a filter names is a type no page has, else nil.
func unknownTypes(tx *store.Tx, filter []string) []TypeCount {
	for _, t := range filter {
		if t != "" && typeCount(tx, t) == 0 {
			return vaultTypes(tx, t, "")
		}
	}
	return nil
}

// searchTypes runs search_wiki (searchModes), gives each hit the link
// that reaches it when its title does not (linkForms) and, when the
// query's type: filters name a type no page has, lists the vault's types.
func searchTypes(ctx context.Context, e *Env, in *SearchIn) (*SearchOut, error) {
	out, err := searchModes(ctx, e, in)
	if err != nil || out == nil {
		return out, err
	}
	q, qerr := search.ParseQuery(in.Query)
	err = e.Store.View(func(tx *store.Tx) error {
		linkForms(tx, out.Hits)
		if qerr == nil && len(q.Types) > 0 {
			out.Types = unknownTypes(tx, q.Types)
		}
		return nil
	})
	return out, err
}

// linkForms sets the link of each hit whose title does not reach it
// alone as a [[link]] (from the top of the vault): another page answers
// to the title first (a file name, an earlier rule), or several do. The
// hit's path under wiki/ then is the link that reaches it.
func linkForms(tx *store.Tx, hits []search.Hit) {
	for i := range hits {
		h := &hits[i]
		doc := tx.DocByID(h.ID)
		if doc == 0 {
			continue
		}
		if r := index.Resolve(tx, index.LinkKey(h.Title), "", false); r.Doc == doc && r.Candidates <= 1 {
			continue
		}
		h.Link = strings.TrimSuffix(strings.TrimPrefix(h.Path, vault.WikiDir+"/"), ".md")
	}
}
