package main

import (
	"fmt"
	"strings"

	"github.com/synapse-wiki/synapse/ops"
)

func init() {
	renderers["page.write"] = func(o *output, v any) error {
		p := v.(*ops.WritePageOut)
		verb := "updated"
		switch {
		case p.Unchanged:
			verb = "unchanged"
		case p.Created:
			verb = "created"
		}
		o.printf("%s %s  %s\n", o.st.OK.Render(verb), o.st.Title.Render(p.Title), o.st.Dim.Render(p.Type+" · id "+p.ID))
		pairs := [][2]string{{"path", p.Path}, {"sha256", p.SHA256}}
		if len(p.Dangling) > 0 {
			pairs = append(pairs, [2]string{"dangling", strings.Join(p.Dangling, ", ")})
		}
		o.kv(pairs)
		if p.NewType && len(p.Types) > 0 { // (the first page of an empty vault is new in every way)
			o.note("new type %q: no other page has it; the vault's types, closest first: %s", p.Type, typeList(p.Types))
		}
		if len(p.Dangling) > 0 {
			if len(p.Dangling) == 1 {
				o.note("1 link target matches no page yet: filed as a missing-page review (synapse review list)")
			} else {
				o.note("%d link targets match no page yet: filed as missing-page reviews (synapse review list)", len(p.Dangling))
			}
		}
		return nil
	}
}

// typeList names types with their page counts: "entity (12), concept (3)".
func typeList(types []ops.TypeCount) string {
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = fmt.Sprintf("%s (%d)", t.Type, t.Pages)
	}
	return strings.Join(parts, ", ")
}
