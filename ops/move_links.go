package ops

import (
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// How a move rewrites links (docs/pages.md). A link is rewritten only when
// the move would change where it leads: every link keeps its target, and
// keeps its form —
//
//   - by file name ([[cluster-aware-updating]]) stays by file name, the
//     new one; by title stays by title, the new one; by alias stays as it
//     is while the alias still reaches the page;
//   - by path stays by path, written the same way: relative to the vault
//     (wiki/a/b), to wiki/ (a/b), to the linking page (../a/b), or as a
//     path suffix (b/c, as few folders as reach the page); ".md" kept or
//     left out as written;
//   - a markdown link gets the relative path from its page, escaped as
//     the link was (%20, or <angle brackets>);
//   - the heading (#Heading), block (#^id), label (|label) and embed mark
//     (!) are kept as written, and so is the case of a link written in
//     lower case;
//   - when the link's own form cannot reach the page (two pages now share
//     the name), it takes the shortest path suffix that does, as
//     Obsidian's "shortest path when possible".
//
// The moved page's own relative links (markdown links, ../ wikilinks,
// links into raw/) are rewritten to reach from its new folder what they
// reached from the old one. A link that reached another page and would be
// taken over by the moved page's new names is rewritten to keep reaching
// that page. A link that matched no page may reach the moved page after
// the move, as it would after a write of a page of that name.

// linkFix is one rewrite: the target text at start:end of a file becomes
// text.
type linkFix struct {
	start, end int
	text       string
}

// want is where a link must lead after the move: a page (doc) or a file
// that is no page (file).
type want struct {
	doc  uint32
	file string
	by   string // how the link reached it before: "file", "title", "alias", "path", "suffix"
}

// planner computes a move's rewrites inside one read transaction.
type planner struct {
	tx      *store.Tx
	mv      index.Moved
	oldPath string
}

// after returns a page's path after the move.
func (pl *planner) after(p string) string {
	if p == pl.oldPath {
		return pl.mv.Path
	}
	return p
}

// fixes returns the rewrites the file data of the page at src needs, and
// the first link that cannot be written to reach its target ("" when all
// can).
func (pl *planner) fixes(src string, data []byte) ([]linkFix, string) {
	doc := string(data)
	parsed := markdown.Parse(src, data)
	moved := src == pl.oldPath
	dst := pl.after(src)
	var out []linkFix
	for _, l := range parsed.Links {
		w, ok := pl.needs(l, src, dst, moved)
		if !ok {
			continue
		}
		text := pl.rewrite(l, doc, src, dst, w)
		if text == "" {
			return nil, linkText(doc, l)
		}
		if text != doc[l.Start:l.End] {
			out = append(out, linkFix{start: l.Start, end: l.End, text: text})
		}
	}
	return out, ""
}

// linkText is a link as written, for messages: its line and target.
func linkText(doc string, l markdown.Link) string {
	return "line " + strconv.Itoa(l.Line) + ": " + doc[l.Start:l.End]
}

// needs reports whether the link l of the page at src (dst after the move)
// leads elsewhere after the move, and where it must lead.
func (pl *planner) needs(l markdown.Link, src, dst string, moved bool) (want, bool) {
	key := index.LinkKey(l.Target)
	md := l.Kind == markdown.MarkdownLink
	if key == "" {
		return want{}, false
	}
	if ft := index.FileTarget(src, l); ft != "" || !l.IsPageLink() {
		// a link that can name only a file: only the moved page's own
		// explicit paths change meaning (relative to its new folder)
		if !moved || ft == "" {
			return want{}, false
		}
		return want{file: ft}, index.FileTarget(dst, l) != ft
	}
	pre := index.Resolve(pl.tx, key, src, md)
	post := index.ResolveMoved(pl.tx, pl.mv, key, dst, md)
	switch {
	case pre.Doc != 0:
		return want{doc: pre.Doc, by: pre.By}, post.Doc != pre.Doc
	case pre.File != "" && moved && (md || strings.Contains(key, "/")):
		return want{file: pre.File}, post.File != pre.File || post.Doc != 0
	}
	return want{}, false
}

// rewrite returns the new target text of link l of the page now at dst so
// that it reaches w, in the link's own form first (see the top of this
// file); "" when no form reaches it.
func (pl *planner) rewrite(l markdown.Link, doc, src, dst string, w want) string {
	orig := l.Target
	md := l.Kind == markdown.MarkdownLink
	var tp string // the target's path after the move
	var names []string
	if w.doc != 0 {
		p, err := pl.tx.Page(w.doc)
		if err != nil || p == nil {
			return ""
		}
		tp = pl.after(p.Path)
		title := p.Title
		if w.doc == pl.mv.Doc {
			title = pl.mv.Title
		}
		stem, title := caseLike(orig, store.Stem(tp)), caseLike(orig, title)
		switch w.by {
		case "title":
			names = []string{title, stem}
		case "alias":
			names = []string{strings.TrimSuffix(orig, ".md"), stem, title}
		default:
			names = []string{stem, title}
		}
	} else {
		tp = w.file
	}
	ext := strings.HasSuffix(strings.ToLower(orig), ".md")
	var cands []string
	switch {
	case md:
		cands = append(cands, pathForm(orig, src, dst, tp, pl.oldFor(l, w), true, true))
		if w.doc != 0 && strings.HasPrefix(tp, vault.WikiDir+"/") {
			cands = append(cands, strings.TrimPrefix(tp, vault.WikiDir+"/"), tp)
		}
	case strings.Contains(orig, "/") || strings.HasPrefix(orig, "."):
		cands = append(cands, pathForm(orig, src, dst, tp, pl.oldFor(l, w), ext, false))
	default:
		for _, n := range names {
			if ext {
				n += ".md"
			}
			cands = append(cands, n)
		}
	}
	// the fallbacks: path suffixes, shortest first
	if w.doc != 0 && !md {
		rel := strings.TrimSuffix(strings.TrimPrefix(tp, vault.WikiDir+"/"), ".md")
		segs := strings.Split(rel, "/")
		for k := len(segs) - 1; k >= 0; k-- {
			s := strings.Join(segs[k:], "/")
			if ext {
				s += ".md"
			}
			cands = append(cands, s)
		}
		cands = append(cands, strings.TrimSuffix(tp, ".md"))
	}
	for _, c := range cands {
		text, ok := pl.spell(l, doc, c)
		if !ok {
			continue
		}
		if pl.reaches(c, dst, md, w) {
			return text
		}
	}
	return ""
}

// oldFor is the vault path the link reached before the move (its target's
// old path), which tells how a path was written.
func (pl *planner) oldFor(l markdown.Link, w want) string {
	if w.doc == 0 {
		return w.file
	}
	if w.doc == pl.mv.Doc {
		return pl.oldPath
	}
	if p, err := pl.tx.Page(w.doc); err == nil && p != nil {
		return p.Path
	}
	return ""
}

// reaches reports whether target text c, written in the page at dst,
// leads to w after the move.
func (pl *planner) reaches(c, dst string, md bool, w want) bool {
	key := index.LinkKey(c)
	if w.doc != 0 {
		return index.ResolveMoved(pl.tx, pl.mv, key, dst, md).Doc == w.doc
	}
	l := markdown.Link{Target: c}
	if md {
		l.Kind = markdown.MarkdownLink
	}
	if index.FileTarget(dst, l) == w.file {
		return true
	}
	r := index.ResolveMoved(pl.tx, pl.mv, key, dst, md)
	return r.Doc == 0 && r.File == w.file
}

// pathForm writes the path tp the way orig, in the page at src, wrote the
// path old: relative to the vault, to the linking page (now at dst), to
// wiki/, or as a path suffix of as many names as orig had; with ".md"
// when ext. A markdown link or a wikilink starting with ./ or ../ is tried
// relative to its page first, as it is resolved.
func pathForm(orig, src, dst, tp, old string, ext, md bool) string {
	trim := func(p string) string {
		if ext {
			return p
		}
		return strings.TrimSuffix(p, ".md")
	}
	o := store.LinkKey(orig)
	lead := ""
	if strings.HasPrefix(orig, "/") {
		lead = "/"
	}
	relative := md || strings.HasPrefix(orig, "./") || strings.HasPrefix(orig, "../")
	inWiki, wikiOld := strings.CutPrefix(old, vault.WikiDir+"/")
	tpWiki, wikiNew := strings.CutPrefix(tp, vault.WikiDir+"/")
	switch {
	case relative && store.PathKey(path.Join(path.Dir(src), store.LinkKey(strings.TrimPrefix(orig, "./")))) == store.PathKey(old):
		rel := relPath(path.Dir(dst), tp)
		if strings.HasPrefix(orig, "./") && !strings.HasPrefix(rel, "../") {
			rel = "./" + rel
		}
		return trim(rel)
	case o == store.PathKey(old):
		return lead + trim(tp)
	case wikiOld && wikiNew && o == store.PathKey(inWiki):
		return lead + trim(tpWiki)
	case relative:
		return trim(relPath(path.Dir(dst), tp))
	}
	segs := strings.Split(tp, "/")
	k := min(len(segs), strings.Count(strings.Trim(o, "/"), "/")+1)
	return trim(strings.Join(segs[len(segs)-k:], "/"))
}

// relPath is the path of target relative to the folder dir (both vault
// paths).
func relPath(dir, target string) string {
	from := strings.Split(dir, "/")
	to := strings.Split(target, "/")
	if dir == "." || dir == "" {
		from = nil
	}
	i := 0
	for i < len(from) && i < len(to)-1 && from[i] == to[i] {
		i++
	}
	return strings.Repeat("../", len(from)-i) + strings.Join(to[i:], "/")
}

// caseLike writes name in the case style of orig: all lower case when orig
// was written so (and has letters), else as it is.
func caseLike(orig, name string) string {
	base := orig
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	if strings.ToLower(base) == base && strings.ToUpper(base) != base {
		return strings.ToLower(name)
	}
	return name
}

// spell writes target c for link l as it will stand in the file: escaped
// for a markdown link, checked for a wikilink and for the frontmatter
// value around it. ok is false when c cannot be written there.
func (pl *planner) spell(l markdown.Link, doc, c string) (string, bool) {
	if c == "" || strings.ContainsAny(c, "\r\n") {
		return "", false
	}
	if l.Kind == markdown.MarkdownLink {
		if l.Angle {
			return c, !strings.ContainsAny(c, "<>")
		}
		return escapeDest(c, doc[l.Start:l.End]), true
	}
	if strings.ContainsAny(c, "|#^[]") {
		return "", false
	}
	if l.Property != "" && !yamlSafe(doc, l.Start, c) {
		return "", false
	}
	return c, true
}

// escapeDest escapes a markdown link destination as the link it replaces
// was escaped: every name percent-escaped when the old one held escapes
// of other characters than spaces, else only what would end or cut the
// destination (spaces, parentheses, '%', '#', '?', angle brackets).
func escapeDest(p, old string) string {
	full := strings.Contains(strings.ReplaceAll(old, "%20", ""), "%")
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if full {
			parts[i] = url.PathEscape(s)
			continue
		}
		parts[i] = strings.NewReplacer("%", "%25", " ", "%20", "(", "%28", ")", "%29", "#", "%23", "?", "%3F", "<", "%3C", ">", "%3E", "\t", "%09").Replace(s)
	}
	return strings.Join(parts, "/")
}

// yamlSafe reports whether text c can replace a link target at offset at
// of a frontmatter line and leave the YAML meaning what it meant: inside a
// quoted scalar, no quote of its kind (nor a backslash in double quotes);
// in a plain scalar, none of YAML's indicators.
func yamlSafe(doc string, at int, c string) bool {
	lineStart := strings.LastIndexByte(doc[:at], '\n') + 1
	var quote byte
	for i := lineStart; i < at; i++ {
		switch ch := doc[i]; {
		case quote == 0 && (ch == '"' || ch == '\''):
			quote = ch
		case quote == '"' && ch == '\\':
			i++
		case quote == '\'' && ch == '\'' && i+1 < at && doc[i+1] == '\'':
			i++
		case ch == quote:
			quote = 0
		}
	}
	switch quote {
	case '"':
		return !strings.ContainsAny(c, "\"\\")
	case '\'':
		return !strings.Contains(c, "'")
	}
	return !strings.ContainsAny(c, ":#,{}\"'&*!|>%@`")
}
