package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

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
