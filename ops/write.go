package ops

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"
)

// WritePageIn is the input of write_page, the one validated write path
// (SPEC §4.2). MCP callers give type, tags, sources and aliases inside
// frontmatter; the CLI gives them as flags.
//
// How the inputs of one call combine: content may start with its own
// frontmatter block (a whole markdown file piped to `synapse page write`);
// its keys, the frontmatter map and the fields Type, Tags, Sources and
// Aliases are merged. The list keys (tags, sources, aliases) are the union
// of every place that gives them; type must not be given two different
// ways (invalid). Together they replace what the file had for those keys;
// keys the call does not mention are kept as they are, in order. A map
// value of null removes the key. `created` is kept when the page has one;
// `updated` is always set by synapse.
type WritePageIn struct {
	Title       string         `json:"title" arg:"0" required:"true" desc:"Page title (≤ 200 characters); an existing page with this title is updated in place"`
	Content     string         `json:"content" cli:"stdin" raw:"true" required:"true" desc:"Markdown body (≤ 1 MiB, UTF-8); a frontmatter block at its top is merged into the page's frontmatter"`
	Frontmatter map[string]any `json:"frontmatter,omitempty" cli:"-" desc:"Frontmatter keys: type, aliases, tags, sources and any others (a null value removes a key); keys not given are kept"`
	Type        string         `json:"type,omitempty" mcp:"-" desc:"Page type (entity, concept, source, synthesis, comparison, query, note; default concept)"`
	Tags        []string       `json:"tags,omitempty" flag:"tag" mcp:"-" desc:"Tag (trimmed, lowercased, one word)"`
	Sources     []string       `json:"sources,omitempty" flag:"source" mcp:"-" desc:"A file under raw/sources/ this page draws on (x.md or raw/sources/x.md)"`
	Aliases     []string       `json:"aliases,omitempty" flag:"alias" mcp:"-" desc:"Another name of the page"`
	IfMatch     string         `json:"if_match,omitempty" desc:"sha256 of the current file (from get_page); the write is refused as a conflict if the page changed"`
}

// WritePageOut is the result of write_page: what a caller needs to verify
// the write.
type WritePageOut struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Type     string   `json:"type"`
	Path     string   `json:"path"`
	SHA256   string   `json:"sha256"`
	Created  bool     `json:"created"`  // true when the page is new
	Dangling []string `json:"dangling"` // link targets in the content that match no page
	// Unchanged is true when the file already held exactly these bytes, so
	// nothing was written or logged (a retried write).
	Unchanged bool `json:"unchanged,omitempty"`
}

// Limits of write_page (SPEC §4.2).
const (
	MaxTitleChars   = 200
	MaxContentBytes = 1 << 20
)

var opWritePage = register(Op{
	Name: "page.write", Summary: "Write a page: validated, atomic, re-indexed, logged and catalogued",
	CLI: "page write", MCP: "write_page",
	REST:   []Route{{Method: "PUT", Path: "/pages/{title}", Body: "*"}},
	Access: Write, Limits: "title ≤ 200 characters; content ≤ 1 MiB",
	Idempotent: true, // the same call again finds the same bytes: unchanged, nothing written
}, WritePage)

// writeMu serializes writes within a process (serve answers requests
// concurrently); the store's file lock keeps other processes out.
var writeMu sync.Mutex

// WritePage validates and writes a page atomically, re-indexes it, logs it,
// files missing-page reviews for its dangling links and regenerates
// wiki/index.md. Every writer (CLI, MCP, REST, a review's create action)
// calls it.
//
// Errors: invalid (a field breaks a rule of SPEC §4.2; the message names
// it), too_large (content over 1 MiB), conflict (stale if_match, an
// ambiguous title, or an existing file whose frontmatter is not valid YAML,
// which a rewrite would lose), internal (I/O). Nothing is changed by a
// refused write. A failure after the page file was written says so and
// names the file.
func WritePage(ctx context.Context, e *Env, in *WritePageIn) (*WritePageOut, error) {
	if in == nil {
		return nil, errs.E(errs.Invalid, "write_page needs a title and content")
	}
	c, err := parseWriteCall(in)
	if err != nil {
		return nil, err
	}
	if err := c.checkSources(e.Vault); err != nil {
		return nil, err
	}
	writeMu.Lock()
	defer writeMu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &pageWrite{e: e, c: c, now: e.now()}
	return w.run(ctx)
}

// ---- the call: validation of everything the caller gave ----

// writeCall is a validated write_page input.
type writeCall struct {
	title   string
	body    string     // content without its frontmatter block, ending in "\n"
	block   []keyNode  // keys of a frontmatter block at the top of content, in order
	extras  []keyValue // other keys of the frontmatter map, sorted; nil value = delete
	rename  string     // a title given in frontmatter ("" = none)
	typ     string     // "" = not given
	lists   listValues // tags, aliases, sources when given
	given   map[string]bool
	created string // a created date given by the caller
	ifMatch string // lowercase hex, "" = none
}

type keyNode struct {
	key  string
	node *yaml.Node
}

type keyValue struct {
	key   string
	value any
}

type listValues struct{ tags, aliases, sources []string }

// known frontmatter keys handled by the write path itself
var knownKeys = map[string]bool{
	"title": true, "type": true, "tags": true, "aliases": true, "alias": true,
	"sources": true, "created": true, "updated": true,
}

func parseWriteCall(in *WritePageIn) (*writeCall, error) {
	c := &writeCall{given: map[string]bool{}}
	c.title = norm.NFC.String(strings.TrimSpace(in.Title))
	if c.title == "" {
		return nil, errs.E(errs.Invalid, "title is required")
	}
	if err := checkTitle("title", c.title); err != nil {
		return nil, err
	}
	if err := c.parseContent(in.Content); err != nil {
		return nil, err
	}
	var types []string // every type given, in order
	var tags, aliases, sources []string
	// 1. the content's own frontmatter block
	if len(c.block) > 0 {
		fm := frontmatterOf(c.block)
		if fm.Has("title") {
			c.rename = norm.NFC.String(fm.String("title"))
		}
		if t := fm.String("type"); t != "" {
			types = append(types, t)
		}
		if fm.Has("tags") {
			c.given["tags"] = true
			for _, t := range fm.List("tags", true) {
				tags = append(tags, strings.Fields(t)...)
			}
		}
		for _, k := range []string{"aliases", "alias"} {
			if fm.Has(k) {
				c.given["aliases"] = true
				aliases = append(aliases, fm.List(k, true)...)
			}
		}
		if fm.Has("sources") {
			c.given["sources"] = true
			sources = append(sources, fm.List("sources", true)...)
		}
		c.created = fm.String("created")
	}
	// 2. the frontmatter map
	keys := make([]string, 0, len(in.Frontmatter))
	for k := range in.Frontmatter {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := in.Frontmatter[k]
		if strings.TrimSpace(k) == "" {
			return nil, errs.E(errs.Invalid, "frontmatter has an empty key")
		}
		if !utf8.ValidString(k) || hasControl(k) {
			return nil, errs.E(errs.Invalid, "frontmatter key %q contains a control character", k)
		}
		switch k {
		case "title":
			s, ok := v.(string)
			if !ok {
				return nil, errs.E(errs.Invalid, "frontmatter.title must be a string")
			}
			if c.rename != "" && norm.NFC.String(strings.TrimSpace(s)) != c.rename {
				return nil, errs.E(errs.Invalid, "frontmatter.title %q differs from the title in the content's frontmatter block %q", s, c.rename)
			}
			c.rename = norm.NFC.String(strings.TrimSpace(s))
		case "type":
			if v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return nil, errs.E(errs.Invalid, "frontmatter.type must be a string")
			}
			if s = strings.TrimSpace(s); s != "" {
				types = append(types, s)
			}
		case "tags", "aliases", "alias", "sources":
			items, err := stringList("frontmatter."+k, v)
			if err != nil {
				return nil, err
			}
			switch k {
			case "tags":
				c.given["tags"] = true
				for _, t := range items {
					if _, isStr := v.(string); isStr {
						tags = append(tags, strings.Fields(t)...) // "a b" as Obsidian reads it
					} else {
						tags = append(tags, t)
					}
				}
			case "sources":
				c.given["sources"] = true
				sources = append(sources, items...)
			default:
				c.given["aliases"] = true
				aliases = append(aliases, items...)
			}
		case "created":
			if v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return nil, errs.E(errs.Invalid, "frontmatter.created must be a date string (YYYY-MM-DD)")
			}
			c.created = strings.TrimSpace(s)
		case "updated":
			// set by synapse; a value passed back from get_page is ignored
		default:
			c.extras = append(c.extras, keyValue{k, v})
		}
	}
	// 3. the fields (CLI flags, REST body)
	if t := strings.TrimSpace(in.Type); t != "" {
		types = append(types, t)
	}
	if in.Tags != nil {
		c.given["tags"] = true
		tags = append(tags, in.Tags...)
	}
	if in.Aliases != nil {
		c.given["aliases"] = true
		aliases = append(aliases, in.Aliases...)
	}
	if in.Sources != nil {
		c.given["sources"] = true
		sources = append(sources, in.Sources...)
	}

	if c.rename != "" {
		if err := checkTitle("frontmatter.title", c.rename); err != nil {
			return nil, err
		}
	}
	for _, t := range types {
		t = strings.ToLower(t)
		if c.typ != "" && t != c.typ {
			return nil, errs.E(errs.Invalid, "type is given twice, as %q and %q; give it once", c.typ, t)
		}
		c.typ = t
	}
	if c.typ != "" && !vault.ValidType(c.typ) {
		for _, r := range vault.ReservedTypes {
			if r == c.typ {
				return nil, errs.E(errs.Invalid, "type %q is reserved for wiki/%s.md; valid types: %s", c.typ, r, strings.Join(vault.PageTypes, ", "))
			}
		}
		return nil, errs.E(errs.Invalid, "unknown page type %q; valid types: %s", c.typ, strings.Join(vault.PageTypes, ", "))
	}
	var err error
	if c.lists.tags, err = normalizeTags(tags); err != nil {
		return nil, err
	}
	if c.lists.aliases, err = normalizeAliases(aliases); err != nil {
		return nil, err
	}
	if c.lists.sources, err = normalizeSources(sources); err != nil {
		return nil, err
	}
	if c.created != "" && !isDate(c.created) {
		return nil, errs.E(errs.Invalid, "created %q is not a date (YYYY-MM-DD or RFC 3339)", c.created)
	}
	if m := strings.ToLower(strings.TrimSpace(in.IfMatch)); m != "" {
		if len(m) != 64 || !isHex(m) {
			return nil, errs.E(errs.Invalid, "if_match must be a sha256 of 64 hex characters (get_page returns it), not %q", in.IfMatch)
		}
		c.ifMatch = m
	}
	return c, nil
}

// parseContent checks the content and splits off a frontmatter block.
func (c *writeCall) parseContent(content string) error {
	if len(content) > MaxContentBytes {
		return errs.E(errs.TooLarge, "content exceeds the limit of 1 MiB (%d bytes); split the page", MaxContentBytes)
	}
	if !utf8.ValidString(content) {
		off := 0
		for off < len(content) {
			r, n := utf8.DecodeRuneInString(content[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return errs.E(errs.Invalid, "content is not valid UTF-8 (bad byte at offset %d)", off)
	}
	if i := strings.IndexByte(content, 0); i >= 0 {
		return errs.E(errs.Invalid, "content contains a NUL byte at offset %d; pages are text", i)
	}
	content = strings.TrimPrefix(content, "\ufeff")
	if strings.TrimSpace(content) == "" {
		return errs.E(errs.Invalid, "content is empty")
	}
	body := content
	if fmText, rest, ok := markdown.SplitFrontmatter(content); ok {
		if _, err := markdown.ParseFrontmatter(fmText); err != nil {
			return errs.E(errs.Invalid, "content starts with a frontmatter block that is not valid YAML: %v", strings.TrimPrefix(err.Error(), "frontmatter: "))
		}
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(fmText), &doc); err != nil {
			return errs.E(errs.Invalid, "content starts with a frontmatter block that is not valid YAML: %v", err)
		}
		if len(doc.Content) > 0 && doc.Content[0].Kind == yaml.MappingNode {
			m := doc.Content[0]
			for i := 0; i+1 < len(m.Content); i += 2 {
				k := m.Content[i].Value
				if strings.TrimSpace(k) == "" || hasControl(k) {
					return errs.E(errs.Invalid, "content's frontmatter block has an empty or unprintable key")
				}
				c.block = append(c.block, keyNode{k, m.Content[i+1]})
			}
		}
		body = rest
		if strings.TrimSpace(body) == "" {
			return errs.E(errs.Invalid, "content is empty: it holds only a frontmatter block")
		}
	}
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	c.body = body
	return nil
}

// checkSources checks that every source exists as a file under
// raw/sources/.
func (c *writeCall) checkSources(v *vault.Vault) error {
	for _, s := range c.lists.sources {
		st, err := os.Stat(v.Abs(s))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return errs.E(errs.Invalid, "source %q does not exist (sources are files under %s/)", s, vault.SourcesDir)
			}
			return errs.E(errs.Invalid, "source %q cannot be read: %v", s, errors.Unwrap(err))
		}
		if !st.Mode().IsRegular() {
			return errs.E(errs.Invalid, "source %q is not a file", s)
		}
	}
	return nil
}

func checkTitle(field, s string) error {
	if !utf8.ValidString(s) {
		return errs.E(errs.Invalid, "%s is not valid UTF-8", field)
	}
	if n := utf8.RuneCountInString(s); n > MaxTitleChars {
		return errs.E(errs.Invalid, "%s is %d characters long; the limit is %d", field, n, MaxTitleChars)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return errs.E(errs.Invalid, "%s contains a control character (%U); titles are one line of text", field, r)
		}
	}
	return nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func isDate(s string) bool {
	if _, err := time.Parse("2006-01-02", s); err == nil {
		return true
	}
	_, err := time.Parse(time.RFC3339, s)
	return err == nil
}

// stringList reads a list value of the frontmatter map: a list of strings,
// a comma-separated string, or null (the key is removed).
func stringList(field string, v any) ([]string, error) {
	switch t := v.(type) {
	case nil:
		return []string{}, nil
	case string:
		var out []string
		for _, p := range strings.Split(t, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	case []string:
		return t, nil
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, errs.E(errs.Invalid, "%s must be a list of strings; found %v", field, x)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, errs.E(errs.Invalid, "%s must be a list of strings", field)
}

func normalizeTags(in []string) ([]string, error) {
	for _, t := range in {
		t = strings.TrimSpace(t)
		if strings.ContainsAny(t, " \t,") {
			return nil, errs.E(errs.Invalid, "tag %q contains a space or comma; tags are single words such as %q", t, strings.Join(strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return r == ' ' || r == '\t' || r == ',' }), "-"))
		}
		if hasControl(t) {
			return nil, errs.E(errs.Invalid, "tag %q contains a control character", t)
		}
	}
	return markdown.NormalizeTags(in), nil
}

func normalizeAliases(in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, a := range in {
		a = norm.NFC.String(strings.TrimSpace(a))
		if a == "" || seen[a] {
			continue
		}
		if err := checkTitle("alias "+quote(a), a); err != nil {
			return nil, err
		}
		seen[a] = true
		out = append(out, a)
	}
	return out, nil
}

func normalizeSources(in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, s := range in {
		if strings.TrimSpace(s) == "" {
			continue
		}
		if strings.ContainsRune(s, 0) || hasControl(s) {
			return nil, errs.E(errs.Invalid, "source %q contains a control character", s)
		}
		k := index.SourceKey(s)
		if k == "" || k == vault.SourcesDir {
			return nil, errs.E(errs.Invalid, "source %q is not a file under %s/", s, vault.SourcesDir)
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, nil
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// frontmatterOf builds a Frontmatter from block keys.
func frontmatterOf(block []keyNode) *markdown.Frontmatter {
	fm := &markdown.Frontmatter{}
	for _, kn := range block {
		_ = fm.Set(kn.key, kn.node)
	}
	return fm
}

// ---- the write ----

type pageWrite struct {
	e   *Env
	c   *writeCall
	now time.Time
	t   time.Time // start of the current stage (stageHook)
}

// stageHook, when set (by benchmarks), receives how long each stage of a
// write took: prepare, file, log, reindex, index.md, commit, rescan.
var stageHook func(stage string, d time.Duration)

func (w *pageWrite) mark(stage string) {
	if stageHook != nil {
		now := time.Now()
		stageHook(stage, now.Sub(w.t))
		w.t = now
	}
}

// target is where a write goes.
type target struct {
	rec   *store.PageRec        // the existing page; nil for a new one
	path  string                // vault path of the existing page
	old   []byte                // its bytes
	info  os.FileInfo           // its stat when read
	fm    *markdown.Frontmatter // its frontmatter
	stale string                // a stored path whose file is gone (re-scanned away)
}

// errUnknownFile asks run to scan a file the store does not know yet (an
// unscanned page at a new page's path) and to try again.
type errUnknownFile struct{ path string }

func (e *errUnknownFile) Error() string { return e.path + " is not indexed yet" }

func (w *pageWrite) run(ctx context.Context) (*WritePageOut, error) {
	var scanned []string
	for attempt := 0; ; attempt++ {
		out, err := w.attempt(ctx)
		var uf *errUnknownFile
		if errors.As(err, &uf) && attempt < 3 && !contains(scanned, uf.path) {
			scanned = append(scanned, uf.path)
			if _, err := w.e.Index.Scan(ctx, index.ScanOptions{Paths: []string{uf.path}}); err != nil {
				return nil, err
			}
			continue
		}
		return out, err
	}
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

func (w *pageWrite) attempt(ctx context.Context) (*WritePageOut, error) {
	e, c := w.e, w.c
	w.t = time.Now()
	t, err := w.locate()
	if err != nil {
		return nil, err
	}
	fm, err := w.frontmatter(t)
	if err != nil {
		return nil, err
	}
	fmText, err := fm.YAML()
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "encode frontmatter: %v", err)
	}
	data := []byte("---\n" + fmText + "---\n" + c.body)
	sum := sha256.Sum256(data)
	out := &WritePageOut{SHA256: hex.EncodeToString(sum[:]), Created: t.rec == nil, Dangling: []string{}}

	w.mark("prepare")
	var p string // the page's vault path
	switch {
	case t.rec != nil && bytes.Equal(data, t.old):
		p = t.path
		out.Unchanged = true
	case t.rec != nil:
		p = t.path
		abs := e.Vault.Abs(p)
		// the file must still be what was read (another editor may have
		// saved it meanwhile)
		if st, err := os.Stat(abs); err != nil || st.Size() != t.info.Size() || !st.ModTime().Equal(t.info.ModTime()) {
			return nil, errs.E(errs.Conflict, "%s changed while it was being written; read it again and retry", p)
		}
		if err := writeAtomic(abs, data, t.info.Mode().Perm(), false); err != nil {
			return nil, errs.Wrap(errs.Internal, err, "write %s: %v (the file is unchanged)", p, err)
		}
	default:
		if p, err = w.create(data, t); err != nil {
			return nil, err
		}
	}
	w.mark("file")
	out.Path = p
	title := fm.String("title")
	if title == "" {
		title = store.Stem(p)
	}
	// from here on the page is on disk: a failure says so
	after := func(step string, err error) error {
		return errs.Wrap(errs.Internal, err, "page %q was written to %s (sha256 %s), but %s failed: %s; run `synapse source rescan` to bring the index up to date", title, p, out.SHA256, step, errs.Message(err))
	}
	var logged *logAppend
	if !out.Unchanged {
		if logged, err = appendLog(e.Vault, w.now, title); err != nil {
			return nil, after("appending to "+vault.LogPage, err)
		}
	}
	w.mark("log")
	// re-index the page the one way pages are always indexed: the scanner
	paths := []string{p}
	if t.stale != "" && t.stale != p {
		paths = append(paths, t.stale)
	}
	if err := w.rescan(ctx, paths); err != nil {
		return nil, after("re-indexing", err)
	}
	var rec *store.PageRec
	if err := e.Store.View(func(tx *store.Tx) error {
		var err error
		rec, err = pageAt(tx, p)
		return err
	}); err != nil {
		return nil, after("re-indexing", err)
	}
	out.ID, out.Title, out.Type = rec.ID, rec.Title, rec.Type
	out.Dangling = danglingTargets(rec)
	w.mark("reindex")
	cat, err := regenerateIndex(e)
	if err != nil {
		return nil, after("regenerating "+vault.IndexPage, err)
	}
	// one transaction: the review queue, and the store records of log.md
	// and index.md brought in step without re-parsing them
	w.mark("index.md")
	var rescan []string
	hook := reviewHooks.OnPageWritten
	if hook != nil || logged != nil || cat != nil {
		err = e.Store.Update(func(tx *store.Tx) error {
			rescan = rescan[:0]
			if hook != nil {
				if err := hook(tx, rec, out.Dangling, w.now); err != nil {
					return err
				}
			}
			if logged != nil {
				ok, err := logged.fastForward(tx)
				if err != nil {
					return err
				}
				if !ok {
					rescan = append(rescan, vault.LogPage)
				}
			}
			if cat != nil {
				ok, err := cat.fastForward(tx)
				if err != nil {
					return err
				}
				if !ok {
					rescan = append(rescan, vault.IndexPage)
				}
			}
			return nil
		})
		if err != nil {
			return nil, after("recording the write (review queue, log.md and index.md records)", err)
		}
	}
	w.mark("commit")
	if testHookReserved != nil {
		testHookReserved(rescan)
	}
	if len(rescan) > 0 {
		if err := w.rescan(ctx, rescan); err != nil {
			return nil, after("re-indexing "+strings.Join(rescan, " and "), err)
		}
		w.mark("rescan")
	}
	return out, nil
}

// testHookReserved, when set by a test, receives the reserved files whose
// store records the scanner had to re-parse (nil or empty: none).
var testHookReserved func(rescanned []string)

// rescan re-indexes paths through the scanner. A rewrite that keeps the
// size within the file system's mtime granularity is still read: the
// scanner re-hashes every record made within two seconds of its mtime.
func (w *pageWrite) rescan(ctx context.Context, paths []string) error {
	_, err := w.e.Index.Scan(ctx, index.ScanOptions{Paths: paths})
	return err
}

func pageAt(tx *store.Tx, p string) (*store.PageRec, error) {
	doc := tx.DocByPath(p)
	if doc == 0 {
		return nil, fmt.Errorf("%s is not in the index after the scan", p)
	}
	rec, err := tx.Page(doc)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, fmt.Errorf("%s is not in the index after the scan", p)
	}
	return rec, nil
}

// danglingTargets lists the unresolved link targets of a page, each once,
// in order of appearance, as written (without ".md").
func danglingTargets(rec *store.PageRec) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, l := range rec.Links {
		if l.To != 0 || seen[l.Key] {
			continue
		}
		seen[l.Key] = true
		out = append(out, strings.TrimSuffix(l.Target, ".md"))
	}
	return out
}

// locate finds the page the call writes: an existing page resolved by its
// title as a link would be (wherever its file lives), or a new one.
func (w *pageWrite) locate() (*target, error) {
	e, c := w.e, w.c
	t := &target{}
	var amb []string
	err := e.Store.View(func(tx *store.Tx) error {
		r := index.Resolve(tx, index.LinkKey(c.title), "", false)
		doc := r.Doc
		if doc == 0 {
			doc = tx.DocByID(c.title)
		}
		if doc == 0 {
			return nil
		}
		rec, err := tx.Page(doc)
		if err != nil || rec == nil {
			return err
		}
		t.rec = rec
		if r.Candidates > 1 {
			amb = candidatePaths(tx, r, c.title)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if t.rec == nil {
		return w.newTarget(t)
	}
	if t.rec.Reserved {
		return nil, errs.E(errs.Invalid, "%q names %s, which synapse maintains; write_page does not write index.md, log.md or overview.md (choose another title)", c.title, t.rec.Path)
	}
	if len(amb) > 1 {
		return nil, errs.E(errs.Conflict, "title %q matches %d pages (%s); write to one by its path or id", c.title, len(amb), strings.Join(amb, ", "))
	}
	t.path = t.rec.Path
	abs := e.Vault.Abs(t.path)
	// stat, read, stat: the bytes merged below are the file as stat saw it
	before, err := os.Stat(abs)
	var data []byte
	if err == nil {
		data, err = os.ReadFile(abs)
	}
	if err == nil {
		t.info, err = os.Stat(abs)
	}
	if errors.Is(err, fs.ErrNotExist) {
		// the index is behind the disk: the file is gone
		t.stale, t.rec = t.path, nil
		return w.newTarget(t)
	}
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "read %s: %v", t.path, err)
	}
	if t.info.Size() != int64(len(data)) || !t.info.ModTime().Equal(before.ModTime()) || t.info.Size() != before.Size() {
		return nil, errs.E(errs.Conflict, "%s is being changed by another program; retry", t.path)
	}
	t.old = data
	if c.ifMatch != "" {
		sum := sha256.Sum256(data)
		if cur := hex.EncodeToString(sum[:]); cur != c.ifMatch {
			return nil, errs.E(errs.Conflict, "%s changed since it was read: if_match %s… but the file is now %s…; get the page again and reapply your edit", t.path, c.ifMatch[:12], cur[:12])
		}
	}
	parsed := markdown.Parse(t.path, data)
	if parsed.FMError != "" {
		return nil, errs.E(errs.Conflict, "%s has frontmatter that is not valid YAML (%s); fix the file first, so that a rewrite does not lose it", t.path, parsed.FMError)
	}
	t.fm = parsed.Frontmatter
	return t, nil
}

func (w *pageWrite) newTarget(t *target) (*target, error) {
	c := w.c
	if c.ifMatch != "" {
		return nil, errs.E(errs.Conflict, "no page titled %q exists, so if_match cannot match; omit if_match to create it", c.title)
	}
	if c.rename != "" && store.Fold(c.rename) != store.Fold(c.title) {
		return nil, errs.E(errs.Invalid, "frontmatter.title %q differs from the title %q; a new page takes the title it is written under", c.rename, c.title)
	}
	if c.rename != "" {
		c.title = c.rename
	}
	return t, nil
}

// candidatePaths lists the pages an ambiguous title matches.
func candidatePaths(tx *store.Tx, r index.Resolution, title string) []string {
	kind := map[string]byte{"file": store.NameFile, "title": store.NameTitle, "alias": store.NameAlias}[r.By]
	if kind == 0 {
		return nil
	}
	var out []string
	for _, c := range tx.LookupName(kind, index.LinkKey(title)) {
		if !vault.IsReserved(c.Path) {
			out = append(out, c.Path)
		}
	}
	sort.Strings(out)
	return out
}

// create writes a new page at wiki/<type folder>/<slug>.md, numbering the
// slug (-2, -3…) past paths taken by other pages; an existing file is
// never replaced.
func (w *pageWrite) create(data []byte, t *target) (string, error) {
	e := w.e
	dir := vault.WikiDir
	if f := vault.TypeFolder(w.pageType(t)); f != "" {
		dir += "/" + f
	}
	if err := mkdirDurable(e.Vault.Abs(dir)); err != nil {
		return "", errs.Wrap(errs.Internal, err, "create %s/: %v", dir, err)
	}
	slug := Slug(w.c.title)
	for n := 1; n <= 1000; n++ {
		name := slug
		if n > 1 {
			name = fmt.Sprintf("%s-%d", slug, n)
		}
		p := dir + "/" + name + ".md"
		if vault.IsReserved(p) {
			continue
		}
		taken := false
		_ = e.Store.View(func(tx *store.Tx) error {
			taken = tx.DocByPath(p) != 0 && p != t.stale
			return nil
		})
		if taken {
			continue
		}
		err := writeAtomic(e.Vault.Abs(p), data, 0o644, true)
		if err == nil {
			return p, nil
		}
		if errors.Is(err, errExists) {
			// a file the index does not know yet: it may be this very
			// page, written by hand; index it and look again
			return "", &errUnknownFile{path: p}
		}
		return "", errs.Wrap(errs.Internal, err, "write %s: %v (nothing was written)", p, err)
	}
	return "", errs.E(errs.Conflict, "no free file name for %q under %s/ (tried %s.md to %s-1000.md)", w.c.title, dir, slug, slug)
}

func (w *pageWrite) pageType(t *target) string {
	if w.c.typ != "" {
		return w.c.typ
	}
	if t.rec != nil {
		return t.rec.Type
	}
	return "concept"
}

// Slug turns a title into a file name: NFC, lowercased, letters, marks and
// digits of every script kept, every other run of characters one hyphen
// ("Café au lait" → "café-au-lait"). It is at most 120 bytes and never
// empty ("untitled").
func Slug(title string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range norm.NFC.String(strings.ToLower(title)) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.Is(unicode.Nl, r) {
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
			continue
		}
		hyphen = true
	}
	s := b.String()
	if len(s) > 120 {
		cut := 0
		for i := range s { // rune boundaries
			if i > 120 {
				break
			}
			cut = i
		}
		s = strings.TrimRight(s[:cut], "-")
	}
	if s == "" {
		return "untitled"
	}
	return s
}

// ---- frontmatter ----

// frontmatter merges the call into the page's frontmatter: the existing
// file's keys stay in order; keys the call gives replace theirs; a value
// equal to the current one leaves its node (and its YAML style) alone.
func (w *pageWrite) frontmatter(t *target) (*markdown.Frontmatter, error) {
	c := w.c
	today := w.now.Format("2006-01-02")
	var fm *markdown.Frontmatter
	if t.rec == nil {
		fm = &markdown.Frontmatter{}
		if err := fm.Set("title", c.title); err != nil {
			return nil, err
		}
		if err := fm.Set("type", w.pageType(t)); err != nil {
			return nil, err
		}
	} else {
		fm = t.fm.Clone()
		if c.rename != "" && c.rename != fm.String("title") && !(fm.String("title") == "" && c.rename == t.rec.Title) {
			if err := fm.Set("title", c.rename); err != nil {
				return nil, err
			}
		}
		if c.typ != "" && c.typ != t.rec.Type {
			if err := fm.Set("type", c.typ); err != nil {
				return nil, err
			}
		}
	}
	for _, kn := range c.block {
		switch kn.key {
		case "title", "type", "created", "updated", "alias":
			continue // handled below
		case "tags", "aliases", "sources":
			// take the block's position; the value is set below
			if !fm.Has(kn.key) && c.given[kn.key] {
				if err := fm.Set(kn.key, []string{}); err != nil {
					return nil, err
				}
			}
			continue
		}
		if same(fm, kn.key, kn.node) {
			continue
		}
		if err := fm.Set(kn.key, kn.node); err != nil {
			return nil, errs.E(errs.Invalid, "frontmatter %s: %v", kn.key, err)
		}
	}
	for _, kv := range c.extras {
		if kv.value == nil {
			fm.Delete(kv.key)
			continue
		}
		if same(fm, kv.key, kv.value) {
			continue
		}
		if err := fm.Set(kv.key, kv.value); err != nil {
			return nil, errs.E(errs.Invalid, "frontmatter %s: %v", kv.key, err)
		}
	}
	if c.given["aliases"] {
		fm.Delete("alias")
		setList(fm, "aliases", c.lists.aliases, currentList(fm, "aliases"))
	}
	if c.given["tags"] {
		setList(fm, "tags", c.lists.tags, currentTags(fm))
	}
	if c.given["sources"] {
		setList(fm, "sources", c.lists.sources, currentSources(fm))
	}
	if fm.String("created") == "" {
		created := c.created
		if created == "" {
			created = today
		}
		if err := fm.Set("created", dateNode(created)); err != nil {
			return nil, err
		}
	}
	if fm.String("updated") != today {
		if err := fm.Set("updated", dateNode(today)); err != nil {
			return nil, err
		}
	}
	return fm, nil
}

// dateNode is a plain YAML date (`updated: 2026-05-01`, unquoted, as
// Obsidian writes dates).
func dateNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: s}
}

// same reports whether fm's value of key equals v (a *yaml.Node or a value
// decoded from JSON), compared as JSON.
func same(fm *markdown.Frontmatter, key string, v any) bool {
	if !fm.Has(key) {
		return false
	}
	if n, ok := v.(*yaml.Node); ok {
		tmp := &markdown.Frontmatter{}
		if tmp.Set("x", n) != nil {
			return false
		}
		v = tmp.Value("x")
	}
	a, err1 := json.Marshal(fm.Value(key))
	b, err2 := json.Marshal(v)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

func setList(fm *markdown.Frontmatter, key string, want, cur []string) {
	if len(want) == 0 {
		fm.Delete(key)
		return
	}
	if fm.Has(key) && equalStrings(want, cur) {
		return
	}
	_ = fm.Set(key, want)
}

func currentList(fm *markdown.Frontmatter, key string) []string { return fm.List(key, true) }

func currentTags(fm *markdown.Frontmatter) []string {
	var tags []string
	for _, t := range fm.List("tags", true) {
		tags = append(tags, strings.Fields(t)...)
	}
	return markdown.NormalizeTags(tags)
}

func currentSources(fm *markdown.Frontmatter) []string {
	var out []string
	for _, s := range fm.List("sources", true) {
		out = append(out, index.SourceKey(s))
	}
	return out
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

// ---- the review queue ----

// reviewHooks connect the write path to the review queue without an import
// cycle of intent: the review queue sets them in an init function.
var reviewHooks struct {
	// OnPageWritten runs in a write transaction after a page was written
	// and re-indexed: it files an idempotent missing-page item (origin
	// "rule") for each dangling target and marks pending missing-page items
	// that the page satisfies (by title or alias) auto_resolved.
	OnPageWritten func(tx *store.Tx, page *store.PageRec, dangling []string, now time.Time) error
}
