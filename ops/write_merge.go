package ops

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"
)

// Stage 3 of write_page: merge the call into the page. The body is the
// caller's (in the file's line endings); the frontmatter is the file's,
// with each key the call gives applied through its rule only where it
// changes the value — a key given with its current value is left exactly
// as written, unchecked, so writing back what get_page returned changes
// nothing. Then the honest dates: `created` only on a page synapse
// creates, `updated` only when something changed, in the page's format.

// merged is the page a write produces, before it is rendered.
type merged struct {
	fm     *markdown.Frontmatter
	keepFM bool   // the file's frontmatter text stays byte for byte (it is not valid YAML)
	body   string // the new body, in the file's line endings
	title  string // the title of a new page (the file name is made from it)
	typ    string // the type of a new page (its folder is chosen by it)
	crlf   bool   // the file uses CRLF line endings
}

func (w *pageWrite) merge(t *target) (*merged, error) {
	c := w.c
	m := &merged{crlf: isCRLF(t.old)}
	if c.hasBlock && t.rec != nil && t.doc.HasFM && (c.whole == t.doc.Body || "\ufeff"+c.whole == t.doc.Body) {
		// the page's own body begins with a ---…--- block (after its
		// frontmatter): sent back as get_page returned it, it is body
		c.dropBlock()
	}
	switch {
	case c.section != nil:
		body, err := spliceSection(t, c.section, c.body, c.appendText)
		if err != nil {
			return nil, err
		}
		c.body = body
	case c.appendText:
		c.body = markdown.AppendToBody(t.doc.Body, c.body)
	}
	bodyChanged, err := w.mergeBody(t, m)
	if err != nil {
		return nil, err
	}
	if c.hasBlock && c.blockErr != "" {
		// a broken block is accepted only as the file's own frontmatter,
		// unchanged
		if t.fmErr == "" || !sameText(c.blockText, t.doc.FM) {
			return nil, errs.E(errs.Invalid, "content starts with a frontmatter block that is not valid YAML (%s); fix it (quote a value holding \": \" or quotes, remove conflict markers) or leave the block out", blockLine(c.blockErr))
		}
	}
	if t.rec != nil && t.fmErr != "" && !(c.hasBlock && c.blockErr == "") {
		// the file's frontmatter is not valid YAML: it is kept byte for
		// byte, and only the body can change
		for _, k := range c.keys {
			return nil, errs.E(errs.Conflict, "%s has frontmatter that is not valid YAML (%s), which synapse keeps as it is; %s cannot be changed until it is fixed: write only the body (no frontmatter keys), or send the whole page with a corrected frontmatter block in content (%s gives the block as it stands in frontmatter_text)", t.path, t.fmErr, k, errs.Cmd("page.get"))
		}
		m.keepFM, m.fm = true, t.fm
		return m, nil
	}
	switch {
	case t.rec == nil:
		m.fm = &markdown.Frontmatter{}
		if err := w.newPageKeys(m); err != nil {
			return nil, err
		}
	case t.fmErr != "":
		// the file's broken frontmatter is replaced by the caller's block
		m.fm = c.blockFM.Clone()
	default:
		m.fm = t.fm.Clone()
	}
	for _, k := range c.keys {
		if err := w.apply(t, m, k); err != nil {
			return nil, err
		}
	}
	if t.rec == nil {
		return m, w.newPageDates(m)
	}
	if m.fm.Modified() || bodyChanged || t.fmErr != "" {
		return m, w.bumpUpdated(t, m)
	}
	return m, nil
}

// spliceSection returns the page's body with the section spec names
// replaced by text, or with text appended as that section when the page
// has no such heading (a new page is that section alone); with add, text
// goes to the end of the section's own text instead. A heading that
// several sections have is invalid, naming their lines.
func spliceSection(t *target, spec *markdown.SectionSpec, text string, add bool) (string, error) {
	body := t.doc.Body
	sec, ok, amb := markdown.FindSection(body, *spec)
	switch {
	case ok && add:
		return markdown.AppendToSection(body, sec, text), nil
	case ok:
		return markdown.ReplaceSection(body, sec, text), nil
	case len(amb) > 0:
		return "", errs.E(errs.Invalid, "%d sections of %s are headed %q: %s; name one by its level (\"## Heading\") or its parent (\"Parent#Heading\")", len(amb), t.path, spec.Path[0], markdown.Lines(amb))
	case strings.Contains(strings.Trim(spec.Path[0], "# "), "#"):
		return "", errs.E(errs.Invalid, "%s has no section %q to write under; its headings: %s", cmp.Or(t.path, "the page"), spec.Raw, headingList(body))
	}
	return markdown.AppendSection(body, spec.Level, spec.Path[0], text), nil
}

// headingList names a body's first headings for a message.
func headingList(body string) string {
	secs := markdown.Sections(body)
	if len(secs) == 0 {
		return "none"
	}
	if len(secs) > 20 {
		return markdown.Lines(secs[:20]) + fmt.Sprintf(" and %d more", len(secs)-20)
	}
	return markdown.Lines(secs)
}

// mergeBody decides the new body: the caller's, written in the body's
// CRLF line endings when the caller used plain newlines (in all of it, or
// in lines added to a body that is CRLF throughout); a body equal to
// the file's but for a final newline is the file's.
func (w *pageWrite) mergeBody(t *target, m *merged) (changed bool, err error) {
	c := w.c
	b := c.body
	if t.rec == nil {
		if strings.TrimSpace(b) == "" {
			if c.hasBlock {
				return false, errs.E(errs.Invalid, "content is empty: it holds only a frontmatter block, and a new page needs a body")
			}
			return false, errs.E(errs.Invalid, "content is empty: a new page needs a body")
		}
		if !strings.HasSuffix(b, "\n") {
			b += "\n"
		}
		m.body = b
		return true, nil
	}
	old := t.doc.Body
	if c.keepBody {
		m.body = old // frontmatter only (decodeNoBody)
		return false, nil
	}
	if c.bom && strings.HasPrefix(old, "\ufeff") {
		b = "\ufeff" + b // a second BOM, inside the body (as get_page returned it)
	}
	same := func(b string) bool {
		return b == old || !strings.HasSuffix(old, "\n") && (b == old+"\n" || b == old+"\r\n")
	}
	if !same(b) && strings.Contains(old, "\r\n") {
		switch n := strings.Count(b, "\n"); {
		case !strings.Contains(b, "\r"):
			b = strings.ReplaceAll(b, "\n", "\r\n") // the caller's newlines in the file's CRLF
		case n != strings.Count(b, "\r\n") && strings.Count(old, "\n") == strings.Count(old, "\r\n"):
			// the body as read (CRLF) with lines added in plain newlines:
			// the file's CRLF throughout, as it was
			b = strings.ReplaceAll(strings.ReplaceAll(b, "\r\n", "\n"), "\n", "\r\n")
		}
	}
	if b != "" && !strings.HasSuffix(b, "\n") && strings.HasSuffix(old, "\n") {
		// the file ends its last line, the caller did not: the final
		// newline is the file's convention (a body sent twice without one
		// is unchanged the second time, as it is after a create)
		if strings.HasSuffix(old, "\r\n") {
			b += "\r\n"
		} else {
			b += "\n"
		}
	}
	switch {
	case same(b):
		m.body = old
		return false, nil
	case strings.TrimSpace(b) == "" && strings.TrimSpace(old) != "":
		return false, errs.E(errs.Invalid, "content is empty, and %s has a body; send the whole body (%s returns it)", t.path, errs.Cmd("page.get"))
	}
	m.body = b // as given, with the file's final newline
	return b != old, nil
}

// newPageKeys starts a new page's frontmatter: title and type first.
func (w *pageWrite) newPageKeys(m *merged) error {
	c := w.c
	m.title = c.title
	if r, ok, err := w.stringOf("title"); err != nil {
		return err
	} else if ok {
		r = norm.NFC.String(strings.TrimSpace(r))
		if store.Fold(r) != store.Fold(c.title) {
			return errs.E(errs.Invalid, "frontmatter.title %q differs from the title %q; a new page takes the title it is written under", r, c.title)
		}
		m.title = r
	}
	m.typ = "concept"
	if c.path != "" {
		m.typ = vault.TypeFromPath(c.path) // a chosen folder says the type (note outside the type folders)
	}
	if typ, ok, err := w.typeOf(); err != nil {
		return err
	} else if ok {
		if !vault.ValidType(typ) {
			return errs.E(errs.Invalid, "%s", vault.TypeProblem(typ))
		}
		m.typ = typ
	}
	if err := m.fm.Set("title", m.title); err != nil {
		return err
	}
	return m.fm.Set("type", m.typ)
}

// apply applies the call's value of key to m.fm by that key's rule.
func (w *pageWrite) apply(t *target, m *merged, key string) error {
	c := w.c
	parts := c.parts[key]
	if p, ok := onlyPart(parts); ok && key != "aliases" && key != "alias" && m.fm.Has(key) && m.fm.Same(key, p.value) {
		return nil // the page's own value, as get_page returned it: left as written, unchecked
	}
	switch key {
	case "updated":
		return nil // synapse sets it; a value passed back from get_page is ignored
	case "title":
		if t.rec == nil {
			return nil // newPageKeys
		}
		return w.applyTitle(t, m)
	case "type":
		if t.rec == nil {
			return nil
		}
		return w.applyType(t, m)
	case "tags":
		return w.applyTags(m, parts)
	case "aliases", "alias":
		return w.applyAliases(m, key)
	case "sources":
		return w.applySources(m, parts)
	case "created":
		return w.applyCreated(t, m, parts)
	}
	// any other key: the last place that gives it wins (the map over the
	// block); null removes it
	p := parts[len(parts)-1]
	switch {
	case m.fm.Has(key) && m.fm.Same(key, p.value):
		return nil
	case p.value == nil:
		m.fm.Delete(key)
		return nil
	}
	where := fromMap
	if p.from == fromBlock {
		where = fromBlock
	}
	if err := checkKey(where, key); err != nil {
		return err
	}
	if err := m.fm.Set(key, p.value); err != nil {
		return errs.E(errs.Invalid, "%s: %v", p.from, err)
	}
	return nil
}

// stringOf returns the one string the call gives key (ok false when not
// given); two different values are invalid.
func (w *pageWrite) stringOf(key string) (string, bool, error) {
	var out, from string
	for _, p := range w.c.parts[key] {
		v := p.value
		if n, ok := v.(*yaml.Node); ok {
			v = markdown.PlainValue(n)
		}
		if v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return "", false, errs.E(errs.Invalid, "%s must be a string", nameOf(p, key))
		}
		s = strings.TrimSpace(s)
		if from != "" && s != out {
			return "", false, errs.E(errs.Invalid, "%s is given twice, as %q (%s) and %q (%s); give it once", key, out, from, s, nameOf(p, key))
		}
		out, from = s, nameOf(p, key)
	}
	return out, from != "", nil
}

func nameOf(p part, key string) string {
	if p.from == fromBlock {
		return key + " in " + fromBlock
	}
	return p.from
}

// typeOf returns the type the call gives, as given (trimmed): a type is
// a lower-case word, and an upper-case one is refused where it changes the
// page (never lowered in silence). Two places giving the same type (the
// file's "Topic" in a block and --type topic) are one.
func (w *pageWrite) typeOf() (string, bool, error) {
	var out, from string
	for _, p := range w.c.parts["type"] {
		v := p.value
		if n, ok := v.(*yaml.Node); ok {
			v = markdown.PlainValue(n)
		}
		if v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return "", false, errs.E(errs.Invalid, "%s must be a string", nameOf(p, "type"))
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if from != "" && s != out {
			if n := vault.NormalizeType(s); n == "" || n != vault.NormalizeType(out) {
				return "", false, errs.E(errs.Invalid, "type is given twice, as %q and %q; give it once", out, s)
			}
			if vault.ValidType(s) {
				out = s // the well-formed spelling of the same type
			}
			continue
		}
		out, from = s, p.from
	}
	return out, from != "", nil
}

func (w *pageWrite) applyTitle(t *target, m *merged) error {
	r, ok, err := w.stringOf("title")
	if err != nil || !ok {
		return err
	}
	r = norm.NFC.String(r)
	cur := m.fm.String("title")
	if r == cur || cur == "" && r == t.rec.Title {
		return nil
	}
	if r == "" {
		return errs.E(errs.Invalid, "frontmatter.title is empty; a page's title is its frontmatter title or its file name")
	}
	if err := checkTitle("frontmatter.title", r); err != nil {
		return err
	}
	if err := checkNotReserved("frontmatter.title", r); err != nil {
		return err
	}
	return m.fm.Set("title", styled(m.fm, "title", r))
}

func (w *pageWrite) applyType(t *target, m *merged) error {
	typ, ok, err := w.typeOf()
	if err != nil || !ok {
		return err
	}
	cur := m.fm.String("type")
	if cur == typ || vault.NormalizeType(cur) == typ || cur == "" && typ == t.rec.Type {
		return nil // the page's type already (as written, or from its folder)
	}
	if !vault.ValidType(typ) {
		return errs.E(errs.Invalid, "%s", vault.TypeProblem(typ))
	}
	return m.fm.Set("type", styled(m.fm, "type", typ))
}

// styled is a scalar node for value in the style of key's current value
// (a quoted title stays quoted).
func styled(fm *markdown.Frontmatter, key, value string) any {
	n := fm.Node(key)
	if n == nil || n.Kind != yaml.ScalarNode || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
		return value
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: n.Style, Value: value}
}

// onlyPart returns the single frontmatter part of key when the call gives
// key exactly once and not by a field (then the value can be compared
// with the file's as is).
func onlyPart(parts []part) (part, bool) {
	if len(parts) != 1 || parts[0].field {
		return part{}, false
	}
	return parts[0], true
}

// listItems flattens list parts into strings. splitSpaces reads a string
// value as space-separated words (tags, as Obsidian reads them).
func listItems(key string, parts []part, splitSpaces bool) ([]string, error) {
	var out []string
	for _, p := range parts {
		v := p.value
		if n, ok := v.(*yaml.Node); ok {
			v = markdown.PlainValue(n)
		}
		switch x := v.(type) {
		case nil:
		case []string:
			out = append(out, x...)
		case string:
			if splitSpaces {
				out = append(out, strings.Fields(x)...)
			} else {
				for _, s := range strings.Split(x, ",") {
					if s = strings.TrimSpace(s); s != "" {
						out = append(out, s)
					}
				}
			}
		case []any:
			for _, it := range x {
				s, ok := scalarText(it)
				if !ok {
					return nil, errs.E(errs.Invalid, "%s must be a list of strings; found %v", nameOf(p, key), it)
				}
				out = append(out, s)
			}
		default:
			s, ok := scalarText(x)
			if !ok {
				return nil, errs.E(errs.Invalid, "%s must be a list of strings", nameOf(p, key))
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// scalarText renders a scalar list item (a number or bool as YAML reads
// `tags: [2024]`) as text.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool, int, int64, float64:
		return fmt.Sprint(x), true
	case json.Number: // a JSON number, as sent
		return x.String(), true
	}
	return "", false
}

func (w *pageWrite) applyTags(m *merged, parts []part) error {
	if p, ok := onlyPart(parts); ok && m.fm.Has("tags") && m.fm.Same("tags", p.value) {
		return nil
	}
	// like sources: a field (--tag, the REST body's tags) adds to the
	// page's tags; frontmatter gives the whole list
	var raw []string
	if !anyFrontmatterPart(parts) {
		raw = currentTags(m.fm)
	}
	for _, p := range parts {
		if s, ok := plain(p.value).(string); ok && !p.field {
			// "tags: a b" or "tags: a, b", as Obsidian reads them
			for _, x := range strings.Split(s, ",") {
				raw = append(raw, strings.Fields(x)...)
			}
			continue
		}
		items, err := listItems("tags", []part{p}, false)
		if err != nil {
			return err
		}
		raw = append(raw, items...)
	}
	want := markdown.NormalizeTags(raw)
	cur := currentTags(m.fm)
	if equalStrings(want, cur) {
		return nil
	}
	have := toSet(cur)
	for _, t := range want {
		if !have[t] {
			if err := checkTag(t); err != nil {
				return err
			}
		}
	}
	if len(want) > MaxTags {
		return errs.E(errs.Invalid, "%d tags; the limit is %d", len(want), MaxTags)
	}
	setList(m.fm, "tags", want)
	return nil
}

func plain(v any) any {
	if n, ok := v.(*yaml.Node); ok {
		return markdown.PlainValue(n)
	}
	return v
}

func (w *pageWrite) applyAliases(m *merged, key string) error {
	c := w.c
	parts := append(append([]part(nil), c.parts["aliases"]...), c.parts["alias"]...)
	if key == "alias" && c.given("aliases") {
		return nil // handled with aliases
	}
	if p, ok := onlyPart(parts); ok && m.fm.Has(key) && m.fm.Same(key, p.value) {
		return nil
	}
	items, err := listItems("aliases", parts, false)
	if err != nil {
		return err
	}
	cur := currentAliases(m.fm)
	if !anyFrontmatterPart(parts) {
		items = append(append([]string(nil), cur...), items...) // a field adds, as for tags and sources
	}
	want := dedupeStrings(items, normalizeAlias)
	if equalStrings(want, cur) {
		return nil
	}
	have := toSet(cur)
	for _, a := range want {
		if !have[a] {
			if err := checkAlias(a); err != nil {
				return err
			}
		}
	}
	if len(want) > MaxAliases {
		return errs.E(errs.Invalid, "%d aliases; the limit is %d", len(want), MaxAliases)
	}
	setAliases(m.fm, want)
	return nil
}

// sourceIdentity is how two sources entries are the same citation: a
// file by its folded path, anything else byte for byte.
func sourceIdentity(e string) string {
	s := markdown.ClassifySource(e)
	if s.Kind == markdown.SourceFile {
		return "f\x00" + store.Fold(s.Path)
	}
	return "x\x00" + s.Raw
}

// anyFrontmatterPart reports whether a part gives the key through
// frontmatter (not a field).
func anyFrontmatterPart(parts []part) bool {
	for _, p := range parts {
		if !p.field {
			return true
		}
	}
	return false
}

func (w *pageWrite) applySources(m *merged, parts []part) error {
	if p, ok := onlyPart(parts); ok && m.fm.Has("sources") && m.fm.Same("sources", p.value) {
		return nil
	}
	// a field (--source, the REST body's sources) adds to the page's
	// entries; frontmatter (the content's block, the frontmatter map)
	// gives the whole list, which is how an entry is removed
	var given []string
	if !anyFrontmatterPart(parts) {
		given = m.fm.SourceEntries("sources")
	}
	for _, p := range parts {
		if ss, ok := p.value.([]string); ok {
			given = append(given, ss...)
			continue
		}
		tmp := &markdown.Frontmatter{}
		if err := tmp.Set("s", p.value); err != nil {
			return errs.E(errs.Invalid, "%s: %v", nameOf(p, "sources"), err)
		}
		given = append(given, tmp.SourceEntries("s")...)
	}
	cur := m.fm.SourceEntries("sources")
	curByID := map[string]string{}
	var curIDs []string
	for _, e := range cur {
		id := sourceIdentity(e)
		if _, dup := curByID[id]; !dup {
			curByID[id] = e
			curIDs = append(curIDs, id)
		}
	}
	var want, wantIDs []string
	seen := map[string]bool{}
	for _, e := range given {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		id := sourceIdentity(e)
		if seen[id] {
			continue
		}
		seen[id] = true
		wantIDs = append(wantIDs, id)
		if old, ok := curByID[id]; ok {
			want = append(want, old) // an entry the page has is kept as it is
			continue
		}
		entry, err := checkSource(w.e.Vault, e)
		if err != nil {
			return err
		}
		if markdown.ClassifySource(entry).Kind == markdown.SourceFile {
			w.cited = append(w.cited, entry)
		}
		want = append(want, entry)
	}
	if equalStrings(wantIDs, curIDs) {
		return nil
	}
	if len(want) > MaxSources {
		return errs.E(errs.Invalid, "%d sources; the limit is %d", len(want), MaxSources)
	}
	setList(m.fm, "sources", want)
	return nil
}

func (w *pageWrite) applyCreated(t *target, m *merged, parts []part) error {
	p := parts[len(parts)-1]
	if m.fm.Has("created") && m.fm.Same("created", p.value) {
		return nil
	}
	v := plain(p.value)
	if v == nil {
		if !m.fm.Has("created") {
			return nil
		}
		return errs.E(errs.Invalid, "created is kept: it says when the page was created, and cannot be removed")
	}
	s, ok := v.(string)
	if !ok || !isDate(s) {
		return errs.E(errs.Invalid, "created %v is not a date (YYYY-MM-DD or RFC 3339)", quoteAny(v))
	}
	if t.rec == nil {
		return nil // newPageDates
	}
	return m.fm.Set("created", dateLike(m.fm.Node("created"), strings.TrimSpace(s)))
}

func quoteAny(v any) string {
	if s, ok := v.(string); ok {
		return quote(s)
	}
	return fmt.Sprint(v)
}

// newPageDates stamps a page synapse creates: `created` (the caller's,
// else today) and `updated` today, as plain YAML dates.
func (w *pageWrite) newPageDates(m *merged) error {
	today := w.now.Format("2006-01-02")
	created := today
	if s, ok, err := w.stringOf("created"); err != nil {
		return err
	} else if ok && s != "" {
		created = s
	}
	if err := m.fm.Set("created", dateLike(nil, created)); err != nil {
		return err
	}
	return m.fm.Set("updated", dateLike(nil, today))
}

// bumpUpdated sets an existing page's `updated` to now, in the format the
// page already uses: its `updated` value's layout and quoting, else its
// `last_updated` (the key the wiki uses instead), else a new `updated`
// date. A page without frontmatter does not gain a block for it.
func (w *pageWrite) bumpUpdated(t *target, m *merged) error {
	key := "updated"
	switch {
	case m.fm.Has("updated"):
	case m.fm.Has("last_updated"):
		key = "last_updated"
	case !t.doc.HasFM && m.fm.Len() == 0:
		return nil
	}
	old := m.fm.Node(key)
	cur := ""
	if old != nil && old.Kind == yaml.ScalarNode {
		cur = old.Value
	}
	v := formatLike(cur, w.now)
	if v == strings.TrimSpace(cur) {
		return nil
	}
	return m.fm.Set(key, dateLike(old, v))
}

// dateLike is a date node for v in the style of old: quoted stays quoted
// (with the same quotes), plain stays plain. A new date is a plain YAML
// date (`updated: 2026-05-01`, as Obsidian writes dates).
func dateLike(old *yaml.Node, v string) *yaml.Node {
	if old != nil && old.Kind == yaml.ScalarNode && old.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: old.Style & (yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle), Value: v}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Value: v}
}

func setList(fm *markdown.Frontmatter, key string, want []string) {
	if len(want) == 0 {
		fm.Delete(key)
		return
	}
	_ = fm.Set(key, want)
}

// currentAliases are the page's aliases: the aliases list and a singular
// alias key, deduplicated.
func currentAliases(fm *markdown.Frontmatter) []string {
	return dedupeStrings(append(fm.List("aliases", true), fm.List("alias", true)...), normalizeAlias)
}

// setAliases makes want the page's aliases, under the aliases key (a
// singular alias key is folded into it).
func setAliases(fm *markdown.Frontmatter, want []string) {
	fm.Delete("alias")
	setList(fm, "aliases", want)
}

func currentTags(fm *markdown.Frontmatter) []string {
	var tags []string
	for _, t := range fm.List("tags", true) {
		tags = append(tags, strings.Fields(t)...)
	}
	return markdown.NormalizeTags(tags)
}

func dedupeStrings(in []string, f func(string) string) []string {
	out := make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, s := range in {
		s = f(s)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

func toSet(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// isCRLF reports whether a file uses CRLF line endings (its first line
// ends in one).
func isCRLF(data []byte) bool {
	s := string(data[:min(len(data), 64<<10)])
	i := strings.IndexByte(s, '\n')
	return i > 0 && s[i-1] == '\r'
}

// sameText compares two frontmatter texts, ignoring line endings and
// trailing blanks (a block copied through an editor).
func sameText(a, b string) bool {
	n := func(s string) string {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimRight(l, " \t")
		}
		return strings.TrimRight(strings.Join(lines, "\n"), "\n")
	}
	return n(a) == n(b)
}

// blockLine says where a broken block is wrong, counting the opening
// fence as line 1 (as an editor shows the piped page).
func blockLine(msg string) string {
	var n int
	if _, err := fmt.Sscanf(msg, "line %d:", &n); err == nil && n > 0 {
		return fmt.Sprintf("line %d%s", n+1, strings.TrimPrefix(msg, fmt.Sprintf("line %d", n)))
	}
	return msg
}
