package search

import "hash/maphash"

// wordTable maps source words to their cached analysis. It is an
// open-addressing hash table whose keys live in one byte arena, so a
// lookup touches one slot and one key, where a Go map of strings chases a
// pointer per key; word lookups are the tokenizer's hottest path.
type wordTable struct {
	seed  maphash.Seed
	slots []wordSlot
	keys  []byte
	n     int
}

type wordSlot struct {
	hash uint32
	off  uint32
	len  uint32 // 0 = empty
	val  int32
}

func newWordTable(size int) *wordTable {
	return &wordTable{seed: maphash.MakeSeed(), slots: make([]wordSlot, size), keys: make([]byte, 0, size*8)}
}

// get returns the value stored for key.
func (t *wordTable) get(key string) (int32, bool) {
	h := maphash.String(t.seed, key)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.len == 0 {
			return 0, false
		}
		if s.hash == uint32(h>>32) && int(s.len) == len(key) && string(t.keys[s.off:s.off+s.len]) == key {
			return s.val, true
		}
	}
}

// put stores val for a key that is not in the table (empty keys are not
// stored). A full table (half its slots used) or key arena is cleared
// first.
func (t *wordTable) put(key string, val int32) {
	if key == "" {
		return
	}
	if t.n*2 >= len(t.slots) || len(t.keys)+len(key) >= 1<<31 {
		clear(t.slots)
		t.keys = t.keys[:0]
		t.n = 0
	}
	h := maphash.String(t.seed, key)
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i].len != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = wordSlot{hash: uint32(h >> 32), off: uint32(len(t.keys)), len: uint32(len(key)), val: val}
	t.keys = append(t.keys, key...)
	t.n++
}
