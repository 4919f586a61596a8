package ops

import (
	"strings"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// pageMatcher is page list's match filter (nil: every page). Text
// without * ? or [ keeps pages whose title, an alias or the vault path
// holds it, folded the way page names are (store.Fold: NFC, lower
// case); with them it is a glob (source list's rule: * also crosses
// folders) over the title, the vault path and the path under wiki/.
func pageMatcher(text string) (func(*store.PageRec) bool, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	if len(text) > 500 {
		return nil, errs.E(errs.Invalid, "match filter is %d bytes, over 500", len(text))
	}
	want := store.Fold(text)
	if !strings.ContainsAny(text, "*?[") {
		return func(p *store.PageRec) bool {
			if strings.Contains(store.Fold(p.Title), want) || strings.Contains(store.Fold(p.Path), want) {
				return true
			}
			for _, a := range p.Aliases {
				if strings.Contains(store.Fold(a), want) {
					return true
				}
			}
			return false
		}, nil
	}
	re, err := globRegexp("match filter", want)
	if err != nil {
		return nil, err
	}
	return func(p *store.PageRec) bool {
		path := store.Fold(p.Path)
		return re.MatchString(store.Fold(p.Title)) || re.MatchString(path) || re.MatchString(strings.TrimPrefix(path, vault.WikiDir+"/"))
	}, nil
}
