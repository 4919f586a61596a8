package store

import (
	"fmt"
	"hash/fnv"
	"path"
	"strings"
)

// LinkRec is one link of a page as stored: what was written, the key it
// resolves by, and what it resolved to. Labels and block ids are not
// stored (nothing reads them from the store).
type LinkRec struct {
	Target   string // as written (without #heading, |label)
	Key      string // LinkKey(Target); derived, not stored
	Heading  string // #heading
	Embed    bool   // ![[…]]
	Markdown bool   // [label](x.md) rather than [[x]]
	Line     int    // 1-based body line
	To       uint32 // resolved doc; 0 = dangling (unless File is set)
	// ToReserved is set when To is a reserved top file (index, log,
	// overview): no graph node, whether or not the file still exists.
	ToReserved bool
	Ambiguous  int // candidates when more than one page (or file) matched
	// File is the vault path of the file that is no page (a raw source,
	// an attachment) that the link reached when To is 0: a page link
	// whose name no page answers to but a file does, or a link in
	// FileLinks. "" with To 0 is a dangling page link (in Links) or a
	// link to a file that does not exist (in FileLinks).
	File string
}

// LinkKey returns the folded resolution key of a link target: NFC,
// lowercased, without a leading "./" or "/", and without a ".md" suffix.
func LinkKey(target string) string {
	t := strings.TrimSpace(target)
	t = strings.TrimPrefix(t, "./")
	t = strings.TrimLeft(t, "/")
	return strings.TrimSuffix(Fold(t), ".md")
}

// PageRec is the stored record of a page (including the three reserved
// top files, which carry Reserved and stay out of lists and the graph).
type PageRec struct {
	Doc        uint32    `json:"-"`
	ID         string    `json:"id"`
	Path       string    `json:"path"`
	Title      string    `json:"title"`
	Type       string    `json:"type"`
	Aliases    []string  `json:"aliases,omitempty"`
	Tags       []string  `json:"tags,omitempty"`
	Sources    []string  `json:"sources,omitempty"`     // as written in frontmatter
	SourceKeys []string  `json:"source_keys,omitempty"` // vault paths under raw/sources/
	Created    string    `json:"created,omitempty"`
	Updated    string    `json:"updated,omitempty"`
	MtimeNS    int64     `json:"mtime"`
	Size       int64     `json:"size"`
	SHA256     string    `json:"sha256"`
	Links      []LinkRec `json:"links,omitempty"`
	// FileLinks are the links that can name only a file that is no page:
	// an attachment ([[diagram.png]], [[paper.pdf]]) or an explicit path
	// outside wiki/ ([[../../raw/sources/x.md]]). They are never dangling
	// page links; one whose File is "" names a file that does not exist.
	FileLinks []LinkRec `json:"file_links,omitempty"`
	Reserved  bool      `json:"reserved,omitempty"`
	// LinksPending is set while Links have not been resolved yet: they
	// contribute nothing to backlinks, dangling or the graph until the
	// links_dirty drain resolves them.
	LinksPending bool   `json:"pending,omitempty"`
	ChangedNS    int64  `json:"changed"` // when the content hash last changed (Unix ns)
	FMError      string `json:"fm_error,omitempty"`
	// TypeDeclared is set when Type is the page's frontmatter `type` (not
	// its folder's, nor the `note` every other page falls back to): only
	// declared types place new pages (ops newPageDir).
	TypeDeclared bool `json:"type_declared,omitempty"`
}

// Name kinds in the names bucket, in resolution order after paths.
const (
	NameFile  byte = 'f'
	NameTitle byte = 't'
	NameAlias byte = 'a'
)

// Stem returns the file name of a slash path without its extension.
func Stem(p string) string { return strings.TrimSuffix(path.Base(p), path.Ext(p)) }

// LastSegment returns the part of a folded key after its last '/'.
func LastSegment(k string) string {
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		return k[i+1:]
	}
	return k
}

// PathKey is the page_path key of a vault path: folded, without ".md".
func PathKey(vaultPath string) string {
	p := Fold(vaultPath)
	return strings.TrimSuffix(p, ".md")
}

const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// pageID derives the short public id of a path (8 Crockford base32
// characters of FNV-1a 64 over the folded path; salted on collision).
func pageID(p string, salt int) string {
	h := fnv.New64a()
	h.Write([]byte(Fold(p)))
	if salt > 0 {
		fmt.Fprintf(h, "\x00%d", salt)
	}
	v := h.Sum64()
	b := make([]byte, 8)
	for i := range b {
		b[i] = idAlphabet[v&31]
		v >>= 5
	}
	return string(b)
}

// Page returns a page by doc.
func (tx *Tx) Page(doc uint32) (*PageRec, error) {
	v := tx.b(bPages).Get(u32(doc))
	if v == nil {
		return nil, nil
	}
	p, err := decodePage(v)
	if err != nil {
		return nil, fmt.Errorf("page %d: %w", doc, err)
	}
	p.Doc = doc
	return p, nil
}

// PageFields returns a page by doc without its links (Links and
// FileLinks nil): what names and sizes it, for a reader that needs no
// more (search hits), without decoding the bulk of a big page's record.
func (tx *Tx) PageFields(doc uint32) (*PageRec, error) {
	v := tx.b(bPages).Get(u32(doc))
	if v == nil {
		return nil, nil
	}
	p, _, err := decodePageFields(v)
	if err != nil {
		return nil, fmt.Errorf("page %d: %w", doc, err)
	}
	p.Doc = doc
	return p, nil
}

// PageHead is what names a page in a list: its id, path, title and type.
type PageHead struct {
	Doc                   uint32
	ID, Path, Title, Type string
}

// Head returns a page's head without decoding the rest of its record (a
// page with thousands of links decodes in microseconds here, in
// milliseconds with Page); ok is false when there is no such page.
func (tx *Tx) Head(doc uint32) (PageHead, bool, error) {
	v := tx.b(bPages).Get(u32(doc))
	if v == nil {
		return PageHead{}, false, nil
	}
	if len(v) == 0 || (v[0] != pageCodecVersion && v[0] != 2) {
		return PageHead{}, false, fmt.Errorf("page %d: %w", doc, errCorrupt)
	}
	r := reader{b: v[1:]}
	h := PageHead{Doc: doc, ID: r.str(), Path: r.str(), Title: r.str(), Type: r.str()}
	if r.err != nil {
		return PageHead{}, false, fmt.Errorf("page %d: %w", doc, r.err)
	}
	return h, true, nil
}

// DocByPath returns the doc of a vault path (case-insensitive, ".md"
// optional).
func (tx *Tx) DocByPath(vaultPath string) uint32 {
	return getU32(tx.b(bPagePath).Get([]byte(PathKey(vaultPath))))
}

// DocByID returns the doc of a public page id.
func (tx *Tx) DocByID(id string) uint32 {
	return getU32(tx.b(bPageID).Get([]byte(strings.ToLower(id))))
}

// LinkCount returns the number of page links in non-reserved pages.
func (tx *Tx) LinkCount() int { return int(tx.MetaU32("links")) }

func (tx *Tx) countLinks(p *PageRec, sign int) error {
	if p == nil || p.Reserved || len(p.Links) == 0 {
		return nil
	}
	return tx.AddMetaU32("links", sign*len(p.Links))
}

// PageCount returns the number of non-reserved pages.
func (tx *Tx) PageCount() int { return int(tx.MetaU32("pages")) }

// NameCandidate is a page found under a name.
type NameCandidate struct {
	Doc  uint32
	Path string
}

// LookupName returns the pages whose name of the given kind folds to name.
func (tx *Tx) LookupName(kind byte, name string) []NameCandidate {
	prefix := append([]byte{kind}, Fold(name)...)
	prefix = append(prefix, 0)
	var out []NameCandidate
	c := tx.b(bNames).Cursor()
	for k, v := c.Seek(prefix); k != nil && hasPrefixBytes(k, prefix); k, v = c.Next() {
		if len(k) == len(prefix)+4 {
			out = append(out, NameCandidate{Doc: getU32(k[len(prefix):]), Path: string(v)})
		}
	}
	return out
}

func nameKey(kind byte, name string, doc uint32) []byte {
	return withDoc(append([]byte{kind}, Fold(name)...), doc)
}

func titleKey(title string, doc uint32) []byte { return withDoc([]byte(Fold(title)), doc) }

func typeKey(typ, title string, doc uint32) []byte {
	return withDoc(key(typ, Fold(title)), doc)
}

func citeKey(src string, doc uint32) []byte { return withDoc([]byte(Fold(src)), doc) }

// NewPage assigns a doc number and public id for a page at vaultPath.
func (tx *Tx) NewPage(vaultPath string) (uint32, string, error) {
	doc, err := tx.NextDoc()
	if err != nil {
		return 0, "", err
	}
	ids := tx.b(bPageID)
	for salt := 0; ; salt++ {
		id := pageID(vaultPath, salt)
		if ids.Get([]byte(id)) == nil {
			return doc, id, nil
		}
	}
}

// NewPageWithID is NewPage keeping a page's id: a page moved to another
// file stays the page it was. The id is used when it is well-formed and
// no page holds it, else NewPage picks one from the path.
func (tx *Tx) NewPageWithID(vaultPath, id string) (uint32, string, error) {
	id = strings.ToLower(id)
	if len(id) != 8 || strings.Trim(id, idAlphabet) != "" || tx.b(bPageID).Get([]byte(id)) != nil {
		return tx.NewPage(vaultPath)
	}
	doc, err := tx.NextDoc()
	if err != nil {
		return 0, "", err
	}
	return doc, id, nil
}

// PutPage stores p (p.Doc and p.ID set by NewPage) and brings every
// secondary index in line with it; old is the previous record of the same
// doc, or nil for a new page.
func (tx *Tx) PutPage(p *PageRec, old *PageRec) error {
	if old != nil {
		if err := tx.unindexPage(old); err != nil {
			return err
		}
	} else if !p.Reserved {
		if err := tx.AddMetaU32("pages", 1); err != nil {
			return err
		}
	}
	if err := tx.countLinks(old, -1); err != nil {
		return err
	}
	if err := tx.countLinks(p, +1); err != nil {
		return err
	}
	if err := tx.b(bPages).Put(u32(p.Doc), encodePage(p)); err != nil {
		return err
	}
	if catalogChanged(p, old) {
		if err := tx.catalogEntryChanged(p, old); err != nil {
			return err
		}
	}
	return tx.indexPage(p)
}

// PutPageLinks rewrites only the stored links of a page (after a link was
// re-resolved); secondary name indexes are unchanged.
func (tx *Tx) PutPageLinks(p *PageRec) error {
	return tx.b(bPages).Put(u32(p.Doc), encodePage(p))
}

// DeletePage removes a page record and its secondary index entries. Link
// and graph entries are the caller's (index package's) business.
func (tx *Tx) DeletePage(p *PageRec) error {
	if err := tx.unindexPage(p); err != nil {
		return err
	}
	if !p.Reserved {
		if err := tx.AddMetaU32("pages", -1); err != nil {
			return err
		}
		if err := tx.catalogEntryChanged(nil, p); err != nil {
			return err
		}
	}
	if err := tx.countLinks(p, -1); err != nil {
		return err
	}
	return tx.b(bPages).Delete(u32(p.Doc))
}

func (tx *Tx) indexPage(p *PageRec) error {
	d := u32(p.Doc)
	puts := []struct {
		b    []byte
		k, v []byte
	}{
		{bPagePath, []byte(PathKey(p.Path)), d},
		{bPageID, []byte(p.ID), d},
		{bNames, nameKey(NameFile, Stem(p.Path), p.Doc), []byte(p.Path)},
		{bNames, nameKey(NameTitle, p.Title, p.Doc), []byte(p.Path)},
	}
	for _, a := range p.Aliases {
		puts = append(puts, struct{ b, k, v []byte }{bNames, nameKey(NameAlias, a, p.Doc), []byte(p.Path)})
	}
	if !p.Reserved {
		puts = append(puts,
			struct{ b, k, v []byte }{bTitles, titleKey(p.Title, p.Doc), nil},
			struct{ b, k, v []byte }{bByType, typeKey(p.Type, p.Title, p.Doc), nil})
		if err := tx.putCatalog(p); err != nil {
			return err
		}
		for _, t := range p.Tags {
			puts = append(puts, struct{ b, k, v []byte }{bByTag, typeKey(t, p.Title, p.Doc), nil})
		}
		for _, s := range p.SourceKeys {
			puts = append(puts, struct{ b, k, v []byte }{bCites, citeKey(s, p.Doc), nil})
		}
	}
	for _, x := range puts {
		v := x.v
		if v == nil {
			v = []byte{}
		}
		if err := tx.b(x.b).Put(x.k, v); err != nil {
			return err
		}
	}
	return nil
}

func (tx *Tx) unindexPage(p *PageRec) error {
	dels := []struct{ b, k []byte }{
		{bPagePath, []byte(PathKey(p.Path))},
		{bPageID, []byte(p.ID)},
		{bNames, nameKey(NameFile, Stem(p.Path), p.Doc)},
		{bNames, nameKey(NameTitle, p.Title, p.Doc)},
		{bTitles, titleKey(p.Title, p.Doc)},
		{bByType, typeKey(p.Type, p.Title, p.Doc)},
	}
	if err := tx.delCatalog(p); err != nil {
		return err
	}
	for _, a := range p.Aliases {
		dels = append(dels, struct{ b, k []byte }{bNames, nameKey(NameAlias, a, p.Doc)})
	}
	for _, t := range p.Tags {
		dels = append(dels, struct{ b, k []byte }{bByTag, typeKey(t, p.Title, p.Doc)})
	}
	for _, s := range p.SourceKeys {
		dels = append(dels, struct{ b, k []byte }{bCites, citeKey(s, p.Doc)})
	}
	for _, x := range dels {
		// the page_path/page_id entries may already point at another doc
		// after a rename; only remove entries that are ours
		if string(x.b) == string(bPagePath) || string(x.b) == string(bPageID) {
			if getU32(tx.b(x.b).Get(x.k)) != p.Doc {
				continue
			}
		}
		if err := tx.b(x.b).Delete(x.k); err != nil {
			return err
		}
	}
	return nil
}

// ListFilter selects pages for ListPages.
type ListFilter struct {
	Type string // "" = any
	Tag  string // "" = any
	// Keep, when set, keeps only the pages it returns true for. It sees
	// each record in the walk without its links (a linear scan of the
	// records; page files are never read).
	Keep   func(*PageRec) bool
	Offset int
	Limit  int
}

// ListPages returns non-reserved pages ordered by folded title, then doc,
// with the total number matching the filter. With both Type and Tag set
// the tag index is walked and filtered by type.
func (tx *Tx) ListPages(f ListFilter) ([]*PageRec, int, error) {
	var (
		bucket = bTitles
		prefix []byte
	)
	switch {
	case f.Tag != "":
		bucket, prefix = bByTag, append([]byte(strings.ToLower(f.Tag)), 0)
	case f.Type != "":
		bucket, prefix = bByType, append([]byte(f.Type), 0)
	}
	b := tx.b(bucket)
	if prefix == nil && f.Type == "" && f.Keep == nil {
		// unfiltered: the total is a counter, and the page of results is
		// reached by skipping keys only
		total := tx.PageCount()
		var out []*PageRec
		c := b.Cursor()
		i := 0
		for k, _ := c.First(); k != nil && len(out) < f.Limit; k, _ = c.Next() {
			if i++; i <= f.Offset {
				continue
			}
			p, err := tx.Page(getU32(k[len(k)-4:]))
			if err != nil {
				return nil, 0, err
			}
			if p != nil {
				out = append(out, p)
			}
		}
		return out, total, nil
	}
	var out []*PageRec
	total := 0
	c := b.Cursor()
	first := func() ([]byte, []byte) { return c.Seek(prefix) }
	if len(prefix) == 0 {
		first = c.First
	}
	for k, _ := first(); k != nil && hasPrefixBytes(k, prefix); k, _ = c.Next() {
		doc := getU32(k[len(k)-4:])
		if f.Keep != nil {
			ok, err := tx.keepPage(doc, f)
			if err != nil {
				return nil, 0, err
			}
			if !ok {
				continue
			}
		} else if f.Tag != "" && f.Type != "" {
			p, err := tx.Page(doc)
			if err != nil {
				return nil, 0, err
			}
			if p == nil || p.Type != f.Type {
				continue
			}
			total++
			if total > f.Offset && len(out) < f.Limit {
				out = append(out, p)
			}
			continue
		}
		total++
		if total > f.Offset && len(out) < f.Limit {
			p, err := tx.Page(doc)
			if err != nil {
				return nil, 0, err
			}
			if p != nil {
				out = append(out, p)
			}
		}
	}
	return out, total, nil
}

// keepPage says whether the page doc passes f's Keep (and its type, when
// a tag index is walked for a type too), decoding its record but links.
func (tx *Tx) keepPage(doc uint32, f ListFilter) (bool, error) {
	p, err := tx.PageFields(doc)
	if p == nil || err != nil {
		return false, err
	}
	return (f.Tag == "" || f.Type == "" || p.Type == f.Type) && f.Keep(p), nil
}

// EachPage calls fn for every page record (reserved included) in doc
// order; fn returning false stops.
func (tx *Tx) EachPage(fn func(p *PageRec) bool) error {
	c := tx.b(bPages).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		p, err := decodePage(v)
		if err != nil {
			return fmt.Errorf("page %d: %w", getU32(k), err)
		}
		p.Doc = getU32(k)
		if !fn(p) {
			return nil
		}
	}
	return nil
}

// EachDoc calls fn with the doc number of every page record (reserved
// included), in doc order, without decoding the records.
func (tx *Tx) EachDoc(fn func(doc uint32) error) error {
	c := tx.b(bPages).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if err := fn(getU32(k)); err != nil {
			return err
		}
	}
	return nil
}

// EachTitle calls fn with every non-reserved page's doc and folded title
// in title order, without decoding page records.
func (tx *Tx) EachTitle(fn func(doc uint32, folded string) bool) {
	c := tx.b(bTitles).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) < 5 {
			continue
		}
		if !fn(getU32(k[len(k)-4:]), string(k[:len(k)-5])) {
			return
		}
	}
}

// CitingPages returns the docs of pages whose sources include src (a vault
// path under raw/sources/).
func (tx *Tx) CitingPages(src string) []uint32 {
	prefix := append([]byte(Fold(src)), 0)
	var out []uint32
	c := tx.b(bCites).Cursor()
	for k, _ := c.Seek(prefix); k != nil && hasPrefixBytes(k, prefix); k, _ = c.Next() {
		if len(k) == len(prefix)+4 {
			out = append(out, getU32(k[len(prefix):]))
		}
	}
	return out
}
