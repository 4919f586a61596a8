package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/synapse-wiki/synapse/ops"
)

// danglingNote says what became of a write's dangling links: filed as new
// missing-page reviews, or not filed again because the page linked to them
// before or they are in the queue already (a repeated or unchanged write
// files nothing).
func danglingNote(dangling, filed int) string {
	targets := plural(dangling, "link target matches", "link targets match")
	switch {
	case dangling == 0:
		return ""
	case filed == dangling && filed == 1:
		return targets + " no page yet: filed as a missing-page review (synapse review list)"
	case filed == dangling:
		return targets + " no page yet: filed as missing-page reviews (synapse review list)"
	case filed == 0 && dangling == 1:
		return targets + " no page yet; the page linked to it before, or it is in the review queue already (synapse review list --status all)"
	case filed == 0:
		return targets + " no page yet; the page linked to them before, or they are in the review queue already (synapse review list --status all)"
	}
	return fmt.Sprintf("%s no page yet: %d filed as new missing-page reviews; the others the page linked to before, or they are in the review queue already (synapse review list --status all)", targets, filed)
}

// typeList names types with their page counts: "entity (12), concept (3)".
func typeList(types []ops.TypeCount) string {
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = fmt.Sprintf("%s (%d)", t.Type, t.Pages)
	}
	return strings.Join(parts, ", ")
}

func renderPageWrite(o *output, p *ops.WritePageOut) error {
	verb := "updated"
	switch {
	case p.Unchanged:
		verb = "unchanged"
	case p.Created:
		verb = "created"
	}
	o.printf("%s %s  %s\n", o.st.OK.Render(verb), o.st.Title.Render(p.Title), o.st.Dim.Render(p.Type+" · id "+p.ID))
	pairs := [][2]string{{"path", p.Path}, {"sha256", p.SHA256}}
	if p.Revision > 0 {
		pairs = append(pairs, [2]string{"revision", strconv.Itoa(p.Revision)})
	}
	if p.Commit != "" {
		pairs = append(pairs, [2]string{"commit", p.Commit[:min(len(p.Commit), 12)]})
	}
	if len(p.Dangling) > 0 {
		pairs = append(pairs, [2]string{"dangling", strings.Join(p.Dangling, ", ")})
	}
	if len(p.AutoResolved) > 0 {
		pairs = append(pairs, [2]string{"resolved", strings.Join(p.AutoResolved, ", ") + " (review items this page answers)"})
	}
	o.kv(pairs)
	if p.NewType && len(p.Types) > 0 { // (the first page of an empty vault is new in every way)
		o.note("new type %q: no other page has it; the vault's types, closest first: %s", p.Type, typeList(p.Types))
	}
	if note := danglingNote(len(p.Dangling), len(p.Filed)); note != "" {
		o.note("%s", note)
	}
	if p.NotFiled > 0 {
		o.note("%s this write added %s not filed (a write files at most %d): synapse lint --page %q --to-review files them",
			plural(p.NotFiled, "link target", "link targets"), map[bool]string{true: "is", false: "are"}[p.NotFiled == 1], ops.MaxFiledPerWrite, p.Title)
	}
	for _, f := range p.LinksToFiles {
		o.note("[[%s]] reaches the file %s, no page: it files no missing-page review; write a page titled %q if you meant one", f.Target, f.Path, f.Target)
	}
	for _, n := range p.Notes {
		o.note("%s", n)
	}
	return nil
}
