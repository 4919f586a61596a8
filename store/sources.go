package store

// EachCite calls fn for every (source, citing page) pair of the cites
// bucket, in key order: key is the folded vault path of the source as the
// page cites it (see index.SourceKey), doc the citing page. The reserved
// top files never cite. fn returning false stops the walk.
func (tx *Tx) EachCite(fn func(key string, doc uint32) bool) {
	c := tx.b(bCites).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) < 5 || k[len(k)-5] != 0 {
			continue
		}
		if !fn(string(k[:len(k)-5]), getU32(k[len(k)-4:])) {
			return
		}
	}
}
