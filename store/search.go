package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"

	bolt "go.etcd.io/bbolt"
)

// The search index (SPEC §4.1). Package search decides what a term is and
// how documents are ranked; this file decides how the inverted index is
// stored. Every bucket is derived (dropped and rebuilt by reindex).
//
//	search_meta              "version" → analyzer version (string, set by package search)
//	                         "next_term" → u32 last term id handed out
//	                         "stats" → u32 docs, then 3 × u64 total field lengths
//	search_terms             term bytes → u32 term id
//	search_tinfo             term id → u32 df (documents holding the term) + term bytes
//	search_post              term id + first doc (4+4 bytes BE) → postings block
//	search_fwd               doc → forward record (what the doc holds, so it can be
//	                         removed or replaced without re-reading its old text)
//	search_norms             u32 (doc >> 8) → 256 × 3 quantized field lengths
//	search_names             doc → the doc's names: per name u8 kind, uvarint n, n
//	                         uvarint term ids (title, aliases, file name, headings;
//	                         the search package decides which terms a name keeps)
//
// A postings block holds up to searchBlockMax documents of one term in
// ascending doc order, every one ≥ the block key's doc and < the next block
// key's doc of the same term:
//
//	uvarint count
//	count × posting: uvarint doc delta (the first relative to the key's doc,
//	  then to the previous doc), then a term-frequency byte c:
//	  c&0x0f < 15: title tf = c>>6, heading tf = c>>4&3, body tf = c&0x0f
//	  c&0x0f == 15: three uvarints follow: title, heading, body tf
//
// A forward record is: 3 × uvarint field length, uvarint n, then n term ids
// ascending, delta-coded as uvarints.
//
// A norms chunk holds, for doc d, bytes [3·(d&255), 3·(d&255)+3): each a
// field length quantized by QuantizeLength (0 = no document).
//
// Writes are buffered per batch and applied in key order in each bucket
// (random inserts into one large bbolt node are quadratic), so indexing a
// batch of new pages only appends, and one page edit touches only the
// blocks, dictionary entries and norms chunk of that page's terms.

// SearchFields is the number of ranked fields: 0 title and aliases, 1
// headings and tags, 2 body.
const SearchFields = 3

var (
	bSearchMeta  = []byte("search_meta")
	bSearchTerms = []byte("search_terms")
	bSearchTinfo = []byte("search_tinfo")
	bSearchPost  = []byte("search_post")
	bSearchFwd   = []byte("search_fwd")
	bSearchNorms = []byte("search_norms")
	bSearchNames = []byte("search_names")
)

func init() {
	registerDerived("search_meta", "search_terms", "search_tinfo", "search_post", "search_fwd", "search_norms", "search_names")
}

const (
	// searchBlock is the size blocks are cut to; a block that grows past
	// searchBlockMax by inserts is split into searchBlock-sized ones.
	searchBlock    = 128
	searchBlockMax = 256
	normsPerChunk  = 256
)

// SearchStats are the collection statistics BM25 needs.
type SearchStats struct {
	Docs uint32               // indexed documents
	Len  [SearchFields]uint64 // total length of each field over all documents
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

// SearchDoc is one document to index: its field lengths, distinct terms
// and names.
type SearchDoc struct {
	Doc   uint32
	Len   [SearchFields]uint32
	Terms []SearchTF // distinct terms, any order
	// Names are the doc's title, aliases, headings…: each a kind chosen
	// by the caller and terms (indexes into SearchBatch.Terms; each must
	// also be among Terms).
	Names []SearchName
}

// SearchName is a name of a document as a set of terms.
type SearchName struct {
	Kind  uint8
	Terms []uint32
}

// maxSearchNames and maxNameTerms bound what is stored of a doc's names.
const (
	maxSearchNames = 128
	maxNameTerms   = 24
)

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
	DF   uint32
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

// SearchStats returns the collection statistics.
func (tx *Tx) SearchStats() SearchStats {
	var s SearchStats
	v := tx.b(bSearchMeta).Get([]byte("stats"))
	if len(v) != 4+8*SearchFields {
		return s
	}
	s.Docs = binary.BigEndian.Uint32(v)
	for f := range s.Len {
		s.Len[f] = binary.BigEndian.Uint64(v[4+8*f:])
	}
	return s
}

func (tx *Tx) putSearchStats(s SearchStats) error {
	b := make([]byte, 4+8*SearchFields)
	binary.BigEndian.PutUint32(b, s.Docs)
	for f := range s.Len {
		binary.BigEndian.PutUint64(b[4+8*f:], s.Len[f])
	}
	return tx.b(bSearchMeta).Put([]byte("stats"), b)
}

// LookupSearchTerm returns the dictionary entry of a term.
func (tx *Tx) LookupSearchTerm(term string) (SearchTerm, bool) {
	v := tx.b(bSearchTerms).Get([]byte(term))
	if len(v) != 4 {
		return SearchTerm{}, false
	}
	id := getU32(v)
	return SearchTerm{Term: term, ID: id, DF: getU32(tx.b(bSearchTinfo).Get(u32(id)))}, true
}

// SearchTermsWithPrefix returns up to limit dictionary terms starting with
// prefix, in byte order.
func (tx *Tx) SearchTermsWithPrefix(prefix string, limit int) []SearchTerm {
	var out []SearchTerm
	c := tx.b(bSearchTerms).Cursor()
	p := []byte(prefix)
	for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p) && len(out) < limit; k, v = c.Next() {
		if len(v) != 4 {
			continue
		}
		id := getU32(v)
		out = append(out, SearchTerm{Term: string(k), ID: id, DF: getU32(tx.b(bSearchTinfo).Get(u32(id)))})
	}
	return out
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

// eachPosting decodes a block without allocating.
func eachPosting(v []byte, doc uint32, fn func(doc uint32, tf [SearchFields]uint32)) error {
	n, w := binary.Uvarint(v)
	if w <= 0 {
		return errCorrupt
	}
	v = v[w:]
	for i := uint64(0); i < n; i++ {
		var d uint64
		if len(v) > 0 && v[0] < 0x80 {
			d, v = uint64(v[0]), v[1:]
		} else {
			d, w = binary.Uvarint(v)
			if w <= 0 {
				return errCorrupt
			}
			v = v[w:]
		}
		doc += uint32(d)
		if len(v) == 0 {
			return errCorrupt
		}
		c := v[0]
		v = v[1:]
		var tf [SearchFields]uint32
		if c&0x0f != 15 {
			tf = [SearchFields]uint32{uint32(c >> 6), uint32(c >> 4 & 3), uint32(c & 0x0f)}
		} else {
			for f := range tf {
				x, w := binary.Uvarint(v)
				if w <= 0 {
					return errCorrupt
				}
				tf[f], v = uint32(x), v[w:]
			}
		}
		fn(doc, tf)
	}
	return nil
}

// posting is a decoded posting; del marks a removal in an update list.
type posting struct {
	doc uint32
	tf  [SearchFields]uint32
	del bool
}

func decodeBlock(v []byte, keyDoc uint32, out []posting) ([]posting, error) {
	err := eachPosting(v, keyDoc, func(doc uint32, tf [SearchFields]uint32) {
		out = append(out, posting{doc: doc, tf: tf})
	})
	return out, err
}

func appendBlock(b []byte, keyDoc uint32, ps []posting) []byte {
	b = binary.AppendUvarint(b, uint64(len(ps)))
	prev := keyDoc
	for _, p := range ps {
		b = binary.AppendUvarint(b, uint64(p.doc-prev))
		prev = p.doc
		t, h, x := p.tf[0], p.tf[1], p.tf[2]
		if t <= 3 && h <= 3 && x < 15 {
			b = append(b, byte(t<<6|h<<4|x))
		} else {
			b = append(b, 0x0f)
			b = binary.AppendUvarint(b, uint64(t))
			b = binary.AppendUvarint(b, uint64(h))
			b = binary.AppendUvarint(b, uint64(x))
		}
	}
	return b
}

func postKey(id, doc uint32) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint32(k, id)
	binary.BigEndian.PutUint32(k[4:], doc)
	return k
}

// fwdRec is a decoded forward record.
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

func appendFwd(b []byte, lens [SearchFields]uint32, terms []uint32) []byte {
	for _, l := range lens {
		b = binary.AppendUvarint(b, uint64(l))
	}
	b = binary.AppendUvarint(b, uint64(len(terms)))
	prev := uint32(0)
	for _, t := range terms {
		b = binary.AppendUvarint(b, uint64(t-prev))
		prev = t
	}
	return b
}

// SearchNorms reads quantized field lengths by doc, caching norms chunks
// for the life of the transaction.
type SearchNorms struct {
	b      *bolt.Bucket
	chunks map[uint32][]byte
	last   uint32
	lastV  []byte
}

// SearchNorms returns a norms reader for this transaction.
func (tx *Tx) SearchNorms() *SearchNorms {
	return &SearchNorms{b: tx.b(bSearchNorms), chunks: map[uint32][]byte{}, last: math.MaxUint32}
}

// Get returns the quantized field lengths of doc (zeros when unknown).
func (n *SearchNorms) Get(doc uint32) [SearchFields]uint8 {
	c := doc / normsPerChunk
	v := n.lastV
	if c != n.last {
		var ok bool
		if v, ok = n.chunks[c]; !ok {
			v = n.b.Get(u32(c))
			n.chunks[c] = v
		}
		n.last, n.lastV = c, v
	}
	i := int(doc%normsPerChunk) * SearchFields
	if i+SearchFields > len(v) {
		return [SearchFields]uint8{}
	}
	return [SearchFields]uint8{v[i], v[i+1], v[i+2]}
}

// searchUpdate collects the changes of one batch before they are written
// in key order.
type searchUpdate struct {
	tx      *Tx
	stats   SearchStats
	ops     map[uint32][]posting // term id → postings to upsert or delete
	dfDelta map[uint32]int
	newTerm map[uint32]string // ids handed out in this batch
	fwd     map[uint32][]byte // doc → new forward record; nil = delete
	norms   map[uint32][SearchFields]uint8
	names   map[uint32][]byte // doc → encoded names; nil = delete
}

func (tx *Tx) newSearchUpdate() *searchUpdate {
	return &searchUpdate{tx: tx, stats: tx.SearchStats(), ops: map[uint32][]posting{},
		dfDelta: map[uint32]int{}, newTerm: map[uint32]string{}, fwd: map[uint32][]byte{},
		norms: map[uint32][SearchFields]uint8{}, names: map[uint32][]byte{}}
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

// PutSearchDocs adds the batch's documents to the search index, replacing
// earlier versions of the same docs.
func (tx *Tx) PutSearchDocs(b *SearchBatch) error {
	if len(b.Docs) == 0 {
		return nil
	}
	u := tx.newSearchUpdate()
	ids, err := u.termIDs(b.Terms)
	if err != nil {
		return err
	}
	docs := make([]int, len(b.Docs))
	for i := range docs {
		docs[i] = i
	}
	sort.SliceStable(docs, func(i, j int) bool { return b.Docs[docs[i]].Doc < b.Docs[docs[j]].Doc })
	var newIDs []uint32
	for x, i := range docs {
		if x+1 < len(docs) && b.Docs[docs[x+1]].Doc == b.Docs[i].Doc {
			continue // the same doc twice in a batch: the later version wins
		}
		d := &b.Docs[i]
		old, had, err := u.oldDoc(d.Doc)
		if err != nil {
			return err
		}
		newIDs = newIDs[:0]
		for _, t := range d.Terms {
			id := ids[t.Term]
			newIDs = append(newIDs, id)
			u.ops[id] = append(u.ops[id], posting{doc: d.Doc, tf: t.TF})
		}
		slices.Sort(newIDs)
		newIDs = slices.Compact(newIDs)
		if had {
			u.unstat(old)
			// terms the doc no longer holds lose it; terms it keeps keep
			// their document frequency
			j := 0
			for _, id := range old.terms {
				for j < len(newIDs) && newIDs[j] < id {
					u.dfDelta[newIDs[j]]++
					j++
				}
				if j < len(newIDs) && newIDs[j] == id {
					j++
					continue
				}
				u.ops[id] = append(u.ops[id], posting{doc: d.Doc, del: true})
				u.dfDelta[id]--
			}
			for ; j < len(newIDs); j++ {
				u.dfDelta[newIDs[j]]++
			}
		} else {
			for _, id := range newIDs {
				u.dfDelta[id]++
			}
		}
		u.stats.Docs++
		for f := range d.Len {
			u.stats.Len[f] += uint64(d.Len[f])
		}
		u.fwd[d.Doc] = appendFwd(nil, d.Len, newIDs)
		u.norms[d.Doc] = [SearchFields]uint8{QuantizeLength(d.Len[0]), QuantizeLength(d.Len[1]), QuantizeLength(d.Len[2])}
		u.names[d.Doc] = appendNames(nil, d.Names, ids)
	}
	return u.flush()
}

// RemoveSearchDocs removes documents from the search index (unknown docs
// are ignored).
func (tx *Tx) RemoveSearchDocs(docs []uint32) error {
	u := tx.newSearchUpdate()
	sorted := slices.Clone(docs)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	for _, doc := range sorted {
		old, had, err := u.oldDoc(doc)
		if err != nil {
			return err
		}
		if !had {
			continue
		}
		u.unstat(old)
		for _, id := range old.terms {
			u.ops[id] = append(u.ops[id], posting{doc: doc, del: true})
			u.dfDelta[id]--
		}
		u.fwd[doc] = nil
		u.norms[doc] = [SearchFields]uint8{}
		u.names[doc] = nil
	}
	return u.flush()
}

func (u *searchUpdate) unstat(old fwdRec) {
	if u.stats.Docs > 0 {
		u.stats.Docs--
	}
	for f := range old.lens {
		u.stats.Len[f] -= min(u.stats.Len[f], uint64(old.lens[f]))
	}
}

// termIDs resolves the batch's terms to ids, handing out new ones in term
// order.
func (u *searchUpdate) termIDs(terms []string) ([]uint32, error) {
	order := make([]int, len(terms))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return terms[order[i]] < terms[order[j]] })
	ids := make([]uint32, len(terms))
	dict := u.tx.b(bSearchTerms)
	meta := u.tx.b(bSearchMeta)
	next := getU32(meta.Get([]byte("next_term")))
	handed := false
	for _, i := range order {
		t := terms[i]
		if t == "" {
			return nil, fmt.Errorf("search index: empty term")
		}
		if v := dict.Get([]byte(t)); len(v) == 4 {
			ids[i] = getU32(v)
			continue
		}
		next++
		handed = true
		ids[i] = next
		u.newTerm[next] = t
		if err := dict.Put([]byte(t), u32(next)); err != nil {
			return nil, err
		}
	}
	if handed {
		if err := meta.Put([]byte("next_term"), u32(next)); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// flush writes the collected changes, each bucket in key order.
func (u *searchUpdate) flush() error {
	tx := u.tx
	// postings
	terms := make([]uint32, 0, len(u.ops))
	for id := range u.ops {
		terms = append(terms, id)
	}
	slices.Sort(terms)
	post := tx.b(bSearchPost)
	var scratch []posting
	for _, id := range terms {
		ops := u.ops[id]
		// a doc appears at most once per term: its upsert or its removal
		// (docs were visited in order, so ops are sorted unless a
		// removal was appended after upserts of later docs)
		if !slices.IsSortedFunc(ops, func(a, b posting) int { return cmpU32(a.doc, b.doc) }) {
			slices.SortStableFunc(ops, func(a, b posting) int { return cmpU32(a.doc, b.doc) })
		}
		var err error
		if scratch, err = applyTermOps(post, id, ops, scratch); err != nil {
			return err
		}
	}
	// document frequencies and the reverse dictionary
	dfs := make([]uint32, 0, len(u.dfDelta))
	for id := range u.dfDelta {
		dfs = append(dfs, id)
	}
	slices.Sort(dfs)
	tinfo := tx.b(bSearchTinfo)
	var dead []string
	for _, id := range dfs {
		delta := u.dfDelta[id]
		v := tinfo.Get(u32(id))
		df, term := int64(0), u.newTerm[id]
		if len(v) >= 4 {
			df, term = int64(getU32(v)), string(v[4:])
		}
		df += int64(delta)
		if df <= 0 {
			if v != nil {
				if err := tinfo.Delete(u32(id)); err != nil {
					return err
				}
			}
			dead = append(dead, term)
			continue
		}
		if delta == 0 && v != nil {
			continue
		}
		nv := make([]byte, 4+len(term))
		binary.BigEndian.PutUint32(nv, uint32(df))
		copy(nv[4:], term)
		if err := tinfo.Put(u32(id), nv); err != nil {
			return err
		}
	}
	slices.Sort(dead)
	dict := tx.b(bSearchTerms)
	for _, t := range dead {
		if t == "" {
			continue
		}
		if err := dict.Delete([]byte(t)); err != nil {
			return err
		}
	}
	// forward records
	docs := make([]uint32, 0, len(u.fwd))
	for d := range u.fwd {
		docs = append(docs, d)
	}
	slices.Sort(docs)
	fwd := tx.b(bSearchFwd)
	for _, d := range docs {
		var err error
		if v := u.fwd[d]; v == nil {
			err = fwd.Delete(u32(d))
		} else {
			err = fwd.Put(u32(d), v)
		}
		if err != nil {
			return err
		}
	}
	// names
	names := tx.b(bSearchNames)
	for _, d := range docs {
		var err error
		if v := u.names[d]; len(v) == 0 {
			err = names.Delete(u32(d))
		} else {
			err = names.Put(u32(d), v)
		}
		if err != nil {
			return err
		}
	}
	// norms, chunk by chunk
	normsB := tx.b(bSearchNorms)
	for i := 0; i < len(docs); {
		c := docs[i] / normsPerChunk
		chunk := make([]byte, normsPerChunk*SearchFields)
		copy(chunk, normsB.Get(u32(c)))
		for ; i < len(docs) && docs[i]/normsPerChunk == c; i++ {
			n := u.norms[docs[i]]
			copy(chunk[int(docs[i]%normsPerChunk)*SearchFields:], n[:])
		}
		var err error
		if allZero(chunk) {
			err = normsB.Delete(u32(c))
		} else {
			err = normsB.Put(u32(c), chunk)
		}
		if err != nil {
			return err
		}
	}
	return tx.putSearchStats(u.stats)
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

// applyTermOps merges sorted upserts and removals of one term into its
// blocks. It visits only the blocks the ops fall into: new docs (higher
// than every indexed doc) land in the last block and new blocks after it.
func applyTermOps(post *bolt.Bucket, id uint32, ops []posting, scratch []posting) ([]posting, error) {
	c := post.Cursor()
	prefix := u32(id)
	ours := func(k []byte) bool { return k != nil && len(k) == 8 && bytes.HasPrefix(k, prefix) }
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
			if cur, err = decodeBlock(v, keyDoc, cur); err != nil {
				return cur, fmt.Errorf("search postings of term %d: %w", id, err)
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
			if err := post.Put(postKey(id, kd), appendBlock(nil, kd, part)); err != nil {
				return scratch, err
			}
			i += size
		}
		if key != nil && !rewritten {
			if err := post.Delete(key); err != nil {
				return scratch, err
			}
		}
	}
	return scratch, nil
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

func appendNames(b []byte, names []SearchName, ids []uint32) []byte {
	for _, n := range names[:min(len(names), maxSearchNames)] {
		if len(n.Terms) == 0 {
			continue
		}
		b = append(b, n.Kind)
		ts := n.Terms[:min(len(n.Terms), maxNameTerms)]
		b = binary.AppendUvarint(b, uint64(len(ts)))
		for _, t := range ts {
			b = binary.AppendUvarint(b, uint64(ids[t]))
		}
	}
	return b
}

// EachSearchName calls fn with each stored name of doc: its kind and term
// ids. The slice is reused between calls.
func (tx *Tx) EachSearchName(doc uint32, fn func(kind uint8, terms []uint32)) error {
	v := tx.b(bSearchNames).Get(u32(doc))
	var ts []uint32
	for len(v) > 0 {
		kind := v[0]
		r := reader{b: v[1:]}
		n := r.uvarint()
		if r.err != nil || n > uint64(len(r.b)) {
			return fmt.Errorf("search names of doc %d: %w", doc, errCorrupt)
		}
		ts = ts[:0]
		for i := uint64(0); i < n; i++ {
			ts = append(ts, uint32(r.uvarint()))
		}
		if r.err != nil {
			return fmt.Errorf("search names of doc %d: %w", doc, r.err)
		}
		fn(kind, ts)
		v = r.b
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
	for _, name := range [][]byte{bSearchMeta, bSearchTerms, bSearchTinfo, bSearchPost, bSearchFwd, bSearchNorms, bSearchNames} {
		b := tx.b(name)
		c := b.Cursor()
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
