package ops

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// page move renames a page's file (and, with a new title, its title) and
// rewrites every link in the vault that would otherwise stop reaching it
// (move_links.go says how a link keeps its form). It runs in three steps:
// plan (read every file concerned, compute its new bytes, and check that
// every link of every changed page reaches after the move what it reached
// before), journal (the whole change written to .synapse/ and made
// durable: from then on the move is as good as done), apply (the files,
// then the index, index.md and log.md). A crash after the journal is
// finished by the next open of the vault; before it, nothing changed
// (move_journal.go).

// MovePageIn is the input of move_page.
type MovePageIn struct {
	Title string `json:"title" arg:"0" words:"true" required:"true" desc:"The page to move: its title, alias, path or id"`
	To    string `json:"to,omitempty" desc:"Its new title; its file is renamed to match (the same folder; the file name in the style of the old one: the title itself, or its slug)"`
	Path  string `json:"path,omitempty" desc:"Its new file: a vault path inside wiki/ ending in .md; the title stays unless to is given (a title that came from the file name follows it)"`
	Log   string `json:"log,omitempty" desc:"One line for wiki/log.md saying why (≤ 500 characters)"`
	// KeepAlias keeps the old title as one of the page's aliases, so that
	// search and links written later (or outside the vault) by the old
	// name still reach it; links in the vault are rewritten either way.
	KeepAlias bool `json:"keep_alias,omitempty" desc:"Keep the old title as an alias of the page (added to its aliases), so the old name still finds and reaches it; links in the vault are rewritten either way"`
	DryRun    bool `json:"dry_run,omitempty" desc:"Check the move without making it: the answer says where the page would go and which pages' links would be rewritten (a refusal is the same as the move's), and nothing is changed"`
}

// ChangedPage is a page whose links a move rewrote.
type ChangedPage struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	Links int    `json:"links"` // links rewritten in it
}

// MovePageOut is the result of move_page: the page where it is now, where
// it was, and the pages whose links were rewritten.
type MovePageOut struct {
	ID        string        `json:"id"`
	Title     string        `json:"title"`
	Type      string        `json:"type"`
	Path      string        `json:"path"`
	FromTitle string        `json:"from_title"`
	FromPath  string        `json:"from_path"`
	Links     int           `json:"links"`   // links rewritten, in every page
	Changed   []ChangedPage `json:"changed"` // the other pages rewritten, by path
	// Revision is the moved page's history revision that records the
	// move; each rewritten page gets a revision of its own.
	Revision int `json:"revision,omitempty" desc:"The moved page's history revision recording the move (page history shows the revisions from before it too)"`
	// Commit is the git commit of the move (history.git in the vault's
	// config): the moved file, the file it left and the rewritten pages.
	Commit string `json:"commit,omitempty" desc:"The git commit of the move, when the vault commits writes to git"`
	// AutoResolved are the pending missing-page items the page answers
	// under its new name or path.
	AutoResolved []string `json:"auto_resolved,omitempty" desc:"Pending missing-page review items (ids) the page answers under its new name, closed as auto_resolved (decided_by rule) and logged in wiki/log.md"`
	// UnchangedLinks counts the links from other pages that reach the
	// page after the move as they were written (by a name it keeps: its
	// file name, an alias, a path): they needed no rewrite. Note says so.
	UnchangedLinks int    `json:"unchanged_links" desc:"Links from other pages that reach the page as they were written (by its file name, an alias or a path it keeps), so the move left them alone; links counts only those rewritten"`
	Note           string `json:"note,omitempty" desc:"Says how many links still reach the page unchanged, and why, when there are any"`
	// Notes say what became of the page's first H1 (retitleHeading), and
	// name problems beside the move that did not fail it.
	Notes []string `json:"notes,omitempty" desc:"What became of the page's first heading (# Old title follows the new title; another heading is kept), and problems beside the move that did not fail it (the page history, git)"`
	// DryRun is true when nothing was moved: the answer is the plan.
	DryRun bool `json:"dry_run,omitempty" desc:"Nothing was moved: the answer is what the move would do"`
}

// MaxMovePages caps the pages one move rewrites (the journal holds each of
// them twice).
const MaxMovePages = 10000

var opMovePage = register(Op{
	Name: "page.move", Summary: "Move or rename a page, rewriting every link to it",
	CLI: "page move", MCP: "move_page", REST: []Route{{Method: "POST", Path: "/pages/{title}/move", Body: "*"}},
	Access: Write, Limits: "at most 10,000 pages rewritten; refused when the new path exists or another page has the new name",
	Title: "Move or rename a wiki page",
	Examples: []Example{
		{`synapse page move "Spaced repetition" --to "Spaced practice"`, "rename: the title, the file (in its naming style) and every link to it"},
		{`synapse page move "Spaced repetition" --path wiki/learning/spaced-repetition.md`, "move the file; links that still reach it are left as they are"},
	},
	Exits: map[int]string{
		2: "invalid input: no --to or --path, a path outside wiki/, a reserved title, nothing to move",
		3: "not found: no page answers to TITLE",
		4: "conflict: the new path exists, another page answers to the new title, or a file changed during the move (nothing was moved)",
	},
}, movePage)

func movePage(ctx context.Context, e *Env, in *MovePageIn) (*MovePageOut, error) {
	note, err := checkLogNote(in.Log)
	if err != nil {
		return nil, err
	}
	writeMu.Lock()
	defer writeMu.Unlock()
	if err := recoverMoves(ctx, e); err != nil {
		return nil, err
	}
	if err := checkReservedWritable(e.files()); err != nil {
		return nil, err
	}
	var m *movePlan
	for attempt := 0; ; attempt++ {
		var stale []string
		m, stale, err = planMove(e, in)
		if err != nil {
			return nil, err
		}
		if len(stale) == 0 {
			break
		}
		if attempt == 1 {
			return nil, errs.E(errs.Conflict, "%s changed while the move was planned (another program is writing it); nothing was moved, try again", stale[0])
		}
		// files changed since they were indexed: index them, plan again
		if _, err := e.Index.Scan(ctx, index.ScanOptions{Paths: stale}); err != nil {
			return nil, err
		}
	}
	if in.DryRun {
		return m.preview(e)
	}
	j := m.journal(e, note)
	if err := j.save(e); err != nil {
		return nil, err
	}
	if err := j.apply(e); err != nil {
		if rerr := j.rollBack(e); rerr != nil {
			return nil, errs.Wrap(errs.Internal, rerr, "the move failed (%s) and rolling it back failed too: %s; the next command finishes or rolls it back", errs.Raw(err), errs.Raw(rerr))
		}
		var div *errMoveDiverged
		if errors.As(err, &div) {
			return nil, errs.E(errs.Conflict, "%s; nothing was moved, try again", div.Error())
		}
		return nil, err
	}
	rec, err := j.finish(ctx, e)
	if err != nil {
		return nil, err
	}
	out, err := m.result(e)
	if out != nil {
		out.Revision, out.Commit, out.Notes, out.AutoResolved = rec.revision, rec.commit, append(m.notes, rec.notes...), rec.resolved
	}
	return out, err
}

// movePlan is a move worked out: the page, where it goes, and every file's
// new bytes.
type movePlan struct {
	page             *store.PageRec
	toPath, toTitle  string
	files            []moveFile // the moved page first
	changed          []ChangedPage
	links            int
	fromPath, fromTi string
	// titleFromFile is set when the page's title is its file name (no
	// frontmatter title): a new file name renames it
	titleFromFile bool
	// notes say what became of the page's first heading (retitleHeading)
	notes []string
	// keepAlias: the old title becomes an alias (MovePageIn.KeepAlias)
	keepAlias bool
}

// planMove works out a move (see movePlan). stale lists files whose bytes
// differ from what the index holds: the plan is to be made again once they
// are indexed.
func planMove(e *Env, in *MovePageIn) (*movePlan, []string, error) {
	m := &movePlan{keepAlias: in.KeepAlias}
	var stale []string
	err := e.Store.View(func(tx *store.Tx) error {
		p, err := resolvePage(tx, in.Title)
		if err != nil {
			return err
		}
		if p.Reserved {
			return errs.E(errs.Invalid, "%s is a file synapse maintains (or the overview); it is not moved", p.Path)
		}
		m.page, m.fromPath, m.fromTi = p, p.Path, p.Title
		data, err := readVaultFile(e.files(), e.Vault.Abs(p.Path))
		if err != nil {
			return fileError(err, "read %s: %v", p.Path, err)
		}
		parsed := markdown.Parse(p.Path, data)
		m.titleFromFile = parsed.Frontmatter.String("title") == "" && parsed.Title == store.Stem(p.Path)
		if err := m.destination(tx, in); err != nil {
			return err
		}
		pl := &planner{tx: tx, oldPath: p.Path, mv: index.Moved{Doc: p.Doc, Path: m.toPath, Title: m.toTitle, Aliases: p.Aliases}}
		stale, err = m.rewrite(e, tx, pl)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return m, stale, nil
}

// destination decides the new path and title, and refuses a move onto a
// file that exists or a name another page answers to.
func (m *movePlan) destination(tx *store.Tx, in *MovePageIn) error {
	p := m.page
	to := strings.TrimSpace(in.To)
	if to == "" && strings.TrimSpace(in.Path) == "" {
		return errs.E(errs.Invalid, "say where the page goes: %s (a new title) or %s (a new file)", errs.Param("to"), errs.Param("path"))
	}
	m.toTitle, m.toPath = p.Title, p.Path
	if to != "" {
		if err := checkTitle(errs.Param("to"), to); err != nil {
			return err
		}
		if err := checkNotReserved(errs.Param("to"), to); err != nil {
			return err
		}
		if looksLikePath(to) {
			return errs.E(errs.Invalid, "%s is the new title, and %q looks like a file path; give a path with %s", errs.Param("to"), to, errs.Param("path"))
		}
		m.toTitle = to
		m.toPath = renamedFile(p.Path, p.Title, to)
	}
	if strings.TrimSpace(in.Path) != "" {
		np, err := checkPagePath(errs.Param("path"), in.Path)
		if err != nil {
			return err
		}
		m.toPath = np
		if to == "" && m.titleFromFile {
			m.toTitle = store.Stem(np)
		}
	}
	if store.PathKey(m.toPath) == store.PathKey(p.Path) {
		m.toPath = p.Path // the file keeps its name when only its case would change
	}
	if m.toPath == p.Path && m.toTitle == p.Title {
		return errs.E(errs.Invalid, "%q is already at %s under that title: nothing to move", p.Title, p.Path)
	}
	if store.Fold(m.toTitle) != store.Fold(p.Title) {
		r := index.Resolve(tx, index.LinkKey(m.toTitle), "", false)
		if r.Doc != 0 && r.Doc != p.Doc {
			q, _ := tx.Page(r.Doc)
			by := map[string]string{"file": "file name", "title": "title", "alias": "alias"}[r.By]
			if by == "" {
				by = "path"
				if !strings.Contains(m.toTitle, "/") {
					by = "file name" // a bare name found at wiki/NAME.md
				}
			}
			return errs.E(errs.Conflict, "another page answers to %q already (%s, by its %s); choose another title", m.toTitle, pathOf(q), by)
		}
	}
	if m.toPath != p.Path {
		if d := tx.DocByPath(m.toPath); d != 0 {
			q, _ := tx.Page(d)
			return errs.E(errs.Conflict, "%s exists already (the page %q); choose another %s", m.toPath, titleOf(q), errs.Param("path"))
		}
	}
	return nil
}

func titleOf(p *store.PageRec) string {
	if p == nil {
		return ""
	}
	return p.Title
}

func pathOf(p *store.PageRec) string {
	if p == nil {
		return ""
	}
	return p.Path
}

// renamedFile is the path a page renamed to title takes: the same folder,
// a file name in the style of the old one — its slug when the old name was
// the old title's slug (a prefix or suffix around it kept: src-x.md; a
// name that is both, "spruce-juniper" titled by its file name, is a slug),
// the title itself when the old name was the old title, else the slug.
func renamedFile(old, oldTitle, title string) string {
	dir, stem := path.Dir(old), store.Stem(old)
	name := Slug(title)
	oldSlug := Slug(oldTitle)
	switch {
	case stem == oldSlug:
	case stem == oldTitle || store.Fold(stem) == store.Fold(oldTitle):
		if n := fileName(title); n != "" {
			name = n
		}
	case oldSlug != "untitled" && strings.Contains(stem, oldSlug):
		name = strings.Replace(stem, oldSlug, Slug(title), 1)
	}
	return dir + "/" + name + ".md"
}

// fileName makes a title a file name: the characters file systems or links
// refuse (pathForbidden, '/') become spaces, runs of spaces one, no space
// or dot at either end; "" when nothing is left or the name is refused.
func fileName(title string) string {
	n := strings.Map(func(r rune) rune {
		if r == '/' || strings.ContainsRune(pathForbidden, r) {
			return ' '
		}
		return r
	}, title)
	n = strings.Trim(strings.Join(strings.Fields(n), " "), ". ")
	if n == "" {
		return ""
	}
	if _, err := checkPagePath("name", vault.WikiDir+"/"+n+".md"); err != nil {
		return ""
	}
	return n
}

// rewrite computes every changed file: the moved page (its links from its
// new folder, its title) and each page with a link the move would
// otherwise send elsewhere.
func (m *movePlan) rewrite(e *Env, tx *store.Tx, pl *planner) (stale []string, err error) {
	srcs := m.sources(tx, pl)
	for _, doc := range srcs {
		rec, err := tx.Page(doc)
		if err != nil || rec == nil {
			continue
		}
		moved := doc == m.page.Doc
		if !moved && !pl.touches(rec) {
			continue
		}
		data, err := readVaultFile(e.files(), e.Vault.Abs(rec.Path))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fileError(err, "read %s: %v (nothing was moved)", rec.Path, err)
		}
		if err != nil || sumHex(data) != rec.SHA256 {
			stale = append(stale, rec.Path)
			continue
		}
		if err := m.rewriteFile(pl, rec, data, moved); err != nil {
			return nil, err
		}
	}
	if len(m.changed) > MaxMovePages {
		return nil, errs.E(errs.TooLarge, "the move would rewrite %d pages; the limit is %d", len(m.changed), MaxMovePages)
	}
	sort.Slice(m.changed, func(i, j int) bool { return m.changed[i].Path < m.changed[j].Path })
	return stale, nil
}

// rewriteFile adds one page's new bytes to the plan, checked.
func (m *movePlan) rewriteFile(pl *planner, rec *store.PageRec, data []byte, moved bool) error {
	if !utf8.Valid(data) {
		return errs.E(errs.Conflict, "%s is not valid UTF-8; fix it before moving a page it links to", rec.Path)
	}
	fixes, bad := pl.fixes(rec.Path, data)
	if bad != "" {
		return errs.E(errs.Conflict, "the link in %s (%s) cannot be rewritten to reach its page after the move; rename it by hand first", rec.Path, bad)
	}
	out := splice(data, fixes)
	if moved {
		var err error
		if out, err = m.retitle(out); err != nil {
			return err
		}
	}
	if err := pl.verify(rec.Path, data, out); err != nil {
		return errs.Wrap(errs.Internal, err, "the move would break a link of %s: %v (nothing was moved)", rec.Path, err)
	}
	f := moveFile{Path: rec.Path, ID: rec.ID, Old: data, New: out}
	if moved {
		f.Path, f.From = m.toPath, rec.Path
		if m.toPath == rec.Path {
			f.From = ""
		}
		m.files = append([]moveFile{f}, m.files...)
		m.links += len(fixes)
		return nil
	}
	if len(fixes) == 0 {
		return nil
	}
	m.files = append(m.files, f)
	m.links += len(fixes)
	m.changed = append(m.changed, ChangedPage{Path: rec.Path, Title: rec.Title, Links: len(fixes)})
	return nil
}

// sources are the pages whose links the move may change: the page itself,
// the pages linking to it, and the pages linking to a page that one of the
// moved page's new names (file name, title, path suffixes) could take
// links from.
func (m *movePlan) sources(tx *store.Tx, pl *planner) []uint32 {
	seen := map[uint32]bool{m.page.Doc: true}
	out := []uint32{m.page.Doc}
	add := func(doc uint32) {
		for _, b := range tx.Backlinks(doc) {
			if !seen[b.Src] {
				seen[b.Src] = true
				out = append(out, b.Src)
			}
		}
	}
	add(m.page.Doc)
	for _, k := range newKeys(m.toPath, m.toTitle) {
		for _, c := range index.Matches(tx, k, "", false) {
			if c.Doc != 0 && c.Doc != m.page.Doc {
				add(c.Doc)
			}
		}
	}
	return out
}

// newKeys are the link keys a page at p titled title answers to by name or
// path suffix.
func newKeys(p, title string) []string {
	keys := []string{index.LinkKey(store.Stem(p)), index.LinkKey(title), store.PathKey(p)}
	segs := strings.Split(strings.TrimSuffix(strings.TrimPrefix(p, vault.WikiDir+"/"), ".md"), "/")
	for k := len(segs) - 2; k >= 0; k-- {
		keys = append(keys, store.Fold(strings.Join(segs[k:], "/")))
	}
	return keys
}

// touches reports from the page's stored links whether one of them leads
// elsewhere after the move (the file is then read and rewritten).
func (pl *planner) touches(rec *store.PageRec) bool {
	for _, lr := range rec.Links {
		l := markdown.Link{Target: lr.Target}
		if lr.Markdown {
			l.Kind = markdown.MarkdownLink
		}
		if _, ok := pl.needs(l, rec.Path, rec.Path, false); ok {
			return true
		}
	}
	return false
}

// splice applies fixes (in file order, not overlapping) to data.
func splice(data []byte, fixes []linkFix) []byte {
	if len(fixes) == 0 {
		return data
	}
	sort.Slice(fixes, func(i, j int) bool { return fixes[i].start < fixes[j].start })
	var b bytes.Buffer
	at := 0
	for _, f := range fixes {
		b.Write(data[at:f.start])
		b.WriteString(f.text)
		at = f.end
	}
	b.Write(data[at:])
	return b.Bytes()
}

// retitle gives the moved page its new title: the frontmatter title key
// set when the page has one, or when its new file name does not say the
// title; and the body's first H1 when it is the old title (retitleHeading).
// Otherwise the page is left as it is.
func (m *movePlan) retitle(data []byte) ([]byte, error) {
	d := markdown.SplitDocument(string(data))
	if m.toTitle != m.fromTi {
		var changed bool
		if d.Body, changed = m.retitleHeading(d.Body); changed {
			data = []byte(d.BOM + d.Open + d.FM + d.Close + d.Body)
		}
	}
	fm := markdown.KeepFrontmatter(d.FM)
	if !d.HasFM {
		fm = &markdown.Frontmatter{}
	}
	has := fm.Has("title")
	setTitle := fm.String("title") != m.toTitle && (has || store.Stem(m.toPath) != m.toTitle)
	aliases, addAlias := m.keptAliases(fm)
	if !setTitle && !addAlias {
		return data, nil
	}
	if fm.Err() != nil {
		what := "its title cannot be changed"
		if !setTitle {
			what = "the old title cannot be added to its aliases"
		}
		return nil, errs.E(errs.Conflict, "%s has frontmatter that is not valid YAML (%v), so %s; fix it first, or move the page with %s only", m.page.Path, fm.Err(), what, errs.Param("path"))
	}
	if setTitle {
		if err := fm.Set("title", m.toTitle); err != nil {
			return nil, errs.Wrap(errs.Internal, err, "set the title: %v", err)
		}
	}
	if addAlias {
		setAliases(fm, aliases)
	}
	text, err := fm.YAML()
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "encode frontmatter: %v", err)
	}
	var b bytes.Buffer
	b.WriteString(d.BOM)
	if d.HasFM {
		b.WriteString(d.Open + text + d.Close)
	} else {
		nl := "\n"
		if strings.Contains(d.Body, "\r\n") {
			nl, text = "\r\n", strings.ReplaceAll(text, "\n", "\r\n")
		}
		b.WriteString("---" + nl + text + "---" + nl)
	}
	b.WriteString(d.Body)
	return b.Bytes(), nil
}

// keptAliases returns the page's aliases with the old title added, and
// whether that adds it: a move asked to keep the old title that changes
// the title (case and spacing aside) and whose aliases lack it.
func (m *movePlan) keptAliases(fm *markdown.Frontmatter) ([]string, bool) {
	if !m.keepAlias {
		return nil, false
	}
	if sameTitle(m.fromTi, m.toTitle) {
		m.notes = append(m.notes, fmt.Sprintf("the title stays %q, so no alias was added", m.toTitle))
		return nil, false
	}
	cur := currentAliases(fm)
	for _, a := range cur {
		if sameTitle(a, m.fromTi) {
			return nil, false
		}
	}
	if len(cur) >= MaxAliases {
		m.notes = append(m.notes, fmt.Sprintf("the page has %d aliases already (the limit), so the old title was not added", len(cur)))
		return nil, false
	}
	m.notes = append(m.notes, fmt.Sprintf("the old title %q is kept as an alias", m.fromTi))
	return append(cur, m.fromTi), true
}

// retitleHeading makes the body's first H1 the new title when it is the
// old one (case and spacing aside): a page that repeats its title as its
// heading keeps doing so, as Obsidian users expect. A first H1 that is
// something else is kept, and a note says so.
func (m *movePlan) retitleHeading(body string) (string, bool) {
	for _, sec := range markdown.Sections(body) {
		if sec.Level != 1 {
			continue
		}
		if !sameTitle(sec.Text, m.fromTi) {
			m.notes = append(m.notes, fmt.Sprintf("the first heading %q is not the old title, so it was kept", "# "+sec.Text))
			return body, false
		}
		line := body[sec.Start:lineEnd(body, sec.Start)]
		at := sec.Start + strings.LastIndex(line, sec.Text)
		m.notes = append(m.notes, fmt.Sprintf("the first heading %q follows the new title: %q", "# "+sec.Text, "# "+m.toTitle))
		return body[:at] + m.toTitle + body[at+len(sec.Text):], true
	}
	return body, false
}

// sameTitle compares a heading with a title, case and runs of spaces aside.
func sameTitle(heading, title string) bool {
	return store.Fold(strings.Join(strings.Fields(heading), " ")) == store.Fold(strings.Join(strings.Fields(title), " "))
}

// lineEnd is the offset of the end of the line at i (its newline, or the
// end of s).
func lineEnd(s string, i int) int {
	if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
		return i + k
	}
	return len(s)
}

// verify checks a page's new bytes: the same links in the same order,
// each reaching after the move what it reached before, and frontmatter that
// parses if it did.
func (pl *planner) verify(src string, old, new []byte) error {
	dst := pl.after(src)
	a, b := markdown.Parse(src, old), markdown.Parse(dst, new)
	if len(a.Links) != len(b.Links) {
		return errors.New("the number of links changed")
	}
	if a.FMError == "" && b.FMError != "" {
		return errors.New("its frontmatter would not parse: " + b.FMError)
	}
	for i, l := range a.Links {
		w, ok := pl.before(l, src)
		if !ok {
			continue
		}
		nl := b.Links[i]
		if !pl.reaches(nl.Target, dst, nl.Kind == markdown.MarkdownLink, w) {
			return fmt.Errorf("line %d: %s would no longer reach its target", l.Line, l.Target)
		}
	}
	return nil
}

// before is where link l of the page at src leads before the move, among
// what the move keeps: a page; for the moved page also a file by path.
// ok is false for a dangling link, a link reaching a file by name, and a
// file link of another page.
func (pl *planner) before(l markdown.Link, src string) (want, bool) {
	key := index.LinkKey(l.Target)
	md := l.Kind == markdown.MarkdownLink
	moved := src == pl.oldPath
	if key == "" {
		return want{}, false
	}
	if ft := index.FileTarget(src, l); ft != "" || !l.IsPageLink() {
		return want{file: ft}, moved && ft != ""
	}
	r := index.Resolve(pl.tx, key, src, md)
	switch {
	case r.Doc != 0:
		return want{doc: r.Doc}, true
	case r.File != "" && moved && (md || strings.Contains(key, "/")):
		return want{file: r.File}, true
	}
	return want{}, false
}

// result describes the move done.
func (m *movePlan) result(e *Env) (*MovePageOut, error) {
	out := &MovePageOut{Title: m.toTitle, Path: m.toPath, FromTitle: m.fromTi, FromPath: m.fromPath, Links: m.links, Changed: m.changed}
	if out.Changed == nil {
		out.Changed = []ChangedPage{}
	}
	err := e.Store.View(func(tx *store.Tx) error {
		rec, err := pageAt(tx, m.toPath)
		if err != nil {
			return err
		}
		out.ID, out.Title, out.Type = rec.ID, rec.Title, rec.Type
		out.UnchangedLinks = m.unchangedLinks(tx, rec.Doc)
		return nil
	})
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "the page was moved to %s, but reading it back failed: %v", m.toPath, err)
	}
	out.Note = m.unchangedNote(out.UnchangedLinks)
	return out, nil
}

// preview answers a dry run from the plan: the page as it would be after
// the move, with nothing changed.
func (m *movePlan) preview(e *Env) (*MovePageOut, error) {
	out := &MovePageOut{ID: m.page.ID, Title: m.toTitle, Type: m.page.Type, Path: m.toPath, FromTitle: m.fromTi, FromPath: m.fromPath,
		Links: m.links, Changed: m.changed, Notes: m.notes, DryRun: true}
	if out.Changed == nil {
		out.Changed = []ChangedPage{}
	}
	_ = e.Store.View(func(tx *store.Tx) error {
		out.UnchangedLinks = m.unchangedLinks(tx, m.page.Doc)
		return nil
	})
	out.Note = m.unchangedNote(out.UnchangedLinks)
	return out, nil
}

// unchangedLinks counts the links from other pages that reach the moved
// page (doc) now, less those the move rewrote.
func (m *movePlan) unchangedLinks(tx *store.Tx, doc uint32) int {
	n := 0
	for _, b := range tx.Backlinks(doc) {
		if b.Src != doc {
			n += b.Count
		}
	}
	for _, c := range m.changed {
		n -= c.Links
	}
	return max(n, 0)
}

// unchangedNote says that n links still reach the page as written, and
// by what when the file name is kept.
func (m *movePlan) unchangedNote(n int) string {
	if n == 0 {
		return ""
	}
	what := fmt.Sprintf("%d %s", n, pluralWord(n, "link", "links"))
	by := "by a name or path the page keeps (its file name, an alias)"
	if store.Stem(m.toPath) == store.Stem(m.fromPath) {
		by = fmt.Sprintf("by its file name %q, which it keeps", store.Stem(m.toPath))
	}
	return fmt.Sprintf("%s from other pages %s it unchanged %s; %s no rewrite", what, pluralWord(n, "reaches", "reach"), by, pluralWord(n, "it needed", "they needed"))
}

// sumHex is the hex sha256 of data.
func sumHex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
