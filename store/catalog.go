package store

import (
	"bytes"
	"encoding/binary"
	"path"

	bolt "go.etcd.io/bbolt"
)

// The catalogue of wiki/index.md (declared here, maintained by PutPage
// and DeletePage like by_type):
//
//	catalog                  type · fold(title) · vault path → title (non-reserved pages)
//	  "\x00n"                → u32 number of entries (dropped with the bucket by reindex)
//	  "\x00t" type           → u32 number of entries of that type
//	  "\x00f" type · folder  → u32 number of entries of that type in that folder (path.Dir)
//	  "\x00d" folder         → u32 number of note entries in that folder whose frontmatter says
//	                           type note (PageRec.TypeDeclared): every untyped page is a note
//	                           too, so only these place a new note (CatalogDeclaredNotes)
//	catalog_changes          the entries added or removed since the last index.md written, so that
//	                         the next write splices them into the file instead of rendering it whole:
//	  "\x00base"             → u32 catalogue version the set starts from (absent: no set is kept,
//	                           e.g. after a reindex; the next index.md is rendered whole)
//	  "\x00over"             → ∅ (more than CatalogChangesCap changes: render whole)
//	  type · fold(title) · vault path → title (an entry that appeared or went)
//	meta "catalog_version"   u32, bumped whenever a page's catalogue entry appears, changes or goes
//	meta "index_md"          IndexStamp: the catalogue version and file stat of the last index.md written
var (
	bCatalog        = []byte("catalog")
	bCatalogChanges = []byte("catalog_changes")
)

func init() { registerDerived(string(bCatalog), string(bCatalogChanges)) }

// CatalogChangesCap bounds the catalogue changes kept between two index.md
// writes; past it the next write renders index.md whole.
const CatalogChangesCap = 512

func catalogKey(p *PageRec) []byte { return key(p.Type, Fold(p.Title), p.Path) }

var (
	catalogCountKey = []byte("\x00n")
	changesBaseKey  = []byte("\x00base")
	changesOverKey  = []byte("\x00over")
	changesCountKey = []byte("\x00n")
)

func typeCountKey(typ string) []byte { return append([]byte("\x00t"), typ...) }

func folderCountKey(typ, p string) []byte {
	return append(append(append([]byte("\x00f"), typ...), 0), path.Dir(p)...)
}

// addCount moves the u32 count at k by delta, deleting it at zero.
func addCount(b *bolt.Bucket, k []byte, delta int) error {
	n := max(int(getU32(b.Get(k)))+delta, 0)
	if n == 0 {
		return b.Delete(k)
	}
	return b.Put(k, u32(uint32(n)))
}

func declaredNoteKey(p string) []byte { return append([]byte("\x00d"), path.Dir(p)...) }

func (tx *Tx) catalogCount() int { return int(getU32(tx.b(bCatalog).Get(catalogCountKey))) }

// addCatalogCounts moves the total, the type's and the type-and-folder's
// entry counts by delta.
func (tx *Tx) addCatalogCounts(p *PageRec, delta int) error {
	b := tx.b(bCatalog)
	if err := b.Put(catalogCountKey, u32(uint32(max(tx.catalogCount()+delta, 0)))); err != nil {
		return err
	}
	if err := addCount(b, typeCountKey(p.Type), delta); err != nil {
		return err
	}
	if p.Type == "note" && p.TypeDeclared {
		if err := addCount(b, declaredNoteKey(p.Path), delta); err != nil {
			return err
		}
	}
	return addCount(b, folderCountKey(p.Type, p.Path), delta)
}

// putCatalog adds a non-reserved page's entry (indexPage calls it).
func (tx *Tx) putCatalog(p *PageRec) error {
	b, k := tx.b(bCatalog), catalogKey(p)
	if b.Get(k) == nil {
		if err := tx.addCatalogCounts(p, +1); err != nil {
			return err
		}
	}
	return b.Put(k, []byte(p.Title))
}

// delCatalog removes a page's entry if present (unindexPage calls it).
func (tx *Tx) delCatalog(p *PageRec) error {
	b, k := tx.b(bCatalog), catalogKey(p)
	if b.Get(k) == nil {
		return nil
	}
	if err := tx.addCatalogCounts(p, -1); err != nil {
		return err
	}
	return b.Delete(k)
}

// catalogChanged reports whether a page's catalogue entry differs between
// two versions of its record (nil = absent or reserved).
func catalogChanged(p, old *PageRec) bool {
	if p != nil && p.Reserved {
		p = nil
	}
	if old != nil && old.Reserved {
		old = nil
	}
	if p == nil || old == nil {
		return p != old
	}
	return p.Type != old.Type || p.Title != old.Title || p.Path != old.Path
}

// catalogEntryChanged bumps the catalogue version and records the entries
// of both versions of a page (nil = absent) in the change set.
func (tx *Tx) catalogEntryChanged(p, old *PageRec) error {
	if err := tx.bumpCatalog(); err != nil {
		return err
	}
	b := tx.b(bCatalogChanges)
	if b.Get(changesBaseKey) == nil || b.Get(changesOverKey) != nil {
		return nil
	}
	for _, r := range []*PageRec{old, p} {
		if r == nil || r.Reserved {
			continue
		}
		k := catalogKey(r)
		if b.Get(k) != nil {
			continue
		}
		n := int(getU32(b.Get(changesCountKey))) + 1
		if n > CatalogChangesCap {
			return b.Put(changesOverKey, []byte{})
		}
		if err := b.Put(changesCountKey, u32(uint32(n))); err != nil {
			return err
		}
		if err := b.Put(k, []byte(r.Title)); err != nil {
			return err
		}
	}
	return nil
}

func (tx *Tx) bumpCatalog() error { return tx.AddMetaU32("catalog_version", 1) }

// CatalogVersion changes whenever the catalogue (the type, title and path
// of any non-reserved page) changes.
func (tx *Tx) CatalogVersion() uint32 { return tx.MetaU32("catalog_version") }

// CatalogMissing reports whether the catalogue does not hold every page (a
// store indexed before the catalogue existed); RebuildCatalog fills it.
// The per-type counts must add up too (a catalogue filled before they
// existed lacks them).
func (tx *Tx) CatalogMissing() bool {
	n := tx.catalogCount()
	if n != tx.PageCount() {
		return true
	}
	_, counts := tx.CatalogTypes()
	f := n
	for _, c := range counts {
		n -= c
	}
	c := tx.b(bCatalog).Cursor()
	prefix := []byte("\x00f")
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		f -= int(getU32(v))
	}
	return n != 0 || f != 0
}

// CatalogFolders returns how many pages of type typ each folder holds
// (vault paths of folders, as path.Dir gives them), without walking the
// pages.
func (tx *Tx) CatalogFolders(typ string) map[string]int {
	out := map[string]int{}
	c := tx.b(bCatalog).Cursor()
	prefix := append(append([]byte("\x00f"), typ...), 0)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		out[string(k[len(prefix):])] = int(getU32(v))
	}
	return out
}

// CatalogDeclaredNotes returns how many pages whose frontmatter says type
// note each folder holds (CatalogFolders("note") counts the untyped pages
// too). A record stored before PageRec.TypeDeclared existed reads as
// undeclared and was never counted, so the counts stay exact.
func (tx *Tx) CatalogDeclaredNotes() map[string]int {
	out := map[string]int{}
	c := tx.b(bCatalog).Cursor()
	prefix := []byte("\x00d")
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		out[string(k[len(prefix):])] = int(getU32(v))
	}
	return out
}

// RebuildCatalog refills the catalogue from the page records (and drops
// the change set: the next index.md is rendered whole).
func (tx *Tx) RebuildCatalog() error {
	for _, name := range [][]byte{bCatalog, bCatalogChanges} {
		if err := tx.tx.DeleteBucket(name); err != nil {
			return err
		}
		if _, err := tx.tx.CreateBucket(name); err != nil {
			return err
		}
	}
	var err error
	if e := tx.EachPage(func(p *PageRec) bool {
		if !p.Reserved {
			err = tx.putCatalog(p)
		}
		return err == nil
	}); e != nil {
		return e
	}
	if err != nil {
		return err
	}
	return tx.bumpCatalog()
}

// CatalogEntry is one line of the catalogue.
type CatalogEntry struct {
	Type, Title, Path string
	key               []byte
}

// Key orders entries as the catalogue does: by type, then folded title,
// then path.
func (e CatalogEntry) Key() []byte { return e.key }

func entryFromKV(k, v []byte) (CatalogEntry, bool) {
	i, j := bytes.IndexByte(k, 0), bytes.LastIndexByte(k, 0)
	if i <= 0 || j <= i {
		return CatalogEntry{}, false // a count key, or not an entry
	}
	return CatalogEntry{Type: string(k[:i]), Title: string(v), Path: string(k[j+1:]),
		key: append([]byte(nil), k...)}, true
}

// EachCatalog calls fn with the type, title and vault path of every
// non-reserved page, ordered by type, then folded title, then path. It
// reads only the catalogue bucket (a cursor walk), so listing 100k pages
// stays cheap. fn returning false stops the walk.
func (tx *Tx) EachCatalog(fn func(typ, title, path string) bool) {
	c := tx.b(bCatalog).Cursor()
	for k, v := c.Seek([]byte{1}); k != nil; k, v = c.Next() {
		i, j := bytes.IndexByte(k, 0), bytes.LastIndexByte(k, 0)
		if i <= 0 || j <= i {
			continue
		}
		if !fn(string(k[:i]), string(v), string(k[j+1:])) {
			return
		}
	}
}

// EachCatalogType calls fn with the entries of one type, in catalogue
// order.
func (tx *Tx) EachCatalogType(typ string, fn func(e CatalogEntry) bool) {
	c := tx.b(bCatalog).Cursor()
	prefix := append([]byte(typ), 0)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if e, ok := entryFromKV(k, v); ok && e.Type == typ && !fn(e) {
			return
		}
	}
}

// CatalogTypes returns every type the catalogue holds with its number of
// entries, in catalogue order.
func (tx *Tx) CatalogTypes() (types []string, counts []int) {
	c := tx.b(bCatalog).Cursor()
	prefix := []byte("\x00t")
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		types = append(types, string(k[len(prefix):]))
		counts = append(counts, int(getU32(v)))
	}
	return types, counts
}

// CatalogTitle returns the title of the entry with key k (an entry's
// Key), and whether the catalogue holds it.
func (tx *Tx) CatalogTitle(k []byte) (string, bool) {
	v := tx.b(bCatalog).Get(k)
	return string(v), v != nil
}

// CatalogNext returns the entry that follows the entry with key k within
// its type (false when k is the type's last).
func (tx *Tx) CatalogNext(k []byte) (CatalogEntry, bool) {
	i := bytes.IndexByte(k, 0)
	if i <= 0 {
		return CatalogEntry{}, false
	}
	c := tx.b(bCatalog).Cursor()
	nk, nv := c.Seek(k)
	if nk != nil && bytes.Equal(nk, k) {
		nk, nv = c.Next()
	}
	if nk == nil || !bytes.HasPrefix(nk, k[:i+1]) {
		return CatalogEntry{}, false
	}
	return entryFromKV(nk, nv)
}

// CatalogChanges returns the catalogue entries that appeared or went since
// catalogue version base (each with its title at the time), in catalogue
// order. ok is false when the store cannot tell: no change set is kept
// from that version (a reindex dropped it, or it started later) or it
// overflowed CatalogChangesCap.
func (tx *Tx) CatalogChanges(base uint32) (changes []CatalogEntry, ok bool) {
	b := tx.b(bCatalogChanges)
	v := b.Get(changesBaseKey)
	if v == nil || getU32(v) > base || b.Get(changesOverKey) != nil {
		return nil, false
	}
	c := b.Cursor()
	for k, v := c.Seek([]byte{1}); k != nil; k, v = c.Next() {
		if e, ok := entryFromKV(k, v); ok {
			changes = append(changes, e)
		}
	}
	return changes, true
}

// ResetCatalogChanges empties the change set and starts a new one from
// catalogue version base (index.md was just written from it).
func (tx *Tx) ResetCatalogChanges(base uint32) error {
	b := tx.b(bCatalogChanges)
	if getU32(b.Get(changesCountKey)) > 0 || b.Get(changesOverKey) != nil {
		if err := tx.tx.DeleteBucket(bCatalogChanges); err != nil {
			return err
		}
		var err error
		if b, err = tx.tx.CreateBucket(bCatalogChanges); err != nil {
			return err
		}
	}
	return b.Put(changesBaseKey, u32(base))
}

// IndexStamp records the last wiki/index.md synapse wrote: the catalogue
// version it was rendered from and the file's size and mtime after the
// write, so that a write that changes no catalogue entry can skip
// rendering it.
type IndexStamp struct {
	Version uint32
	Size    int64
	MtimeNS int64
}

// IndexStamp returns the stamp of the last index.md written.
func (tx *Tx) IndexStamp() (IndexStamp, bool) {
	v := tx.b(bMeta).Get([]byte("index_md"))
	if v == nil {
		return IndexStamp{}, false
	}
	r := reader{b: v}
	s := IndexStamp{Version: uint32(r.uvarint()), Size: r.varint(), MtimeNS: r.varint()}
	return s, r.err == nil
}

// SetIndexStamp stores the stamp of an index.md just written.
func (tx *Tx) SetIndexStamp(s IndexStamp) error {
	b := binary.AppendUvarint(nil, uint64(s.Version))
	b = binary.AppendVarint(b, s.Size)
	b = binary.AppendVarint(b, s.MtimeNS)
	return tx.b(bMeta).Put([]byte("index_md"), b)
}
