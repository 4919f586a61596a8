package store

import (
	"bytes"
	"encoding/binary"
)

// The catalogue of wiki/index.md (declared here, maintained by PutPage
// and DeletePage like by_type):
//
//	catalog                  type · fold(title) · vault path → title (non-reserved pages)
//	  "\x00n"                → u32 number of entries (dropped with the bucket by reindex)
//	meta "catalog_version"   u32, bumped whenever a page's catalogue entry appears, changes or goes
//	meta "index_md"          IndexStamp: the catalogue version and file stat of the last index.md written
var bCatalog = []byte("catalog")

func init() { registerDerived(string(bCatalog)) }

func catalogKey(p *PageRec) []byte { return key(p.Type, Fold(p.Title), p.Path) }

var catalogCountKey = []byte("\x00n")

func (tx *Tx) catalogCount() int { return int(getU32(tx.b(bCatalog).Get(catalogCountKey))) }

// putCatalog adds a non-reserved page's entry (indexPage calls it).
func (tx *Tx) putCatalog(p *PageRec) error {
	b, k := tx.b(bCatalog), catalogKey(p)
	if b.Get(k) == nil {
		if err := b.Put(catalogCountKey, u32(uint32(tx.catalogCount()+1))); err != nil {
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
	if err := b.Put(catalogCountKey, u32(uint32(max(tx.catalogCount()-1, 0)))); err != nil {
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

func (tx *Tx) bumpCatalog() error { return tx.AddMetaU32("catalog_version", 1) }

// CatalogVersion changes whenever the catalogue (the type, title and path
// of any non-reserved page) changes.
func (tx *Tx) CatalogVersion() uint32 { return tx.MetaU32("catalog_version") }

// CatalogMissing reports whether the catalogue does not hold every page (a
// store indexed before the catalogue existed); RebuildCatalog fills it.
func (tx *Tx) CatalogMissing() bool { return tx.catalogCount() != tx.PageCount() }

// RebuildCatalog refills the catalogue from the page records.
func (tx *Tx) RebuildCatalog() error {
	if err := tx.tx.DeleteBucket(bCatalog); err != nil {
		return err
	}
	if _, err := tx.tx.CreateBucket(bCatalog); err != nil {
		return err
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

// EachCatalog calls fn with the type, title and vault path of every
// non-reserved page, ordered by folded title, then path, within each type;
// the given types come first in their order, then any other types
// alphabetically. It reads only the catalogue bucket (a cursor walk), so
// listing 100k pages stays cheap. fn returning false stops the walk.
func (tx *Tx) EachCatalog(types []string, fn func(typ, title, path string) bool) {
	c := tx.b(bCatalog).Cursor()
	visit := func(k, v []byte, typ string) ([]byte, bool) {
		prefix := append([]byte(typ), 0)
		for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			rest := k[len(prefix):]
			i := bytes.IndexByte(rest, 0)
			if i < 0 {
				continue
			}
			if !fn(typ, string(v), string(rest[i+1:])) {
				return nil, false
			}
		}
		return k, true
	}
	listed := make(map[string]bool, len(types))
	for _, t := range types {
		listed[t] = true
		k, v := c.Seek(append([]byte(t), 0))
		if _, more := visit(k, v, t); !more {
			return
		}
	}
	for k, v := c.First(); k != nil; {
		i := bytes.IndexByte(k, 0)
		if i <= 0 { // the count key, or not an entry
			k, v = c.Next()
			continue
		}
		t := string(k[:i])
		if listed[t] {
			k, v = c.Seek(append([]byte(t), 1)) // past this type's keys
			continue
		}
		var more bool
		if k, more = visit(k, v, t); !more {
			return
		}
		if k != nil {
			v = c.Bucket().Get(k)
		}
	}
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
