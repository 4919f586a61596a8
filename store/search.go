package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// The search index (docs/search.md). Package search decides what a term is and
// how documents are ranked; this file decides how the inverted index is
// stored. Every bucket is derived (dropped and rebuilt by reindex).
//
//	search_meta     "version" → analyzer version (string, set by package search)
//	                "x:" + key → a value of package search's (SetSearchMeta)
//	                "next_term" → u32 last term id handed out
//	                "stats" → u32 docs, u32 highest doc ever indexed, 3 × u64 total
//	                field lengths
//	search_terms    term bytes → u32 term id
//	search_post     term id + first doc (4+4 bytes BE) → postings block
//	search_fwd      doc → forward record: what the doc is indexed under, so it
//	                can be replaced or removed without re-reading its old text,
//	                and its names for re-ranking
//	search_norms    u32 (doc >> 8) → 256 × 3 quantized field lengths
//	search_stage, search_stage_terms
//	                a bulk build's postings blocks and new terms until they
//	                are moved into search_post and search_terms (searchstage.go)
//
// A postings block holds documents of one term in ascending doc order,
// each ≥ the block key's doc and < the next block key's doc of the term:
//
//	uvarint count
//	count ≤ smallBlock: the postings follow at once (a reader works out
//	  the last doc and the bound from them and the norms)
//	else:
//	  uvarint last doc − key doc
//	  count ≤ searchChunk (one chunk): the block's bound
//	  else ⌈count / searchChunk⌉ chunk entries, all but the last: uvarint
//	    last doc − the previous chunk's last doc (the key doc for the
//	    first), uvarint bytes of its postings, bound; the last: its bound
//	    only (its last doc is the block's, its postings the rest)
//	count × posting: uvarint doc delta (the first relative to the key's doc,
//	  then to the previous doc), then a term-frequency byte c:
//	  c&0x0f < 15: title tf = c>>6, heading tf = c>>4&3, body tf = c&0x0f
//	  c&0x0f == 15: three uvarints follow: title, heading, body tf
//
// A bound is the highest tf of each field among its postings, as a tf
// byte, then for each field with a tf > 0 one byte: the lowest quantized
// length of that field among the docs with a tf > 0 in it (a field
// without one reads as 255).
//
// A chunk is a run of searchChunk consecutive postings (the last of a
// block: the rest, 1 to searchChunk). Its bound lets a scorer bound what
// any document of the chunk can score (more tf, a shorter field: a higher
// score), skip the chunk without decoding it, and decode only the chunk
// it needs (SearchBlocks lists chunks). Bounds are exact: every write
// that changes a block recomputes them from its postings and the norms.
//
// A term's document frequency is the sum of its blocks' counts, read at
// query time, so adding a page rewrites no per-term counter.
//
// A forward record is:
//
//	3 × uvarint field length
//	uvarint names, then per name: u8 kind, uvarint n, n × uvarint term id
//	uvarint terms, then the term ids ascending, delta-coded as uvarints
//
// A norms chunk holds, for doc d, bytes [3·(d&255), 3·(d&255)+3): each a
// field length quantized by QuantizeLength (0 = no document).
//
// Writes go in key order in each bucket (random inserts into one large
// bbolt node are quadratic). A batch of new pages above every indexed doc
// (a reindex) writes each term's postings as new blocks without reading
// the old ones; smaller additions append into a term's last block while it
// has room, without decoding it. One page edit touches only the blocks of
// that page's terms, its forward record and one norms chunk.
//
// Dictionary entries are not removed when a term loses its last posting
// (its id then has no blocks, and lookups report it absent); reindex
// starts the dictionary afresh.

// SearchFields is the number of ranked fields: 0 title and aliases, 1
// headings and tags, 2 body.
const SearchFields = 3

var (
	bSearchMeta  = []byte("search_meta")
	bSearchTerms = []byte("search_terms")
	bSearchPost  = []byte("search_post")
	bSearchFwd   = []byte("search_fwd")
	bSearchNorms = []byte("search_norms")
)

func init() {
	registerDerived("search_meta", "search_terms", "search_post", "search_fwd", "search_norms")
}

const (
	// searchChunk is the number of postings under one bound in a block.
	searchChunk = 128
	// smallBlock is the most postings a block holds without a header:
	// the bound of so few is cheaper to work out than to store (most of a
	// vault's terms are in one to four pages).
	smallBlock = 4
	// searchBlock is the size blocks are cut to; a block that grows past
	// searchBlockMax by inserts is split into searchBlock-sized ones.
	searchBlock    = 128
	searchBlockMax = 256
	// bulkDocs is the batch size from which new docs are written as new
	// blocks (of up to bulkBlock postings) without reading the terms'
	// last blocks.
	bulkDocs      = 256
	bulkBlock     = 1024
	normsPerChunk = 256
	// maxSearchNames and maxNameTerms bound what is stored of a doc's
	// names.
	maxSearchNames = 384
	maxNameTerms   = 24
)

// SearchStats are the collection statistics BM25 needs.
type SearchStats struct {
	Docs   uint32               // indexed documents
	MaxDoc uint32               // the highest doc ever indexed
	Len    [SearchFields]uint64 // total length of each field over all documents
}

// AvgLen returns the mean length of field f (at least 1).
func (s SearchStats) AvgLen(f int) float64 {
	if s.Docs == 0 || s.Len[f] == 0 {
		return 1
	}
	return float64(s.Len[f]) / float64(s.Docs)
}

// SearchTF is one term of a document with its frequency in each field.
type SearchTF struct {
	Term uint32               // index into SearchBatch.Terms
	TF   [SearchFields]uint32 // occurrences per field
}

// SearchName is a name of a document (title, alias, heading…) as a set of
// terms; Kind is the caller's.
type SearchName struct {
	Kind  uint8
	Terms []uint32 // indexes into SearchBatch.Terms
}

// SearchDoc is one document to index: its field lengths, distinct terms
// and names.
type SearchDoc struct {
	Doc   uint32
	Len   [SearchFields]uint32
	Terms []SearchTF // distinct terms, any order
	Names []SearchName
}

// SearchBatch is a set of documents to add or replace; Terms are the
// batch's distinct term strings, referenced by index from the documents.
type SearchBatch struct {
	Terms []string
	Docs  []SearchDoc
}

// SearchTerm is a term of the dictionary.
type SearchTerm struct {
	Term string
	ID   uint32
	DF   uint32 // documents holding the term
}

// QuantizeLength maps a field length to one byte: exact below 48, then
// logarithmic in steps of 4% (lengths up to about 160,000 tokens are told
// apart). 0 stays 0.
func QuantizeLength(n uint32) uint8 {
	if n < 48 {
		return uint8(n)
	}
	q := 48 + int(math.Log(float64(n)/48)/math.Log(1.04))
	return uint8(min(q, 255))
}

// lengthTable[q] is the representative length of quantized value q.
var lengthTable = func() (t [256]float32) {
	for q := range t {
		if q < 48 {
			t[q] = float32(q)
		} else {
			t[q] = float32(48 * math.Pow(1.04, float64(q-48)+0.5))
		}
	}
	return
}()

// DequantizeLength returns the length a quantized value stands for.
func DequantizeLength(q uint8) float32 { return lengthTable[q] }

// SearchReady reports whether the search buckets exist. A store last
// opened for writing by a synapse without search lacks them until it is
// opened for writing again; readers must not touch the index before.
func (tx *Tx) SearchReady() bool {
	for _, b := range [][]byte{bSearchMeta, bSearchTerms, bSearchPost, bSearchFwd, bSearchNorms} {
		if tx.b(b) == nil {
			return false
		}
	}
	return true
}

// SearchVersion returns the analyzer version the index was built with
// ("" for an empty or never-built index).
func (tx *Tx) SearchVersion() string {
	return string(tx.b(bSearchMeta).Get([]byte("version")))
}

// SetSearchVersion records the analyzer version.
func (tx *Tx) SetSearchVersion(v string) error {
	if tx.SearchVersion() == v {
		return nil
	}
	return tx.b(bSearchMeta).Put([]byte("version"), []byte(v))
}

// SearchMeta returns a value package search keeps in search_meta under
// key (nil when absent); keys "version", "next_term" and "stats" are the
// store's own.
func (tx *Tx) SearchMeta(key string) []byte {
	return tx.b(bSearchMeta).Get([]byte("x:" + key))
}

// SetSearchMeta sets (nil: deletes) a value of package search's in
// search_meta.
func (tx *Tx) SetSearchMeta(key string, v []byte) error {
	if v == nil {
		return tx.b(bSearchMeta).Delete([]byte("x:" + key))
	}
	return tx.b(bSearchMeta).Put([]byte("x:"+key), v)
}

// ResetSearch empties the search index: every search bucket is dropped
// and created again, the rest of the store is left alone.
func (tx *Tx) ResetSearch() error {
	tx.forgetStagedTerms()
	for _, name := range [][]byte{bSearchMeta, bSearchTerms, bSearchPost, bSearchFwd, bSearchNorms, bSearchStage, bSearchStageTerms} {
		if tx.b(name) != nil {
			if err := tx.tx.DeleteBucket(name); err != nil {
				return fmt.Errorf("drop %s: %w", name, err)
			}
		}
		b, err := tx.tx.CreateBucket(name)
		if err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
		if slices.ContainsFunc(sequentialBuckets, func(n []byte) bool { return bytes.Equal(n, name) }) {
			b.FillPercent = 0.9
		}
	}
	return nil
}

// HasSearchDoc reports whether doc is in the search index.
func (tx *Tx) HasSearchDoc(doc uint32) bool { return tx.b(bSearchFwd).Get(u32(doc)) != nil }

// SearchStats returns the collection statistics.
func (tx *Tx) SearchStats() SearchStats {
	var s SearchStats
	v := tx.b(bSearchMeta).Get([]byte("stats"))
	if len(v) != 8+8*SearchFields {
		return s
	}
	s.Docs = binary.BigEndian.Uint32(v)
	s.MaxDoc = binary.BigEndian.Uint32(v[4:])
	for f := range s.Len {
		s.Len[f] = binary.BigEndian.Uint64(v[8+8*f:])
	}
	return s
}

func (tx *Tx) putSearchStats(s SearchStats) error {
	b := make([]byte, 8+8*SearchFields)
	binary.BigEndian.PutUint32(b, s.Docs)
	binary.BigEndian.PutUint32(b[4:], s.MaxDoc)
	for f := range s.Len {
		binary.BigEndian.PutUint64(b[8+8*f:], s.Len[f])
	}
	return tx.b(bSearchMeta).Put([]byte("stats"), b)
}

// LookupSearchTerm returns the dictionary entry of a term held by at least
// one document.
func (tx *Tx) LookupSearchTerm(term string) (SearchTerm, bool) {
	v := tx.b(bSearchTerms).Get([]byte(term))
	if len(v) != 4 {
		return SearchTerm{}, false
	}
	st := SearchTerm{Term: term, ID: getU32(v)}
	st.DF = tx.searchDF(st.ID)
	return st, st.DF > 0
}

// SearchTermID returns the dictionary id of a term, whether or not any
// document still holds it (SearchBlocks then returns no blocks).
func (tx *Tx) SearchTermID(term string) (uint32, bool) {
	v := tx.b(bSearchTerms).Get([]byte(term))
	if len(v) != 4 {
		return 0, false
	}
	return getU32(v), true
}

// SearchTermsWithPrefix returns up to limit terms starting with prefix
// that some document holds, in byte order.
func (tx *Tx) SearchTermsWithPrefix(prefix string, limit int) []SearchTerm {
	var out []SearchTerm
	c := tx.b(bSearchTerms).Cursor()
	p := []byte(prefix)
	for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p) && len(out) < limit; k, v = c.Next() {
		if len(v) != 4 {
			continue
		}
		st := SearchTerm{Term: string(k), ID: getU32(v)}
		if st.DF = tx.searchDF(st.ID); st.DF > 0 {
			out = append(out, st)
		}
	}
	return out
}

// SearchDF returns the number of documents holding term id (0 for an
// unknown id), summing its blocks' counts without parsing them further.
func (tx *Tx) SearchDF(id uint32) uint32 { return tx.searchDF(id) }

// searchDF sums the counts of a term's blocks.
func (tx *Tx) searchDF(id uint32) uint32 {
	c := tx.b(bSearchPost).Cursor()
	prefix := u32(id)
	df := uint32(0)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		n, _ := binary.Uvarint(v)
		df += uint32(n)
	}
	return df
}

// SearchPostings calls fn for every document holding term id, in
// ascending doc order, with the term's frequency in each field.
func (tx *Tx) SearchPostings(id uint32, fn func(doc uint32, tf [SearchFields]uint32)) error {
	c := tx.b(bSearchPost).Cursor()
	prefix := u32(id)
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != 8 {
			return fmt.Errorf("search postings of term %d: %w", id, errCorrupt)
		}
		if err := eachPosting(v, getU32(k[4:]), fn); err != nil {
			return fmt.Errorf("search postings of term %d: %w", id, err)
		}
	}
	return nil
}

// SearchPosting is one decoded posting.
type SearchPosting struct {
	Doc uint32
	TF  [SearchFields]uint16 // saturating at 65535
}

// SearchPostingBlocks calls fn with the postings of term id block by block,
// in ascending doc order. The slice is reused between calls; decoding a
// whole block into it keeps the scorer's loop free of calls.
func (tx *Tx) SearchPostingBlocks(id uint32, fn func([]SearchPosting)) error {
	c := tx.b(bSearchPost).Cursor()
	prefix := u32(id)
	var buf []SearchPosting
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != 8 {
			return fmt.Errorf("search postings of term %d: %w", id, errCorrupt)
		}
		h, err := parseBlock(v, getU32(k[4:]))
		if err == nil {
			buf, err = decodeInto(buf[:0], h.payload, h.count, h.key)
		}
		if err != nil {
			return fmt.Errorf("search postings of term %d: %w", id, err)
		}
		fn(buf)
	}
	return nil
}

// SearchBlock is one postings block of a term, not yet decoded: what a
// scorer needs to decide whether to decode it.
type SearchBlock struct {
	First, Last uint32 // every doc of the block is in [First, Last]
	Count       uint32
	// MaxTF is the highest tf of each field in the block; MinLen the
	// lowest quantized length (QuantizeLength) of each field among the
	// block's docs with a tf > 0 in that field (255 when none has one).
	// No doc of the block has more of the term in a shorter field.
	MaxTF  [SearchFields]uint16
	MinLen [SearchFields]uint8
	base   uint32 // the doc the first posting's delta is relative to
	data   []byte // encoded postings, valid for the transaction
}

// SearchBlocks appends the blocks of term id to dst — a chunk of a stored
// block each — in doc order, without decoding their postings; the sum of
// their counts is the term's document frequency. Blocks are valid for the
// life of the transaction.
func (tx *Tx) SearchBlocks(id uint32, dst []SearchBlock) ([]SearchBlock, error) {
	c := tx.b(bSearchPost).Cursor()
	prefix := u32(id)
	var scratch []chunk
	var norms *SearchNorms
	var ps []SearchPosting
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != 8 {
			return dst, fmt.Errorf("search postings of term %d: %w", id, errCorrupt)
		}
		h, err := parseBlockInto(v, getU32(k[4:]), scratch[:0])
		if cap(h.chunks) > cap(scratch) {
			scratch = h.chunks
		}
		if err == nil && h.small {
			// no stored bound: the postings' own, with their norms
			if ps, err = decodeInto(ps[:0], h.payload, h.count, h.key); err == nil && len(ps) > 0 {
				if norms == nil {
					norms = tx.SearchNorms()
				}
				h.bound = emptyBound
				for _, p := range ps {
					h.bound.add(p.TF, norms.Get(p.Doc))
				}
				h.last = ps[len(ps)-1].Doc
			}
		}
		if err != nil {
			return dst, fmt.Errorf("search postings of term %d: %w", id, err)
		}
		if h.chunks == nil {
			dst = append(dst, SearchBlock{First: h.key, Last: h.last, Count: uint32(h.count),
				MaxTF: h.bound.tf, MinLen: h.bound.len, base: h.key, data: h.payload})
			continue
		}
		first, base, data := h.key, h.key, h.payload
		for _, c := range h.chunks {
			dst = append(dst, SearchBlock{First: first, Last: c.last, Count: uint32(c.count),
				MaxTF: c.bound.tf, MinLen: c.bound.len, base: base, data: data[:c.size]})
			first, base, data = c.last+1, c.last, data[c.size:]
		}
	}
	return dst, nil
}

// Decode appends the block's postings to dst, in doc order.
func (b *SearchBlock) Decode(dst []SearchPosting) ([]SearchPosting, error) {
	out, err := decodeInto(dst, b.data, int(b.Count), b.base)
	if err != nil {
		return out, fmt.Errorf("search postings block at doc %d: %w", b.First, err)
	}
	return out, nil
}

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

// SearchNorms reads quantized field lengths by doc, caching norms chunks
// for the life of the transaction.
type SearchNorms struct {
	b      *bolt.Bucket
	chunks [][]byte // by chunk number; nil until read
	read   []bool
}

// SearchNorms returns a norms reader for this transaction.
func (tx *Tx) SearchNorms() *SearchNorms { return &SearchNorms{b: tx.b(bSearchNorms)} }

// NormsPerChunk is the number of docs whose norms share one chunk.
const NormsPerChunk = normsPerChunk

// Chunk returns the norms of docs [c·NormsPerChunk, (c+1)·NormsPerChunk):
// 3 bytes per doc, or nil when none of them is indexed. Scorers index it
// directly in their inner loop.
func (n *SearchNorms) Chunk(c uint32) []byte {
	if int(c) >= len(n.chunks) {
		grow := int(c) + 1 + len(n.chunks)
		n.chunks = append(n.chunks, make([][]byte, grow-len(n.chunks))...)
		n.read = append(n.read, make([]bool, grow-len(n.read))...)
	}
	if !n.read[c] {
		n.chunks[c], n.read[c] = n.b.Get(u32(c)), true
	}
	return n.chunks[c]
}

// Get returns the quantized field lengths of doc (zeros when unknown).
func (n *SearchNorms) Get(doc uint32) [SearchFields]uint8 {
	v := n.Chunk(doc / normsPerChunk)
	i := int(doc%normsPerChunk) * SearchFields
	if i+SearchFields > len(v) {
		return [SearchFields]uint8{}
	}
	return [SearchFields]uint8{v[i], v[i+1], v[i+2]}
}

// EachSearchName calls fn with each stored name of doc: its kind and term
// ids. The slice is reused between calls.
func (tx *Tx) EachSearchName(doc uint32, fn func(kind uint8, terms []uint32)) error {
	v := tx.b(bSearchFwd).Get(u32(doc))
	if v == nil {
		return nil
	}
	r := reader{b: v}
	for range SearchFields {
		r.uvarint()
	}
	n := r.uvarint()
	var ts []uint32
	for i := uint64(0); i < n && r.err == nil; i++ {
		kind := r.bytes(1)
		m := r.uvarint()
		if r.err != nil || m > uint64(len(r.b)) {
			break
		}
		ts = ts[:0]
		for j := uint64(0); j < m; j++ {
			ts = append(ts, uint32(r.uvarint()))
		}
		if r.err == nil {
			fn(kind[0], ts)
		}
	}
	if r.err != nil {
		return fmt.Errorf("search forward record of doc %d: %w", doc, r.err)
	}
	return nil
}

// SearchDocTerms returns the term ids a document is indexed under and its
// field lengths (for tests and diagnostics).
func (tx *Tx) SearchDocTerms(doc uint32) ([]uint32, [SearchFields]uint32, bool, error) {
	v := tx.b(bSearchFwd).Get(u32(doc))
	if v == nil {
		return nil, [SearchFields]uint32{}, false, nil
	}
	f, err := decodeFwd(v)
	return f.terms, f.lens, err == nil, err
}

// SearchIndexStats describes the size of the search index.
type SearchIndexStats struct {
	Terms, Blocks, Docs int
	Bytes               int64 // keys and values of the search buckets
}

// SearchIndexSize walks the search buckets and sums their keys and values.
func (tx *Tx) SearchIndexSize() SearchIndexStats {
	var s SearchIndexStats
	for _, name := range [][]byte{bSearchMeta, bSearchTerms, bSearchPost, bSearchFwd, bSearchNorms, bSearchStage, bSearchStageTerms} {
		if tx.b(name) == nil {
			continue
		}
		c := tx.b(name).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			s.Bytes += int64(len(k) + len(v))
			switch string(name) {
			case string(bSearchTerms):
				s.Terms++
			case string(bSearchPost):
				s.Blocks++
			case string(bSearchFwd):
				s.Docs++
			}
		}
	}
	return s
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

// arena hands out byte slices for values that must stay untouched until
// the transaction commits (bbolt keeps references to them), in a few big
// allocations instead of one per value.
type arena struct{ buf []byte }

// alloc returns an empty slice with capacity n carved from the arena.
func (a *arena) alloc(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(n, 256<<10))
	}
	start := len(a.buf)
	a.buf = a.buf[:start+n]
	return a.buf[start : start : start+n]
}

// searchUpdate applies one batch's changes, each bucket in key order.
type searchUpdate struct {
	tx    *Tx
	stats SearchStats
	arena arena
	norms *SearchNorms // the stored norms, read before the batch writes its own
}

// norm returns the stored quantized field lengths of doc: for a doc the
// batch does not touch, its current lengths (postings of touched docs are
// all replaced or removed by the batch's ops, which carry their own).
func (u *searchUpdate) norm(doc uint32) [SearchFields]uint8 {
	if u.norms == nil {
		u.norms = u.tx.SearchNorms()
	}
	return u.norms.Get(doc)
}

func (tx *Tx) newSearchUpdate() *searchUpdate {
	return &searchUpdate{tx: tx, stats: tx.SearchStats()}
}

// oldDoc returns the forward record of doc, if it is indexed.
func (u *searchUpdate) oldDoc(doc uint32) (fwdRec, bool, error) {
	v := u.tx.b(bSearchFwd).Get(u32(doc))
	if v == nil {
		return fwdRec{}, false, nil
	}
	f, err := decodeFwd(v)
	if err != nil {
		return f, false, fmt.Errorf("search forward record of doc %d: %w", doc, err)
	}
	return f, true, nil
}

func (u *searchUpdate) unstat(old fwdRec) {
	if u.stats.Docs > 0 {
		u.stats.Docs--
	}
	for f := range old.lens {
		u.stats.Len[f] -= min(u.stats.Len[f], uint64(old.lens[f]))
	}
}

// tentry is one (term, doc) of a batch, the doc as its position in the
// batch.
type tentry struct {
	id, slot uint32
	tf       [SearchFields]uint16
}

// entryPool keeps the large (term, doc) buffers between batches.
var entryPool sync.Pool

func getEntries(n int) *[]tentry {
	if p, ok := entryPool.Get().(*[]tentry); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]tentry, n)
	return &s
}

// radixSortByID sorts a by term id, stably, 8 bits per pass (LSD), with
// tmp (of the same length) as scratch, and returns the sorted slice.
func radixSortByID(a, tmp []tentry) []tentry {
	maxKey := uint32(0)
	for i := range a {
		maxKey = max(maxKey, a[i].id)
	}
	for shift := uint(0); shift < 32 && maxKey>>shift > 0; shift += 8 {
		var count [257]int
		for i := range a {
			count[(a[i].id>>shift)&0xff+1]++
		}
		for j := 1; j < len(count); j++ {
			count[j] += count[j-1]
		}
		for i := range a {
			k := (a[i].id >> shift) & 0xff
			tmp[count[k]] = a[i]
			count[k]++
		}
		a, tmp = tmp, a
	}
	return a
}

// PutSearchDocs adds the batch's documents to the search index, replacing
// earlier versions of the same docs.
func (tx *Tx) PutSearchDocs(b *SearchBatch) error {
	if len(b.Docs) == 0 {
		return nil
	}
	u := tx.newSearchUpdate()
	// docs in ascending order; a doc given twice: the later version wins
	order := make([]int, 0, len(b.Docs))
	for i := range b.Docs {
		order = append(order, i)
	}
	sort.SliceStable(order, func(i, j int) bool { return b.Docs[order[i]].Doc < b.Docs[order[j]].Doc })
	docs := order[:0]
	for x, i := range order {
		if x+1 < len(order) && b.Docs[order[x+1]].Doc == b.Docs[i].Doc {
			continue
		}
		docs = append(docs, i)
	}
	docNums := make([]uint32, len(docs))
	for x, i := range docs {
		docNums[x] = b.Docs[i].Doc
	}
	// a bulk batch (a reindex, an import) of docs all above every indexed
	// doc writes each term's postings as new blocks without looking at
	// the term's existing ones: a partly filled block per term and batch
	// is cheaper than a B+tree seek per term and batch. Its blocks and new
	// terms are staged (searchstage.go), and while anything is staged
	// every batch that only adds docs above the rest stages its own; any
	// other write moves the stage into place first.
	staged := tx.SearchStaged()
	bulk := (len(docs) >= bulkDocs || staged) && docNums[0] > u.stats.MaxDoc
	var st *stagedTerms // staging: the run's buckets and the terms staged before
	if bulk && tx.canStage(staged) {
		var err error
		if st, err = tx.stageRun(staged, docNums[0]); err != nil {
			return err
		}
	} else if staged {
		if _, _, err := tx.flushStage(math.MaxInt); err != nil {
			return err
		}
	}
	ids, err := u.termIDs(b.Terms, st)
	if err != nil {
		return err
	}
	// every (term, doc) of the batch, made in doc order and radix-sorted
	// by term id (stable, so each term's docs stay ascending): cheaper
	// than scattering postings into per-term lists, which misses the CPU
	// cache on nearly every write
	n := 0
	for _, i := range docs {
		n += len(b.Docs[i].Terms)
	}
	scratch := getEntries(2 * n)
	defer entryPool.Put(scratch)
	ents := (*scratch)[:0:n]
	for x, i := range docs {
		for _, t := range b.Docs[i].Terms {
			ents = append(ents, tentry{id: ids[t.Term], slot: uint32(x), tf: tf16(t.TF)})
		}
	}
	ents = radixSortByID(ents, (*scratch)[n:2*n])
	u.stats.MaxDoc = max(u.stats.MaxDoc, docNums[len(docNums)-1])
	// earlier versions: statistics, and removals of terms a doc lost
	dels := map[uint32][]uint32{} // term id → docs, ascending
	for _, i := range docs {
		d := &b.Docs[i]
		old, had, err := u.oldDoc(d.Doc)
		if err != nil {
			return err
		}
		if had {
			u.unstat(old)
			now := make([]uint32, 0, len(d.Terms))
			for _, t := range d.Terms {
				now = append(now, ids[t.Term])
			}
			slices.Sort(now)
			for _, id := range old.terms {
				if _, ok := slices.BinarySearch(now, id); !ok {
					dels[id] = append(dels[id], d.Doc)
				}
			}
		}
		u.stats.Docs++
		for f := range d.Len {
			u.stats.Len[f] += uint64(d.Len[f])
		}
	}
	delIDs := make([]uint32, 0, len(dels))
	for id := range dels {
		delIDs = append(delIDs, id)
	}
	slices.Sort(delIDs)
	// each doc's quantized lengths, for the postings' block bounds and the
	// norms chunks
	norms := make([][SearchFields]uint8, len(docs))
	for x, i := range docs {
		l := &b.Docs[i].Len
		norms[x] = [SearchFields]uint8{QuantizeLength(l[0]), QuantizeLength(l[1]), QuantizeLength(l[2])}
	}
	// forward lists, filled in term id order (so each doc's ids ascend)
	fwdOff := make([]int32, len(docs)+1)
	for x, i := range docs {
		fwdOff[x+1] = fwdOff[x] + int32(len(b.Docs[i].Terms))
	}
	fwdFlat := make([]uint32, n)
	fwdPos := slices.Clone(fwdOff[:len(docs)])
	// postings, term by term in id order
	post := tx.b(bSearchPost)
	c := post.Cursor()
	var group, ops []posting
	di := 0
	for i := 0; i < len(ents) || di < len(delIDs); {
		var id uint32
		group = group[:0]
		if i < len(ents) && (di >= len(delIDs) || ents[i].id <= delIDs[di]) {
			id = ents[i].id
			for ; i < len(ents) && ents[i].id == id; i++ {
				x := ents[i].slot
				group = append(group, posting{doc: docNums[x], tf: ents[i].tf, norm: norms[x]})
				fwdFlat[fwdPos[x]] = id
				fwdPos[x]++
			}
			if di < len(delIDs) && delIDs[di] == id {
				di++
			}
		} else {
			id = delIDs[di]
			di++
		}
		del := dels[id]
		switch {
		case st != nil:
			if err := u.putBlocks(st.post, id, group, bulkBlock); err != nil {
				return err
			}
			continue
		case bulk:
			if err := u.putBlocks(post, id, group, bulkBlock); err != nil {
				return err
			}
			continue
		case len(del) == 0:
			appended, err := u.appendPostings(post, c, id, group)
			if err != nil {
				return err
			}
			if appended {
				continue
			}
			ops = append(ops[:0], group...)
		default:
			ops = mergeOps(ops[:0], group, del)
		}
		if err := u.applyTermOps(post, id, ops); err != nil {
			return err
		}
	}
	// forward records and norms, in doc order
	fwd := tx.b(bSearchFwd)
	for x, i := range docs {
		d := &b.Docs[i]
		terms := fwdFlat[fwdOff[x]:fwdOff[x+1]]
		size := 3*5 + 5 + 5*(len(terms)+1)
		for _, nm := range d.Names {
			size += 6 + 5*len(nm.Terms)
		}
		if err := fwd.Put(u32(d.Doc), appendFwd(u.arena.alloc(size), d.Len, d.Names, ids, terms)); err != nil {
			return err
		}
	}
	if err := u.putNorms(docNums, norms); err != nil {
		return err
	}
	return tx.putSearchStats(u.stats)
}

// RemoveSearchDocs removes documents from the search index (unknown docs
// are ignored).
func (tx *Tx) RemoveSearchDocs(docs []uint32) error {
	if tx.SearchStaged() {
		// the docs' blocks may be staged: into place first
		if _, _, err := tx.flushStage(math.MaxInt); err != nil {
			return err
		}
	}
	u := tx.newSearchUpdate()
	sorted := slices.Clone(docs)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	dels := map[uint32][]uint32{}
	var gone []uint32
	for _, doc := range sorted {
		old, had, err := u.oldDoc(doc)
		if err != nil {
			return err
		}
		if !had {
			continue
		}
		gone = append(gone, doc)
		u.unstat(old)
		for _, id := range old.terms {
			dels[id] = append(dels[id], doc)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	terms := make([]uint32, 0, len(dels))
	for id := range dels {
		terms = append(terms, id)
	}
	slices.Sort(terms)
	post := tx.b(bSearchPost)
	var ops []posting
	for _, id := range terms {
		ops = mergeOps(ops[:0], nil, dels[id])
		if err := u.applyTermOps(post, id, ops); err != nil {
			return err
		}
	}
	fwd := tx.b(bSearchFwd)
	for _, doc := range gone {
		if err := fwd.Delete(u32(doc)); err != nil {
			return err
		}
	}
	if err := u.putNorms(gone, make([][SearchFields]uint8, len(gone))); err != nil {
		return err
	}
	return tx.putSearchStats(u.stats)
}

// mergeOps merges sorted upserts and sorted removals into one op list.
func mergeOps(out, ups []posting, dels []uint32) []posting {
	i, j := 0, 0
	for i < len(ups) || j < len(dels) {
		switch {
		case j >= len(dels) || (i < len(ups) && ups[i].doc < dels[j]):
			out = append(out, ups[i])
			i++
		case i >= len(ups) || dels[j] < ups[i].doc:
			out = append(out, posting{doc: dels[j], del: true})
			j++
		default: // both (cannot happen: a removal is of a term the doc lost)
			out = append(out, ups[i])
			i++
			j++
		}
	}
	return out
}

// putNorms writes quantized lengths for docs (ascending), chunk by chunk.
func (u *searchUpdate) putNorms(docs []uint32, norms [][SearchFields]uint8) error {
	b := u.tx.b(bSearchNorms)
	for i := 0; i < len(docs); {
		c := docs[i] / normsPerChunk
		chunk := u.arena.alloc(normsPerChunk * SearchFields)[:normsPerChunk*SearchFields]
		copy(chunk, b.Get(u32(c)))
		for ; i < len(docs) && docs[i]/normsPerChunk == c; i++ {
			copy(chunk[int(docs[i]%normsPerChunk)*SearchFields:], norms[i][:])
		}
		var err error
		if allZero(chunk) {
			err = b.Delete(u32(c))
		} else {
			err = b.Put(u32(c), chunk)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// termIDs resolves the batch's terms to ids, handing out new ones in term
// order. When the batch holds a good share of the dictionary, one cursor
// walk merges the two sorted lists instead of a lookup per term.
func (u *searchUpdate) termIDs(terms []string, st *stagedTerms) ([]uint32, error) {
	order := make([]int32, len(terms))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(terms[a], terms[b]) })
	ids := make([]uint32, len(terms))
	dict := u.tx.b(bSearchTerms)
	meta := u.tx.b(bSearchMeta)
	next := getU32(meta.Get([]byte("next_term")))
	inDict := next    // about how many terms the dictionary holds
	var fresh []int32 // batch indexes of new terms, in term order
	if st != nil {
		// the terms staged before this batch are not in the dictionary yet
		rest := order[:0:0]
		for _, i := range order {
			if id, ok := st.get(terms[i]); ok {
				ids[i] = id
			} else {
				rest = append(rest, i)
			}
		}
		order = rest
		inDict -= min(inDict, uint32(len(st.before)))
	}
	if uint64(len(order))*16 > uint64(inDict) {
		c := dict.Cursor()
		k, v := c.First()
		for _, i := range order {
			t := terms[i]
			for k != nil && string(k) < t {
				k, v = c.Next()
			}
			if k != nil && string(k) == t && len(v) == 4 {
				ids[i] = getU32(v)
				continue
			}
			fresh = append(fresh, i)
		}
	} else {
		for _, i := range order {
			if v := dict.Get([]byte(terms[i])); len(v) == 4 {
				ids[i] = getU32(v)
				continue
			}
			fresh = append(fresh, i)
		}
	}
	if len(fresh) == 0 {
		return ids, nil
	}
	for _, i := range fresh {
		t := terms[i]
		if t == "" {
			return nil, fmt.Errorf("search index: empty term")
		}
		next++
		ids[i] = next
		if st != nil {
			if err := st.stage(&u.arena, t, next); err != nil {
				return nil, err
			}
			continue
		}
		if err := dict.Put([]byte(t), append(u.arena.alloc(4), u32(next)...)); err != nil {
			return nil, err
		}
	}
	return ids, meta.Put([]byte("next_term"), u32(next))
}

// appendPostings adds upserts whose docs all follow the term's indexed
// docs: into its last block while that stays within searchBlockMax, else
// as new blocks after it. It reports false (writing nothing) when the
// docs do not all follow, so the caller takes the general path.
func (u *searchUpdate) appendPostings(post *bolt.Bucket, c *bolt.Cursor, id uint32, ps []posting) (bool, error) {
	if len(ps) == 0 {
		return true, nil
	}
	var k, v []byte
	if id == math.MaxUint32 {
		k, v = c.Last()
	} else if k, _ = c.Seek(u32(id + 1)); k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if len(k) == 8 && getU32(k) == id {
		h, err := parseBlock(v, getU32(k[4:]))
		if err != nil {
			return false, fmt.Errorf("search postings of term %d: %w", id, err)
		}
		if h.small {
			// a block without a header: decoded and written anew
			cur, err := decodeBlock(v, h.key, make([]posting, 0, h.count+len(ps)), u.norm)
			if err != nil {
				return false, fmt.Errorf("search postings of term %d: %w", id, err)
			}
			if ps[0].doc <= cur[len(cur)-1].doc {
				return false, nil
			}
			if h.count+len(ps) <= searchBlockMax {
				all := append(cur, ps...)
				return true, post.Put(postKey(id, h.key), u.encodeBlock(h.key, all))
			}
		} else if ps[0].doc <= h.last {
			return false, nil
		} else if h.count+len(ps) <= searchBlockMax {
			chunks := addChunks(slices.Clone(h.chunkList()), h.last, ps)
			b := u.arena.alloc(len(h.payload) + encodedSize(h.last, ps) + len(chunks)*chunkMax)
			b = appendHeader(b, h.count+len(ps), h.key, chunks)
			b = append(b, h.payload...)
			b = appendPostingsTo(b, h.last, ps)
			return true, post.Put(postKey(id, h.key), b)
		}
	}
	return true, u.putBlocks(post, id, ps, searchBlock)
}

// putBlocks writes postings (above every doc of the term) as new blocks
// of up to size postings.
func (u *searchUpdate) putBlocks(post *bolt.Bucket, id uint32, ps []posting, size int) error {
	for i := 0; i < len(ps); i += size {
		part := ps[i:min(i+size, len(ps))]
		kd := part[0].doc
		k := binary.BigEndian.AppendUint32(u.arena.alloc(8), id)
		if err := post.Put(binary.BigEndian.AppendUint32(k, kd), u.encodeBlock(kd, part)); err != nil {
			return err
		}
	}
	return nil
}

// applyTermOps merges sorted upserts and removals of one term into its
// blocks, visiting only the blocks the ops fall into.
func (u *searchUpdate) applyTermOps(post *bolt.Bucket, id uint32, ops []posting) error {
	var scratch []posting
	c := post.Cursor()
	prefix := u32(id)
	ours := func(k []byte) bool { return len(k) == 8 && bytes.HasPrefix(k, prefix) }
	for len(ops) > 0 {
		// the block for ops[0]: the last block keyed ≤ its doc, else the
		// term's first block, else none (a term new to the index)
		k, v := c.Seek(postKey(id, ops[0].doc))
		if !ours(k) || getU32(k[4:]) != ops[0].doc {
			var pk, pv []byte
			if k == nil {
				pk, pv = c.Last()
			} else {
				pk, pv = c.Prev()
			}
			switch {
			case ours(pk):
				k, v = pk, pv
			case ours(k):
				k, v = c.Seek(k) // before the first block: merge into it
			default:
				k, v = nil, nil
			}
		}
		var key []byte
		var keyDoc uint32
		upper := uint32(math.MaxUint32)
		cur := scratch[:0]
		if k != nil {
			key, keyDoc = slices.Clone(k), getU32(k[4:])
			var err error
			if cur, err = decodeBlock(v, keyDoc, cur, u.norm); err != nil {
				return fmt.Errorf("search postings of term %d: %w", id, err)
			}
			if nk, _ := c.Next(); ours(nk) {
				upper = getU32(nk[4:])
			}
		}
		// the ops that fall into this block
		n := 0
		for n < len(ops) && ops[n].doc < upper {
			n++
		}
		merged := mergePostings(cur, ops[:n])
		ops = ops[n:]
		scratch = cur
		rewritten := false
		for i := 0; i < len(merged); {
			size := len(merged) - i
			if size > searchBlockMax {
				size = searchBlock
			}
			part := merged[i : i+size]
			kd := part[0].doc
			if i == 0 && key != nil && keyDoc <= kd {
				kd, rewritten = keyDoc, true
			}
			if err := post.Put(postKey(id, kd), u.encodeBlock(kd, part)); err != nil {
				return err
			}
			i += size
		}
		if key != nil && !rewritten {
			if err := post.Delete(key); err != nil {
				return err
			}
		}
	}
	return nil
}

// mergePostings applies sorted ops to a sorted block; the result is a new
// slice.
func mergePostings(cur, ops []posting) []posting {
	out := make([]posting, 0, len(cur)+len(ops))
	i, j := 0, 0
	for i < len(cur) || j < len(ops) {
		switch {
		case j >= len(ops) || (i < len(cur) && cur[i].doc < ops[j].doc):
			out = append(out, cur[i])
			i++
		case i >= len(cur) || ops[j].doc < cur[i].doc:
			if !ops[j].del {
				out = append(out, ops[j])
			}
			j++
		default: // same doc: the op replaces or removes it
			if !ops[j].del {
				out = append(out, ops[j])
			}
			i++
			j++
		}
	}
	return out
}
