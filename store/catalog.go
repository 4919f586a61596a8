package store

import "bytes"

// CatalogEntry is one non-reserved page as wiki/index.md lists it.
type CatalogEntry struct {
	Doc    uint32
	Type   string // as stored (a page type, or a hand-written type)
	Folded string // Fold(title): the by_type sort key
	Title  string
	Path   string
}

// EachCatalogEntry calls fn for every non-reserved page in by_type order
// (type, folded title, doc), decoding only the id, path and title at the
// head of each page record, so that listing 100k pages stays cheap. fn
// returning false stops the walk. A record that does not decode is an
// error.
func (tx *Tx) EachCatalogEntry(fn func(e CatalogEntry) bool) error {
	pages := tx.b(bPages)
	c := tx.b(bByType).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		// key: type · fold(title) · doc (4 bytes)
		if len(k) < 6 {
			continue
		}
		doc := getU32(k[len(k)-4:])
		head := k[:len(k)-5]
		i := bytes.IndexByte(head, 0)
		if i < 0 {
			continue
		}
		v := pages.Get(u32(doc))
		if v == nil {
			continue
		}
		if v[0] != pageCodecVersion {
			return errCorrupt
		}
		r := reader{b: v[1:]}
		_ = r.str() // id
		p, t := r.str(), r.str()
		if r.err != nil {
			return r.err
		}
		if !fn(CatalogEntry{Doc: doc, Type: string(head[:i]), Folded: string(head[i+1:]), Title: t, Path: p}) {
			return nil
		}
	}
	return nil
}
