package search

// FNV-1a, computed by the tokenizer while it scans a word.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnv(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

// wordTable maps source words to their cached analysis. It is an
// open-addressing hash table whose keys live in one byte arena, so a
// lookup touches one slot and one key, where a Go map of strings chases a
// pointer per key; word lookups are the tokenizer's hottest path.
type wordTable struct {
	slots []wordSlot
	keys  []byte
	n     int
	max   int // the most slots it grows to
}

type wordSlot struct {
	hash uint32
	off  uint32
	len  uint32 // 0 = empty
	val  int32
	alt  int32 // a second value (the surface form's term), -1 for none
}

// newWordTable returns a table that grows to size slots (a power of two)
// as words come: a short-lived process analyzing one query does not pay
// for the table a reindex needs.
func newWordTable(size int) *wordTable {
	n := min(size, 1<<10)
	return &wordTable{slots: make([]wordSlot, n), keys: make([]byte, 0, n*8), max: size}
}

// get returns the values stored for key.
func (t *wordTable) get(key string) (val, alt int32, ok bool) { return t.getHashed(key, fnv(key)) }

// getHashed is get with the key's hash (fnv) already computed.
func (t *wordTable) getHashed(key string, h uint64) (val, alt int32, ok bool) {
	return lookup(t, key, h)
}

// getHashedBytes is getHashed for a key in a byte slice (not copied into
// a string).
func (t *wordTable) getHashedBytes(key []byte, h uint64) (val, alt int32, ok bool) {
	return lookup(t, key, h)
}

// lookup is the probe behind getHashed and getHashedBytes: one body for a
// key held as a string or as bytes (the comparison converts without
// copying in either instantiation).
func lookup[K string | []byte](t *wordTable, key K, h uint64) (val, alt int32, ok bool) {
	h = mix(h)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.len == 0 {
			return 0, 0, false
		}
		if s.hash == uint32(h>>32) && int(s.len) == len(key) && string(t.keys[s.off:s.off+s.len]) == string(key) {
			return s.val, s.alt, true
		}
	}
}

// put stores val and alt for a key that is not in the table (empty keys
// are not stored). A full table (half its slots used) or key arena is
// cleared first.
func (t *wordTable) put(key string, val, alt int32) { t.putHashed(key, fnv(key), val, alt) }

// mix spreads FNV's low bits, which index the table.
func mix(h uint64) uint64 {
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// putHashed is put with the key's hash (fnv) already computed.
func (t *wordTable) putHashed(key string, h uint64, val, alt int32) {
	h = mix(h)
	if key == "" {
		return
	}
	if t.n*2 >= len(t.slots) && len(t.slots) < t.max && len(t.keys)+len(key) < 1<<31 {
		t.grow()
	} else if t.n*2 >= len(t.slots) || len(t.keys)+len(key) >= 1<<31 {
		clear(t.slots)
		t.keys = t.keys[:0]
		t.n = 0
	}
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i].len != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = wordSlot{hash: uint32(h >> 32), off: uint32(len(t.keys)), len: uint32(len(key)), val: val, alt: alt}
	t.keys = append(t.keys, key...)
	t.n++
}

// grow doubles the table, keeping its entries.
func (t *wordTable) grow() {
	old := t.slots
	t.slots = make([]wordSlot, 2*len(old))
	mask := uint64(len(t.slots) - 1)
	for _, sl := range old {
		if sl.len == 0 {
			continue
		}
		h := mix(fnv(string(t.keys[sl.off : sl.off+sl.len])))
		i := h & mask
		for t.slots[i].len != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = sl
	}
}
