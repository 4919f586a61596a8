package ops

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"unicode"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"golang.org/x/text/unicode/norm"
)

// Stage 2 of write_page: locate the page. An existing page is found as
// get_page finds it (resolved like a link, then by id), and its file is
// read; a new page gets its folder and file name when it is created
// (create, below), once the merge knows its type.

// target is where a write goes.
type target struct {
	rec  *store.PageRec // the existing page; nil for a new one
	path string         // vault path of the existing page
	old  []byte         // its bytes
	info os.FileInfo    // its stat when read
	doc  markdown.Document
	fm   *markdown.Frontmatter // its frontmatter; kept (no keys) when it is not valid YAML
	// fmErr says why the file's frontmatter is not valid YAML ("" when it is)
	fmErr string
	// others are the other pages the title matches (then writing by
	// title is refused unless nothing changes)
	others []string
	// twins are files whose names differ from the page's only by case or
	// Unicode normalization (not indexed: index/twins.go); a change by
	// title is refused, since the caller may mean either file
	twins []string
	stale string // a stored path whose file is gone (re-scanned away)
	// linked holds the link keys of the page as last indexed: a dangling
	// link the previous version already had files no review item. The
	// index, not the file, is the previous version here because a write
	// records its review items in the transaction that indexes it: a write
	// killed before that commit left the links unfiled, and its retry
	// files them.
	linked map[string]bool
}

// locate finds the page the call writes: an existing page resolved by its
// title as a link would be (wherever its file lives), or a new one.
func (w *pageWrite) locate() (*target, error) {
	e, c := w.e, w.c
	t := &target{}
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
		for _, rf := range index.RefusedFiles(tx).Files {
			if rf.Reason == index.TwinReason && rf.TwinOf == rec.Path {
				t.twins = append(t.twins, rf.Path)
			}
		}
		if r.Candidates > 1 {
			t.others = otherCandidates(tx, r, c.title, rec.Path)
			// the sha256 get_page returned names the page it read: a
			// write back by the same title goes to that one
			if c.ifMatch != "" && rec.SHA256 != c.ifMatch {
				for _, p := range t.others {
					o, err := tx.Page(tx.DocByPath(p))
					if err == nil && o != nil && o.SHA256 == c.ifMatch {
						t.rec = o
						break
					}
				}
			}
			if c.ifMatch != "" && t.rec.SHA256 == c.ifMatch {
				t.others = nil
			}
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
		if t.rec.Path == vault.OverviewPage {
			return nil, errs.E(errs.Invalid, "%q names %s, the wiki's overview, which is yours to edit as a file (it is not a page: write_page does not write index.md, log.md or overview.md); choose another title for a page", c.title, t.rec.Path)
		}
		return nil, errs.E(errs.Invalid, "%q names %s, which synapse maintains; write_page does not write index.md, log.md or overview.md (choose another title)", c.title, t.rec.Path)
	}
	t.path = t.rec.Path
	if c.path != "" && store.PathKey(c.path) != store.PathKey(t.path) {
		return nil, errs.E(errs.Conflict, "%q is the page at %s; %s names another file: a write does not move a page (%s does)", c.title, t.path, errs.Param("path"), errs.Cmd("page.move"))
	}
	abs := e.Vault.Abs(t.path)
	// stat, read, stat: the bytes merged below are the file as stat saw it
	before, err := statVaultFile(e.files(), abs)
	var data []byte
	if err == nil {
		data, err = readVaultFile(e.files(), abs)
	}
	if err == nil {
		t.info, err = statVaultFile(e.files(), abs)
	}
	if errors.Is(err, fs.ErrNotExist) {
		// the index is behind the disk: the file is gone
		t.stale, t.rec = t.path, nil
		return w.newTarget(t)
	}
	if err != nil {
		return nil, fileError(err, "read %s: %v", t.path, err)
	}
	if t.info.Size() != int64(len(data)) || !t.info.ModTime().Equal(before.ModTime()) || t.info.Size() != before.Size() {
		return nil, errs.E(errs.Conflict, "%s is being changed by another program; retry", t.path)
	}
	t.old = data
	if c.ifMatch != "" {
		sum := sha256.Sum256(data)
		if cur := hex.EncodeToString(sum[:]); cur != c.ifMatch {
			return nil, errs.E(errs.Conflict, "%s changed since it was read: %s %s… but the file is now %s…; get the page again and reapply your edit", t.path, errs.Param("if_match"), c.ifMatch[:12], cur[:12])
		}
	}
	parsed := markdown.Parse(t.path, data)
	t.doc = markdown.SplitDocument(string(data))
	t.fm, t.fmErr = parsed.Frontmatter, parsed.FMError
	t.linked = make(map[string]bool, len(t.rec.Links))
	for _, l := range t.rec.Links {
		t.linked[l.Key] = true
	}
	return t, nil
}

func (w *pageWrite) newTarget(t *target) (*target, error) {
	c := w.c
	if c.ifMatch != "" {
		return nil, errs.E(errs.Conflict, "no page titled %q exists, so %s cannot match; omit %[2]s to create it", c.title, errs.Param("if_match"))
	}
	if err := checkNotReserved("title", c.title); err != nil {
		return nil, err
	}
	if looksLikePath(c.title) {
		hint := c.title
		if !strings.HasPrefix(hint, vault.WikiDir+"/") {
			hint = vault.WikiDir + "/" + strings.TrimPrefix(hint, "/")
		}
		return nil, errs.E(errs.Invalid, "%q looks like a file path, and no page is there; to create a page at a path you choose, give its title and the path: %s", c.title, errs.Cmd("page.write", "title", "TITLE", "path", hint))
	}
	if c.path != "" {
		var holder *store.PageRec
		_ = w.e.Store.View(func(tx *store.Tx) error {
			if d := tx.DocByPath(c.path); d != 0 {
				holder, _ = tx.Page(d)
			}
			return nil
		})
		if holder != nil && holder.Path != t.stale {
			return nil, errs.E(errs.Conflict, "%s holds the page %q already; write it by that title, or choose another %s", holder.Path, holder.Title, errs.Param("path"))
		}
	}
	t.fm = &markdown.Frontmatter{}
	return t, nil
}

// otherCandidates lists the pages an ambiguous title matches besides the
// one at chosen.
func otherCandidates(tx *store.Tx, r index.Resolution, title, chosen string) []string {
	var out []string
	for _, p := range candidatePaths(tx, r, title) {
		if p != chosen {
			out = append(out, p)
		}
	}
	return out
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

// newPageDir is the folder a new page of type typ goes to (docs/vault.md#pages):
// the folder holding most pages of that type (for note: most pages whose
// frontmatter says note; ties: the type's folder of
// the built-in folders, then the shorter path, then the first in order), else the
// type's built-in folder (wiki/ itself for note), else wiki/<type>/.
func newPageDir(tx *store.Tx, typ string) string {
	builtin := vault.WikiDir
	if f := vault.TypeFolder(typ); f != "" {
		builtin += "/" + f
	}
	counts := tx.CatalogFolders(typ)
	if typ == "note" {
		// every untyped page is a note too: only notes that say so place
		// one (an Obsidian vault's untyped pages, most of them in
		// wiki/Plugins/, say, do not draw new notes there)
		counts = tx.CatalogDeclaredNotes()
	}
	best, n := "", 0
	for dir, k := range counts {
		switch {
		case k > n:
		case k < n:
			continue
		case dir == builtin:
		case best == builtin:
			continue
		case len(dir) < len(best), len(dir) == len(best) && dir < best:
		default:
			continue
		}
		best, n = dir, k
	}
	if best != "" {
		return best
	}
	if vault.IsBuiltinType(typ) {
		return builtin
	}
	return vault.WikiDir + "/" + typ
}

// create writes a new page of type typ in its folder (newPageDir) as
// <slug>.md, numbering the slug (-2, -3…) past paths taken by other
// pages; an existing file is never replaced.
func (w *pageWrite) create(data []byte, t *target, title, typ string) (string, error) {
	e := w.e
	if w.c.path != "" {
		return w.createAt(data, w.c.path)
	}
	var dir string
	_ = e.Store.View(func(tx *store.Tx) error {
		dir = newPageDir(tx, typ)
		return nil
	})
	if err := mkdirDurable(e.writeFS(), e.Vault.Abs(dir)); err != nil {
		return "", fileError(err, "create %s/: %v", dir, err)
	}
	w.folders.Before(dir)
	slug := Slug(title)
	for n := 1; n <= 1000; n++ {
		p := numberedPath(dir, slug, n)
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
		err := writeAtomic(e.writeFS(), e.Vault.Abs(p), data, 0o644, true)
		if err == nil {
			w.folders.Added(dir, 1)
			return p, nil
		}
		if errors.Is(err, errExists) {
			// a file the index does not know yet: it may be this very
			// page, written by hand; index it and look again
			return "", &errUnknownFile{path: p}
		}
		return "", fileError(err, "write %s: %v (nothing was written)", p, err)
	}
	return "", errs.E(errs.Conflict, "no free file name for %q under %s/ (tried %s.md to %s-1000.md)", title, dir, slug, slug)
}

// numberedPath is the n-th file name tried for a slug in dir: slug.md,
// then slug-2.md, slug-3.md…
func numberedPath(dir, slug string, n int) string {
	if n > 1 {
		slug = fmt.Sprintf("%s-%d", slug, n)
	}
	return dir + "/" + slug + ".md"
}

// createAt writes a new page at the path the caller chose; an existing
// file is never replaced (one the index does not know yet is scanned, and
// the write tried again: it may be this very page, written by hand).
func (w *pageWrite) createAt(data []byte, p string) (string, error) {
	dir := path.Dir(p)
	if err := mkdirDurable(w.e.writeFS(), w.e.Vault.Abs(dir)); err != nil {
		return "", fileError(err, "create %s/: %v", dir, err)
	}
	w.folders.Before(dir)
	err := writeAtomic(w.e.writeFS(), w.e.Vault.Abs(p), data, 0o644, true)
	switch {
	case err == nil:
		w.folders.Added(dir, 1)
		return p, nil
	case errors.Is(err, errExists):
		return "", &errUnknownFile{path: p}
	}
	return "", fileError(err, "write %s: %v (nothing was written)", p, err)
}

// windowsDevices are the file names Windows reserves whatever the
// extension (CON, con.md and nul.txt cannot be opened there).
var windowsDevices = map[string]bool{"con": true, "prn": true, "aux": true, "nul": true}

func init() {
	for i := '0'; i <= '9'; i++ {
		windowsDevices["com"+string(i)] = true
		windowsDevices["lpt"+string(i)] = true
	}
}

// Slug turns a title into a file name: NFC, lowercased, letters, marks and
// digits of every script kept, every other run of characters one hyphen
// ("Café au lait" → "café-au-lait"). It is at most 120 bytes and never
// empty ("untitled"); a name Windows reserves for a device gets "-page"
// ("CON" → "con-page"), so the vault opens everywhere.
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
	if windowsDevices[s] {
		s += "-page"
	}
	return s
}
