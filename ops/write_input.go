package ops

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/markdown"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"
)

// Stage 1 of write_page: decode the call. Everything here is checked
// without the page (before the write lock): the title, the content's
// bytes, the frontmatter block at its top, the caps on what a call may
// carry, if_match. Keys and values are checked by the merge (stage 3),
// and only where they change the page, so that writing back what
// get_page returned never fails on a key or value the page already has.

// writeCall is a decoded write_page input.
type writeCall struct {
	title string // NFC, trimmed; the page to write (title, path or id)
	body  string // content after its frontmatter block (and BOM), as given
	bom   bool   // content started with a BOM (the file's own BOM is kept regardless)
	whole string // content without its BOM, block included

	// the frontmatter block at the top of content
	hasBlock  bool
	blockText string                // its text between the fences
	blockFM   *markdown.Frontmatter // parsed (nil when it is not valid YAML)
	blockErr  string                // why it is not valid YAML ("line N: …")

	// the keys the call gives, in order: the block's in its order, then
	// the frontmatter map's sorted, then the fields (type, tags, sources,
	// aliases) as parts of the keys they set
	keys    []string
	parts   map[string][]part
	ifMatch string // lowercase hex, "" = none

	path    string                // the path the caller chose (checkPagePath), "" = none
	section *markdown.SectionSpec // the section the content replaces; nil = the whole body
	// keepBody: the call gives no body (no content, or a frontmatter
	// block alone) but frontmatter keys: an existing page keeps its body
	keepBody bool
	// appendText: the body is added to the end of the section (or of
	// the body), not put in its place
	appendText bool
	logNote    string  // the writer's line for log.md ("" = none)
	dryRun     bool    // check the write, make none of it
	kind       LogKind // the log entry's kind ("" = created or updated)
}

// part is one place that gives a key a value.
type part struct {
	value any    // a *yaml.Node (block), a JSON value (map) or a []string / string (fields)
	from  string // where: "the content's frontmatter block", "frontmatter", errs.Param("type")…
	field bool   // given by a field (CLI flag, REST body field), not frontmatter
}

// the places a value can come from, for messages
const (
	fromBlock = "the content's frontmatter block"
	fromMap   = "frontmatter"
)

// give records that from gives key the value v.
func (c *writeCall) give(key string, v any, from string, field bool) {
	if c.parts == nil {
		c.parts = map[string][]part{}
	}
	if _, ok := c.parts[key]; !ok {
		c.keys = append(c.keys, key)
	}
	c.parts[key] = append(c.parts[key], part{value: v, from: from, field: field})
}

// dropBlock reads the content's frontmatter block as body text after all
// (see merge): its keys are no longer given.
func (c *writeCall) dropBlock() {
	c.hasBlock, c.blockText, c.blockFM, c.blockErr, c.body = false, "", nil, "", c.whole
	keys := c.keys[:0]
	for _, k := range c.keys {
		var ps []part
		for _, p := range c.parts[k] {
			if p.from != fromBlock {
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 {
			delete(c.parts, k)
			continue
		}
		c.parts[k] = ps
		keys = append(keys, k)
	}
	c.keys = keys
}

// given reports whether the call gives key.
func (c *writeCall) given(key string) bool { return len(c.parts[key]) > 0 }

// decodeWrite checks a write_page input and turns it into a writeCall.
func decodeWrite(in *WritePageIn) (*writeCall, error) {
	c := &writeCall{}
	c.title = norm.NFC.String(strings.TrimSpace(in.Title))
	if c.title == "" {
		return nil, errs.E(errs.Invalid, "title is required")
	}
	if err := checkTitle("title", c.title); err != nil {
		return nil, err
	}
	if err := c.decodeContent(in.Content); err != nil {
		return nil, err
	}
	if len(in.Frontmatter) > MaxFrontmatterKeys {
		return nil, errs.E(errs.Invalid, "frontmatter has %d keys; the limit is %d", len(in.Frontmatter), MaxFrontmatterKeys)
	}
	keys := make([]string, 0, len(in.Frontmatter))
	for k := range in.Frontmatter {
		keys = append(keys, k) // names are checked by the merge, when the key changes
	}
	sort.Strings(keys)
	for _, k := range keys {
		c.give(k, in.Frontmatter[k], fromMap+"."+k, false)
	}
	if t := strings.TrimSpace(in.Type); t != "" {
		c.give("type", t, errs.Param("type"), true)
	}
	if in.Aliases != nil {
		c.give("aliases", in.Aliases, errs.Param("aliases"), true)
	}
	if in.Tags != nil {
		c.give("tags", in.Tags, errs.Param("tags"), true)
	}
	if in.Sources != nil {
		c.give("sources", in.Sources, errs.Param("sources"), true)
	}
	if err := c.checkCounts(); err != nil {
		return nil, err
	}
	var err error
	if c.logNote, err = checkLogNote(in.Log); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Section) != "" {
		if err := c.decodeSection(in.Section); err != nil {
			return nil, err
		}
	}
	if in.Append {
		if err := c.decodeAppend(); err != nil {
			return nil, err
		}
	}
	if err := c.decodeNoBody(); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Path) != "" {
		if c.path, err = checkPagePath(errs.Param("path"), in.Path); err != nil {
			return nil, err
		}
	}
	c.kind, c.dryRun = in.Kind, in.DryRun
	if c.ifMatch, err = parseIfMatch(in.IfMatch); err != nil {
		return nil, err
	}
	return c, nil
}

// parseIfMatch checks an if_match value: "" (none) or a sha256, returned
// in lowercase.
func parseIfMatch(s string) (string, error) {
	m := strings.ToLower(strings.TrimSpace(s))
	if m != "" && (len(m) != 64 || !isHex(m)) {
		return "", errs.E(errs.Invalid, "%s must be the sha256 of the page's file (64 hex characters, as %s gives it), not %q", errs.Param("if_match"), errs.Cmd("page.get"), s)
	}
	return m, nil
}

// decodeContent checks the content's bytes and splits off a frontmatter
// block. A block that is not valid YAML is kept as text: it is accepted
// only when it is the page's own (broken) frontmatter, unchanged.
func (c *writeCall) decodeContent(content string) error {
	if len(content) > MaxInputBytes {
		return errs.E(errs.TooLarge, "content is %d bytes; the limit of a page as written is 1 MiB (%d bytes); split the page", len(content), MaxContentBytes)
	}
	if !utf8.ValidString(content) {
		return errs.E(errs.Invalid, "content is not valid UTF-8 (bad byte at offset %d)", BadUTF8Offset([]byte(content)))
	}
	if i := strings.IndexByte(content, 0); i >= 0 {
		return errs.E(errs.Invalid, "content contains a NUL byte at offset %d; pages are text", i)
	}
	d := markdown.SplitDocument(content)
	c.body, c.bom = d.Body, d.BOM != ""
	c.whole = content[len(d.BOM):]
	if !d.HasFM {
		return nil
	}
	c.hasBlock, c.blockText = true, d.FM
	fm := markdown.KeepFrontmatter(d.FM)
	if err := fm.Err(); err != nil {
		c.blockErr = strings.TrimPrefix(err.Error(), "frontmatter: ")
		return nil
	}
	if fm.Len() > MaxFrontmatterKeys {
		return errs.E(errs.Invalid, "the content's frontmatter block has %d keys; the limit is %d", fm.Len(), MaxFrontmatterKeys)
	}
	c.blockFM = fm
	for _, k := range fm.Keys() {
		c.give(k, fm.Node(k), fromBlock, false)
	}
	return nil
}

// decodeNoBody decides what a call without a body means: with frontmatter
// keys (the map, the fields, or a frontmatter block alone), a change of
// those keys only, the body kept (docs/operations.md#frontmatter-only);
// without any, nothing to write. A section write needs its text.
func (c *writeCall) decodeNoBody() error {
	if strings.TrimSpace(c.body) != "" {
		return nil
	}
	switch {
	case c.section != nil:
		return errs.E(errs.Invalid, "content is empty: with %s it is the section's new text", errs.Param("section"))
	case len(c.keys) == 0 && !c.hasBlock:
		return errs.E(errs.Invalid, "content is empty: give the page's body, or only frontmatter keys to change them and keep the body")
	}
	c.keepBody = true
	return nil
}

// decodeAppend checks an append: content is the text to add, not
// empty and without a frontmatter block (keys come with the other
// parameters; an append is never a frontmatter-only write).
func (c *writeCall) decodeAppend() error {
	if c.hasBlock {
		return errs.E(errs.Invalid, "with %s, content is the text to add and cannot start with a frontmatter block; give frontmatter keys with the other parameters", errs.Param("append"))
	}
	if strings.TrimSpace(c.body) == "" {
		return errs.E(errs.Invalid, "content is empty: with %s it is the text to add; to change only frontmatter keys, leave %s out", errs.Param("append"), errs.Param("append"))
	}
	c.appendText, c.bom = true, false
	return nil
}

// decodeSection checks a section name: one line, a heading's text
// (optionally with its level), and content that is the section's text (no
// frontmatter block: keys are given with the other parameters).
func (c *writeCall) decodeSection(name string) error {
	spec := markdown.ParseSectionSpec(name)
	if err := checkTitle(errs.Param("section"), spec.Raw); err != nil {
		return err
	}
	if spec.Path[0] == "" {
		return errs.E(errs.Invalid, "%s names no heading (%q)", errs.Param("section"), name)
	}
	if c.hasBlock {
		return errs.E(errs.Invalid, "with %s, content is the section's text and cannot start with a frontmatter block; give frontmatter keys with the other parameters", errs.Param("section"))
	}
	c.section = &spec
	return nil
}

// checkKey checks a frontmatter key's name.
func checkKey(where, k string) error {
	if strings.TrimSpace(k) == "" {
		return errs.E(errs.Invalid, "%s has an empty key", where)
	}
	if !utf8.ValidString(k) || hasControl(k) {
		return errs.E(errs.Invalid, "%s key %q contains a control character", where, k)
	}
	if len(k) > 1024 {
		return errs.E(errs.Invalid, "%s has a key of %d bytes; the limit is 1024", where, len(k))
	}
	return nil
}

// checkCounts bounds the list keys before any work: a call carrying many
// times more items than a page may hold is refused at once (the exact
// caps apply in the merge, to the lists a write changes, so a page that
// already holds more is still written back unchanged).
func (c *writeCall) checkCounts() error {
	for key, limit := range map[string]int{"tags": MaxTags, "aliases": MaxAliases, "alias": MaxAliases, "sources": MaxSources} {
		n := 0
		for _, p := range c.parts[key] {
			n += countItems(p.value)
		}
		if n > 10*limit {
			return errs.E(errs.Invalid, "%d %s given; the limit is %d", n, key, limit)
		}
	}
	return nil
}

// countItems counts the items of a list value (1 for a scalar).
func countItems(v any) int {
	switch t := v.(type) {
	case nil:
		return 0
	case []string:
		return len(t)
	case []any:
		return len(t)
	case *yaml.Node:
		if t.Kind == yaml.SequenceNode {
			return len(t.Content)
		}
	}
	return 1
}
