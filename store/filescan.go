package store

// Read-only iteration over the files bucket for the freshness check of a
// CLI verb (index/fresh.go): it compares every tracked file with its
// record before answering, so these walk the records without allocating
// per file.

// EachFileRaw calls fn for every tracked file in path order with the
// path's bytes, which stay valid only during the call (they point into the
// store's memory map: fn must not keep or modify them). fn returning false
// stops the walk.
func (tx *Tx) EachFileRaw(fn func(path []byte, f *FileRec) bool) error {
	c := tx.b(bFiles).Cursor()
	var f FileRec
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var err error
		if f, err = decodeFileRec(v); err != nil {
			return err
		}
		if !fn(k, &f) {
			return nil
		}
	}
	return nil
}

// EachFileIn calls fn for every tracked file directly in the folder dir
// (vault-relative, "" for the vault root), in path order, skipping the
// records of its sub-folders with one seek each. fn returning false stops
// the walk.
func (tx *Tx) EachFileIn(dir string, fn func(path string, f FileRec) bool) error {
	prefix := []byte(dir)
	if dir != "" {
		prefix = append(prefix, '/')
	}
	c := tx.b(bFiles).Cursor()
	k, v := c.Seek(prefix)
	for k != nil && hasPrefixBytes(k, prefix) {
		rest := k[len(prefix):]
		if i := indexByte(rest, '/'); i >= 0 {
			// a sub-folder's records: skip past "dir/sub/" ('/'+1 is '0')
			next := append(append([]byte(nil), k[:len(prefix)+i]...), '/'+1)
			k, v = c.Seek(next)
			continue
		}
		f, err := decodeFileRec(v)
		if err != nil {
			return err
		}
		if !fn(string(k), f) {
			return nil
		}
		k, v = c.Next()
	}
	return nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}
