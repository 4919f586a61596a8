package render

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/ops"
)

// inField is the input field named field as the verb was given it: the
// zero value when it is absent or of another type.
func inField[T any](in []byte, field string) T {
	var v map[string]json.RawMessage
	var out T
	if json.Unmarshal(in, &v) == nil && v[field] != nil {
		json.Unmarshal(v[field], &out)
	}
	return out
}

// askedField is an input field (a title) as the verb was given it, quoted.
func askedField(in []byte, field string) string {
	return strconv.Quote(inField[string](in, field))
}

// ambiguousNote says, on stderr, that the title a verb was given (the
// input field named field) answers to several pages: which one was used,
// why (the tie-break a link would use), and the others by path and id.
func ambiguousNote(o *Output, field, chosen string, also []ops.PageRef) {
	if len(also) == 0 {
		return
	}
	var others []string
	why := "the shortest path wins"
	for _, a := range also {
		others = append(others, fmt.Sprintf("%s (id %s)", a.Path, a.ID))
		if len(a.Path) <= len(chosen) {
			why = "of paths as short, the first in order wins"
		}
	}
	o.Note("%s: %s answer to it; this is %s (a link would choose it too: %s); also %s. Ask for one by its path or id.",
		askedField(o.in, field), plural(len(also)+1, "page", "pages"), chosen, why, strings.Join(others, ", "))
}

func PageGet(o *Output, p *ops.GetPageOut) error {
	ambiguousNote(o, "title", p.Path, p.AlsoMatched)
	if p.ContentOmitted {
		return pageOutline(o, p)
	}
	if p.Section != "" {
		// one section: its text, as page write --section takes it back
		if o.tty {
			o.Printf("%s  %s\n", o.st.Title.Render(p.Title), o.st.Dim.Render(fmt.Sprintf("%s · line %d · sha256 %s", p.Path, p.SectionLine, p.SHA256[:12])))
		}
		o.Printf("%s", p.Content)
		if !strings.HasSuffix(p.Content, "\n") {
			o.Printf("\n")
		}
		return nil
	}
	if !o.tty {
		// a pipe gets the page as a file: frontmatter (as written, even
		// when it is not valid YAML) and body, so that piping it back to
		// `page write` changes nothing; a body that itself starts with
		// "---" gets fences, or it would be read as the frontmatter
		fm, _ := p.Frontmatter.YAML()
		if fm != "" || strings.HasPrefix(p.Content, "---") {
			o.Printf("---\n%s---\n", fm)
		}
		o.Printf("%s", p.Content)
		if !strings.HasSuffix(p.Content, "\n") {
			o.Printf("\n")
		}
		return nil
	}
	o.Printf("%s  %s\n", o.st.Title.Render(p.Title), o.st.Dim.Render(p.Type+" · "+p.Path+" · id "+p.ID))
	if fm, _ := p.Frontmatter.YAML(); fm != "" {
		o.Printf("%s", o.st.Dim.Render("---\n"+fm+"---")+"\n")
	}
	o.Printf("%s\n", strings.TrimRight(p.Content, "\n"))
	resolved, dangling := 0, 0
	for _, l := range p.Links {
		if l.Resolved {
			resolved++
		} else {
			dangling++
		}
	}
	o.Printf("\n%s\n", o.st.Dim.Render(fmt.Sprintf("%s (%d unresolved) · %s · sha256 %s", plural(len(p.Links), "link", "links"), dangling, plural(p.BacklinksTotal, "backlink", "backlinks"), p.SHA256[:12])))
	return nil
}

func PageList(o *Output, p *ops.ListPagesOut) error {
	rows := make([][]string, 0, len(p.Pages))
	for _, x := range p.Pages {
		rows = append(rows, []string{x.Title, x.Type, x.Path, x.Updated, x.ID})
	}
	o.table([]col{flexCol("TITLE"), fixedCol("TYPE"), pathCol("PATH"), fixedCol("UPDATED"), fixedCol("ID")}, rows)
	if m := strings.TrimSpace(inField[string](o.in, "match")); m != "" && len(p.Types) == 0 {
		// what was asked for, then the whole vault
		o.Note("%s matching --match %q (of %s)", plural(p.Total, "page", "pages"), m, plural(p.All, "page", "pages"))
		if len(p.Pages) < p.Total {
			o.Note("%d shown (use --limit and --offset for more)", len(p.Pages))
		}
		return nil
	}
	switch {
	case len(p.Types) > 0:
		o.Note("no page has that type; the vault's types, closest first: %s", typeList(p.Types))
	case p.Total == 0:
		o.Note("no pages")
	case len(p.Pages) < p.Total:
		o.Note("%d of %s shown (use --limit and --offset for more)", len(p.Pages), plural(p.Total, "page", "pages"))
	}
	return nil
}

// movedShown bounds the changed pages page move lists (--json lists all).
const movedShown = 20

func PageMove(o *Output, p *ops.MovePageOut) error {
	what := o.st.Title.Render(p.Title)
	if p.FromTitle != p.Title {
		what = o.st.Title.Render(p.FromTitle) + " → " + what
	}
	verb := "moved"
	if p.DryRun {
		verb = "would move"
	}
	o.Printf("%s %s  %s\n", o.st.OK.Render(verb), what, o.st.Dim.Render(p.Type+" · id "+p.ID))
	pairs := [][2]string{{"from", p.FromPath}, {"path", p.Path}}
	links := 0
	for _, c := range p.Changed {
		links += c.Links
	}
	pairs = append(pairs, [2]string{"links", fmt.Sprintf("%d rewritten in %s", links, plural(len(p.Changed), "other page", "other pages"))})
	if p.UnchangedLinks > 0 {
		pairs = append(pairs, [2]string{"unchanged", fmt.Sprintf("%d still reaching it as written", p.UnchangedLinks)})
	}
	if p.Revision > 0 {
		pairs = append(pairs, [2]string{"revision", strconv.Itoa(p.Revision)})
	}
	if p.Commit != "" {
		pairs = append(pairs, [2]string{"commit", p.Commit[:min(len(p.Commit), 12)]})
	}
	if len(p.AutoResolved) > 0 {
		pairs = append(pairs, [2]string{"resolved", strings.Join(p.AutoResolved, ", ") + " (review items the page answers)"})
	}
	o.kv(pairs)
	for i, c := range p.Changed {
		if i == movedShown {
			o.Note("and %d more pages (--json lists them all)", len(p.Changed)-i)
			break
		}
		o.Printf("  %s %s\n", c.Path, o.st.Dim.Render(fmt.Sprintf("(%d)", c.Links)))
	}
	if p.Note != "" {
		o.Note("%s", p.Note)
	}
	for _, n := range p.Notes {
		o.Note("%s", n)
	}
	if p.DryRun {
		o.Note("nothing was moved (--dry-run)")
	}
	return nil
}

func Context(o *Output, c *ops.ContextOut) error {
	for _, p := range c.Pages {
		o.Printf("%s  %s\n", o.st.Title.Render(p.Title), o.st.Dim.Render(p.Type+" · "+p.Path))
		if p.Content != "" {
			o.Printf("%s\n", strings.TrimRight(p.Content, "\n"))
		}
		if p.Cut > 0 {
			o.Printf("%s\n", o.st.Dim.Render(fmt.Sprintf("[… %d more bytes]", p.Cut)))
		}
		for _, ps := range p.Passages {
			where := fmt.Sprintf("line %d", ps.Line)
			if ps.Heading != "" {
				where += " · " + ps.Heading
			}
			o.Printf("%s\n%s\n", o.st.Dim.Render("["+where+"]"), strings.TrimRight(ps.Text, "\n"))
			if ps.Cut > 0 {
				o.Printf("%s\n", o.st.Dim.Render(fmt.Sprintf("[… %d more bytes]", ps.Cut)))
			}
		}
		o.Printf("\n")
	}
	if len(c.Neighbors) > 0 {
		o.Printf("%s\n", o.st.Header.Render("Neighbours"))
	}
	for _, n := range c.Neighbors {
		o.Printf("%s  %s\n", o.st.Title.Render(n.Title), o.st.Dim.Render(n.Type+" · "+n.Path))
		if n.Summary != "" {
			o.Printf("  %s\n", n.Summary)
		}
		for _, l := range n.Links {
			o.Printf("  %s\n", o.st.Dim.Render(l))
		}
	}
	if c.Note != "" {
		o.Note("%s", c.Note)
	}
	return nil
}

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

func PageWrite(o *Output, p *ops.WritePageOut) error {
	verb := "updated"
	switch {
	case p.Unchanged:
		verb = "unchanged"
	case p.Created:
		verb = "created"
	}
	id := " · id " + p.ID
	if p.DryRun {
		verb = "would be " + verb
		if p.ID == "" {
			id = "" // a new page has no id until it is written
		}
	}
	o.Printf("%s %s  %s\n", o.st.OK.Render(verb), o.st.Title.Render(p.Title), o.st.Dim.Render(p.Type+id))
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
		key := "resolved"
		if p.DryRun {
			key = "would close"
		}
		pairs = append(pairs, [2]string{key, strings.Join(p.AutoResolved, ", ") + " (review items this page answers)"})
	}
	o.kv(pairs)
	if p.NewType && len(p.Types) > 0 { // (the first page of an empty vault is new in every way)
		o.Note("new type %q: no other page has it; the vault's types, closest first: %s", p.Type, typeList(p.Types))
	}
	if p.DryRun {
		if len(p.Filed) > 0 {
			o.Note("a write would file %s as missing-page reviews (nothing was written: --dry-run)", strings.Join(p.Filed, ", "))
		} else {
			o.Note("nothing was written (--dry-run)")
		}
	} else if note := danglingNote(len(p.Dangling), len(p.Filed)); note != "" {
		o.Note("%s", note)
	}
	if p.NotFiled > 0 {
		o.Note("%s this write added %s not filed (a write files at most %d): synapse lint --page %q --to-review files them",
			plural(p.NotFiled, "link target", "link targets"), map[bool]string{true: "is", false: "are"}[p.NotFiled == 1], ops.MaxFiledPerWrite, p.Title)
	}
	for _, a := range p.Ambiguous {
		others := strings.Join(a.Others, ", ")
		if a.OthersTotal > len(a.Others) {
			others += fmt.Sprintf(" and %d more", a.OthersTotal-len(a.Others))
		}
		o.Note("[[%s]] matches several pages: it reaches %s (by %s), not %s; link by path to reach another", a.Target, a.Chosen, a.ChosenBy, others)
	}
	if p.AmbiguousTotal > len(p.Ambiguous) {
		o.Note("%d more ambiguous link targets: synapse lint --page %q --category ambiguous_links lists them", p.AmbiguousTotal-len(p.Ambiguous), p.Title)
	}
	for _, a := range p.AliasShared {
		o.Note("the alias %q is also the %s of %s: [[%s]] may reach that page, not this one", a.Alias, a.By, strings.Join(a.Pages, ", "), a.Alias)
	}
	for _, f := range p.LinksToFiles {
		o.Note("[[%s]] reaches the file %s, no page: it files no missing-page review; write a page titled %q if you meant one", f.Target, f.Path, f.Target)
	}
	for _, n := range p.Notes {
		o.Note("%s", n)
	}
	return nil
}

// outlineHead is the line above an outline on a terminal: the page's
// title, type, path, size and the start of its sha256.
func outlineHead(o *Output, p *ops.GetPageOut) {
	o.Printf("%s  %s\n", o.st.Title.Render(p.Title), o.st.Dim.Render(fmt.Sprintf("%s · %s · %d bytes · sha256 %s", p.Type, p.Path, p.Size, p.SHA256[:12])))
}

// maxOutlineShown bounds the headings a pipe's error names.
const maxOutlineShown = 20

// pageOutline prints a page whose content get_page left out (over
// ops.MaxPageGetBytes): on a terminal its outline; a pipe, which expects
// the file itself, gets nothing but an error, never a part of the file.
func pageOutline(o *Output, p *ops.GetPageOut) error {
	what := "page " + p.Path
	if p.Section != "" {
		what = "section " + strconv.Quote(p.Section) + " of " + p.Path
	}
	var heads []string
	for _, h := range p.Outline {
		heads = append(heads, fmt.Sprintf("%s (line %d, %d bytes)", h.Heading, h.Line, h.Bytes))
	}
	if inField[bool](o.in, "outline") {
		// asked for (--outline), not given for a page over the size
		// bound: the outline in a pipe too, one heading a row
		rows := make([][]string, 0, len(p.Outline))
		for _, h := range p.Outline {
			rows = append(rows, []string{strconv.Itoa(h.Line), strconv.Itoa(h.Bytes), h.Heading})
		}
		if o.tty {
			outlineHead(o, p)
		}
		o.table([]col{numCol("LINE"), numCol("BYTES"), flexCol("HEADING")}, rows)
		if p.OutlineTotal > len(p.Outline) {
			o.Note("%d more headings", p.OutlineTotal-len(p.Outline))
		}
		o.Note("%s: %d bytes of content, sha256 %s; --section HEADING reads one section", what, p.ContentBytes, p.SHA256)
		return nil
	}
	if !o.tty {
		named := heads[:min(len(heads), maxOutlineShown)]
		if more := p.OutlineTotal - len(named); more > 0 {
			named = append(named[:len(named):len(named)], fmt.Sprintf("%d more", more))
		}
		return errs.E(errs.TooLarge, "the %s is %d bytes, more than page get prints whole (%d); read one section with --section HEADING (sha256 %s is the page's, the --if-match of a section write), or all of it with --full; its headings: %s",
			what, p.ContentBytes, ops.MaxPageGetBytes, p.SHA256, strings.Join(named, ", "))
	}
	outlineHead(o, p)
	for _, h := range heads {
		o.Printf("  %s\n", h)
	}
	if p.OutlineTotal > len(p.Outline) {
		o.Printf("  %s\n", o.st.Dim.Render(fmt.Sprintf("… %d more headings", p.OutlineTotal-len(p.Outline))))
	}
	o.Note("the %s is %d bytes, more than page get prints whole (%d): read one section with --section HEADING, or all of it with --full", what, p.ContentBytes, ops.MaxPageGetBytes)
	return nil
}
