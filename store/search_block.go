package store

import (
	"encoding/binary"
	"math"
	"slices"
)

// The postings blocks and forward records of the search index: their
// encoding and decoding (the layout is in search.go).

// blockBound is a block's score bound: the highest tf and the lowest
// quantized length of each field (see the package comment).
type blockBound struct {
	tf  [SearchFields]uint16
	len [SearchFields]uint8
}

// emptyBound is the bound of no postings.
var emptyBound = blockBound{len: [SearchFields]uint8{255, 255, 255}}

func (b *blockBound) add(tf [SearchFields]uint16, norm [SearchFields]uint8) {
	// (unrolled: this runs for every posting a write encodes)
	if tf[0] > 0 {
		b.tf[0], b.len[0] = max(b.tf[0], tf[0]), min(b.len[0], norm[0])
	}
	if tf[1] > 0 {
		b.tf[1], b.len[1] = max(b.tf[1], tf[1]), min(b.len[1], norm[1])
	}
	if tf[2] > 0 {
		b.tf[2], b.len[2] = max(b.tf[2], tf[2]), min(b.len[2], norm[2])
	}
}

// blockHead is a parsed block header.
type blockHead struct {
	key, last uint32
	count     int
	// small: the block has no header (count ≤ smallBlock); last and
	// bound are not read (parseBlock leaves them zero)
	small   bool
	bound   blockBound
	chunks  []chunk // nil when the block is one chunk
	payload []byte  // the postings
}

// chunk is a run of a block's postings under one bound.
type chunk struct {
	count int
	last  uint32
	size  int // bytes of its postings
	bound blockBound
}

// chunkList returns the block's chunks (one for a block without a table).
func (h *blockHead) chunkList() []chunk {
	if h.chunks != nil {
		return h.chunks
	}
	if h.count == 0 {
		return nil
	}
	return []chunk{{count: h.count, last: h.last, size: len(h.payload), bound: h.bound}}
}

// parseBlock reads a block's header.
func parseBlock(v []byte, key uint32) (blockHead, error) { return parseBlockInto(v, key, nil) }

// parseBlockInto reads a block's header, its chunk table (if any) into
// chunks' storage.
func parseBlockInto(v []byte, key uint32, chunks []chunk) (blockHead, error) {
	h := blockHead{key: key}
	n, w := binary.Uvarint(v)
	if w <= 0 || n > uint64(len(v)) || n == 0 {
		return h, errCorrupt
	}
	v = v[w:]
	h.count = int(n)
	if h.count <= smallBlock {
		h.small, h.payload = true, v
		return h, nil
	}
	d, w := binary.Uvarint(v)
	if w <= 0 || d > math.MaxUint32-uint64(key) {
		return h, errCorrupt
	}
	h.last = key + uint32(d)
	v = v[w:]
	var err error
	if h.count <= searchChunk {
		if h.bound, v, err = readBound(v); err != nil {
			return h, err
		}
		h.payload = v
		return h, nil
	}
	nc := (h.count + searchChunk - 1) / searchChunk
	h.chunks = slices.Grow(chunks[:0], nc)[:nc]
	prev, bytes := key, 0
	for i := range h.chunks {
		c := &h.chunks[i]
		if i == nc-1 {
			c.count, c.last = h.count-searchChunk*(nc-1), h.last
			if c.bound, v, err = readBound(v); err != nil {
				return h, err
			}
			if prev >= h.last || bytes > len(v) {
				return h, errCorrupt
			}
			c.size = len(v) - bytes
			break
		}
		dl, w := binary.Uvarint(v)
		if w <= 0 || dl > math.MaxUint32-uint64(prev) {
			return h, errCorrupt
		}
		v = v[w:]
		size, w := binary.Uvarint(v)
		if w <= 0 || size > uint64(len(v)) {
			return h, errCorrupt
		}
		v = v[w:]
		c.count, c.last, c.size = searchChunk, prev+uint32(dl), int(size)
		prev = c.last
		bytes += c.size
		if c.bound, v, err = readBound(v); err != nil {
			return h, err
		}
	}
	h.payload = v
	return h, nil
}

// readBound reads a bound: a tf byte, then a length byte per field the
// tf holds.
func readBound(v []byte) (blockBound, []byte, error) {
	b := emptyBound
	tf, v, err := readTF(v)
	if err != nil {
		return b, v, err
	}
	b.tf = tf
	for f := range tf {
		if tf[f] > 0 {
			if len(v) == 0 {
				return b, v, errCorrupt
			}
			b.len[f], v = v[0], v[1:]
		}
	}
	return b, v, nil
}

// appendBound writes a bound (see readBound).
func appendBound(b []byte, bd blockBound) []byte {
	b = appendTF(b, bd.tf)
	for f := range bd.tf {
		if bd.tf[f] > 0 {
			b = append(b, bd.len[f])
		}
	}
	return b
}

// readTF reads a tf byte (and its escaped uvarints).
func readTF(v []byte) ([SearchFields]uint16, []byte, error) {
	var tf [SearchFields]uint16
	if len(v) == 0 {
		return tf, v, errCorrupt
	}
	c := v[0]
	v = v[1:]
	if c&0x0f != 15 {
		return [SearchFields]uint16{uint16(c >> 6), uint16(c >> 4 & 3), uint16(c & 0x0f)}, v, nil
	}
	for f := range tf {
		x, w := binary.Uvarint(v)
		if w <= 0 {
			return tf, v, errCorrupt
		}
		tf[f], v = uint16(min(x, math.MaxUint16)), v[w:]
	}
	return tf, v, nil
}

// appendTF writes a tf byte (escaped when a count does not fit).
func appendTF(b []byte, tf [SearchFields]uint16) []byte {
	t, h, x := tf[0], tf[1], tf[2]
	if t <= 3 && h <= 3 && x < 15 {
		return append(b, byte(t<<6|h<<4|x))
	}
	b = append(b, 0x0f)
	b = binary.AppendUvarint(b, uint64(t))
	b = binary.AppendUvarint(b, uint64(h))
	return binary.AppendUvarint(b, uint64(x))
}

// decodeInto appends n postings encoded after doc to out.
func decodeInto(out []SearchPosting, v []byte, n int, doc uint32) ([]SearchPosting, error) {
	if n > len(v) {
		return out, errCorrupt
	}
	out = slices.Grow(out, n)
	for i := 0; i < n; i++ {
		if len(v) >= 2 && v[0] < 0x80 && v[1]&0x0f != 15 {
			// the common case: a one-byte delta and a packed tf byte
			doc += uint32(v[0])
			c := v[1]
			out = append(out, SearchPosting{doc, [SearchFields]uint16{uint16(c >> 6), uint16(c >> 4 & 3), uint16(c & 0x0f)}})
			v = v[2:]
			continue
		}
		d, w := binary.Uvarint(v)
		if w <= 0 || len(v) <= w {
			return out, errCorrupt
		}
		doc += uint32(d)
		tf, rest, err := readTF(v[w:])
		if err != nil {
			return out, err
		}
		v = rest
		out = append(out, SearchPosting{doc, tf})
	}
	return out, nil
}

// eachPosting decodes a block without allocating.
func eachPosting(v []byte, key uint32, fn func(doc uint32, tf [SearchFields]uint32)) error {
	h, err := parseBlock(v, key)
	if err != nil {
		return err
	}
	v, doc := h.payload, key
	for i := 0; i < h.count; i++ {
		d, w := binary.Uvarint(v)
		if w <= 0 {
			return errCorrupt
		}
		doc += uint32(d)
		tf, rest, err := readTF(v[w:])
		if err != nil {
			return err
		}
		v = rest
		fn(doc, [SearchFields]uint32{uint32(tf[0]), uint32(tf[1]), uint32(tf[2])})
	}
	return nil
}

// posting is a decoded posting with its doc's quantized field lengths
// (for the block bounds); del marks a removal in an update list.
type posting struct {
	doc  uint32
	tf   [SearchFields]uint16 // saturating at 65535
	norm [SearchFields]uint8
	del  bool
}

func tf16(tf [SearchFields]uint32) [SearchFields]uint16 {
	var out [SearchFields]uint16
	for f, x := range tf {
		out[f] = uint16(min(x, math.MaxUint16))
	}
	return out
}

// decodeBlock appends a block's postings to out, with each doc's norms
// from normOf.
func decodeBlock(v []byte, keyDoc uint32, out []posting, normOf func(uint32) [SearchFields]uint8) ([]posting, error) {
	err := eachPosting(v, keyDoc, func(doc uint32, tf [SearchFields]uint32) {
		out = append(out, posting{doc: doc, tf: tf16(tf), norm: normOf(doc)})
	})
	return out, err
}

// appendBlock encodes ps (ascending, all ≥ keyDoc) as a block.
func appendBlock(b []byte, keyDoc uint32, ps []posting) []byte {
	if len(ps) <= smallBlock {
		b = binary.AppendUvarint(b, uint64(len(ps)))
		return appendPostingsTo(b, keyDoc, ps)
	}
	var buf [bulkBlock/searchChunk + 1]chunk
	chunks := addChunks(buf[:0], keyDoc, ps)
	b = appendHeader(b, len(ps), keyDoc, chunks)
	return appendPostingsTo(b, keyDoc, ps)
}

// encodeBlock is appendBlock into an arena slice of the block's size
// (the chunk list sums the postings' bytes, so they are sized once).
func (u *searchUpdate) encodeBlock(keyDoc uint32, ps []posting) []byte {
	if len(ps) <= smallBlock {
		return appendBlock(u.arena.alloc(encodedSize(keyDoc, ps)), keyDoc, ps)
	}
	var buf [bulkBlock/searchChunk + 1]chunk
	chunks := addChunks(buf[:0], keyDoc, ps)
	n := headerMax + len(chunks)*chunkMax
	for _, c := range chunks {
		n += c.size
	}
	b := appendHeader(u.arena.alloc(n), len(ps), keyDoc, chunks)
	return appendPostingsTo(b, keyDoc, ps)
}

// addChunks extends chunks (of postings ending at doc prev) with ps: the
// last chunk is filled up to searchChunk postings, then new ones follow.
func addChunks(chunks []chunk, prev uint32, ps []posting) []chunk {
	for len(ps) > 0 {
		if len(chunks) == 0 || chunks[len(chunks)-1].count >= searchChunk {
			chunks = append(chunks, chunk{bound: emptyBound})
		}
		c := &chunks[len(chunks)-1]
		n := min(len(ps), searchChunk-c.count)
		size, bd := c.size, c.bound
		for _, p := range ps[:n] {
			if d := p.doc - prev; d < 0x80 && p.tf[0] <= 3 && p.tf[1] <= 3 && p.tf[2] < 15 {
				size += 2
			} else {
				size += uvarintLen(d) + tfLen(p.tf)
			}
			prev = p.doc
			bd.add(p.tf, p.norm)
		}
		c.count += n
		c.size, c.bound, c.last = size, bd, prev
		ps = ps[n:]
	}
	return chunks
}

// appendHeader writes a block header for chunks (which hold count
// postings after key; every chunk but the last holds searchChunk).
func appendHeader(b []byte, count int, key uint32, chunks []chunk) []byte {
	b = binary.AppendUvarint(b, uint64(count))
	if count <= smallBlock {
		return b
	}
	last := chunks[len(chunks)-1].last
	b = binary.AppendUvarint(b, uint64(last-key))
	if len(chunks) == 1 {
		return appendBound(b, chunks[0].bound)
	}
	prev := key
	for i, c := range chunks {
		if i < len(chunks)-1 {
			b = binary.AppendUvarint(b, uint64(c.last-prev))
			b = binary.AppendUvarint(b, uint64(c.size))
		}
		b = appendBound(b, c.bound)
		prev = c.last
	}
	return b
}

// headerMax is the most a block header takes, and chunkMax the most a
// chunk table entry takes.
const (
	headerMax = 3*binary.MaxVarintLen32 + 1 + 3*binary.MaxVarintLen16 + SearchFields
	chunkMax  = 3*binary.MaxVarintLen32 + 1 + 3*binary.MaxVarintLen16 + SearchFields
)

// tfLen is the size of a tf byte and its escape.
func tfLen(tf [SearchFields]uint16) int {
	if tf[0] <= 3 && tf[1] <= 3 && tf[2] < 15 {
		return 1
	}
	return 1 + uvarintLen(uint32(tf[0])) + uvarintLen(uint32(tf[1])) + uvarintLen(uint32(tf[2]))
}

// appendPostingsTo encodes postings after prev (the key's doc or the last
// doc already in the block).
func appendPostingsTo(b []byte, prev uint32, ps []posting) []byte {
	for _, p := range ps {
		if d := p.doc - prev; d < 0x80 && p.tf[0] <= 3 && p.tf[1] <= 3 && p.tf[2] < 15 {
			// the common case: a one-byte delta and a packed tf byte
			b = append(b, byte(d), byte(p.tf[0]<<6|p.tf[1]<<4|p.tf[2]))
		} else {
			b = binary.AppendUvarint(b, uint64(d))
			b = appendTF(b, p.tf)
		}
		prev = p.doc
	}
	return b
}

// encodedSize returns the size of postings encoded after prev, plus room
// for a block header.
func encodedSize(prev uint32, ps []posting) int {
	n := headerMax + (len(ps)/searchChunk+2)*chunkMax
	for _, p := range ps {
		if d := p.doc - prev; d < 0x80 && p.tf[0] <= 3 && p.tf[1] <= 3 && p.tf[2] < 15 {
			n += 2
		} else {
			n += uvarintLen(d) + tfLen(p.tf)
		}
		prev = p.doc
	}
	return n
}

func uvarintLen(x uint32) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

func postKey(id, doc uint32) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint32(k, id)
	binary.BigEndian.PutUint32(k[4:], doc)
	return k
}

// fwdRec is a decoded forward record (names skipped).
type fwdRec struct {
	lens  [SearchFields]uint32
	terms []uint32 // ascending
}

func decodeFwd(v []byte) (fwdRec, error) {
	var f fwdRec
	r := reader{b: v}
	for i := range f.lens {
		f.lens[i] = uint32(r.uvarint())
	}
	names := r.uvarint()
	for i := uint64(0); i < names && r.err == nil; i++ {
		r.bytes(1)
		m := r.uvarint()
		for j := uint64(0); j < m && r.err == nil; j++ {
			r.uvarint()
		}
	}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		return f, errCorrupt
	}
	f.terms = make([]uint32, n)
	prev := uint32(0)
	for i := range f.terms {
		prev += uint32(r.uvarint())
		f.terms[i] = prev
	}
	return f, r.err
}

func appendFwd(b []byte, lens [SearchFields]uint32, names []SearchName, ids, terms []uint32) []byte {
	for _, l := range lens {
		b = binary.AppendUvarint(b, uint64(l))
	}
	names = names[:min(len(names), maxSearchNames)]
	n := 0
	for _, nm := range names {
		if len(nm.Terms) > 0 {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	for _, nm := range names {
		if len(nm.Terms) == 0 {
			continue
		}
		ts := nm.Terms[:min(len(nm.Terms), maxNameTerms)]
		b = append(b, nm.Kind)
		b = binary.AppendUvarint(b, uint64(len(ts)))
		for _, t := range ts {
			b = binary.AppendUvarint(b, uint64(ids[t]))
		}
	}
	b = binary.AppendUvarint(b, uint64(len(terms)))
	prev := uint32(0)
	for _, t := range terms {
		b = binary.AppendUvarint(b, uint64(t-prev))
		prev = t
	}
	return b
}
