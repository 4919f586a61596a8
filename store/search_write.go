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

// Writing the search index: a batch of pages added or replaced
// (PutSearchDocs), pages removed (RemoveSearchDocs), each term's postings
// merged into its blocks in key order. The layout is in search.go.

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
	w := &docsWrite{b: b}
	w.order()
	bulk, st, err := tx.stageFor(u, w.docNums)
	if err != nil {
		return err
	}
	if w.ids, err = u.termIDs(b.Terms, st); err != nil {
		return err
	}
	scratch := w.entries()
	defer entryPool.Put(scratch)
	u.stats.MaxDoc = max(u.stats.MaxDoc, w.docNums[len(w.docNums)-1])
	if err := w.replaced(u); err != nil {
		return err
	}
	w.lengths()
	if err := w.postings(u, st, bulk); err != nil {
		return err
	}
	if err := w.forward(u); err != nil {
		return err
	}
	if err := u.putNorms(w.docNums, w.norms); err != nil {
		return err
	}
	return tx.putSearchStats(u.stats)
}

// docsWrite is one PutSearchDocs, step by step.
type docsWrite struct {
	b       *SearchBatch
	docs    []int    // indexes into b.Docs, by ascending doc, each doc once
	docNums []uint32 // their docs
	ids     []uint32 // term ids of b.Terms
	// ents is every (term, doc) of the batch, sorted by term id (each
	// term's docs ascending); n counts them
	ents []tentry
	n    int
	// dels are the docs each term loses (a doc's earlier version had it),
	// ascending; delIDs those terms, ascending
	dels   map[uint32][]uint32
	delIDs []uint32
	norms  [][SearchFields]uint8 // each doc's quantized field lengths
	// the forward lists: doc x's term ids are fwdFlat[fwdOff[x]:fwdOff[x+1]],
	// filled in term id order (so they ascend); fwdPos is where the next goes
	fwdOff  []int32
	fwdFlat []uint32
	fwdPos  []int32
}

// order puts the batch's docs in ascending order; of a doc given twice,
// the later version wins.
func (w *docsWrite) order() {
	b := w.b
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
	w.docs = docs
	w.docNums = make([]uint32, len(docs))
	for x, i := range docs {
		w.docNums[x] = b.Docs[i].Doc
	}
}

// stageFor decides how a batch of docNums (ascending) is written. A bulk
// batch (a reindex, an import) of docs all above every indexed doc writes
// each term's postings as new blocks without looking at the term's
// existing ones: a partly filled block per term and batch is cheaper than
// a B+tree seek per term and batch. Its blocks and new terms are staged
// (searchstage.go; st is the run's buckets and the terms staged before),
// and while anything is staged every batch that only adds docs above the
// rest stages its own; any other write moves the stage into place first.
func (tx *Tx) stageFor(u *searchUpdate, docNums []uint32) (bulk bool, st *stagedTerms, err error) {
	staged := tx.SearchStaged()
	bulk = (len(docNums) >= bulkDocs || staged) && docNums[0] > u.stats.MaxDoc
	if bulk && tx.canStage(staged) {
		st, err = tx.stageRun(staged, docNums[0])
		return bulk, st, err
	}
	if staged {
		_, _, err = tx.flushStage(math.MaxInt)
	}
	return bulk, nil, err
}

// entries makes every (term, doc) of the batch in doc order and
// radix-sorts them by term id (stable, so each term's docs stay
// ascending): cheaper than scattering postings into per-term lists, which
// misses the CPU cache on nearly every write. It returns the pooled
// scratch to give back.
func (w *docsWrite) entries() *[]tentry {
	for _, i := range w.docs {
		w.n += len(w.b.Docs[i].Terms)
	}
	n := w.n
	scratch := getEntries(2 * n)
	ents := (*scratch)[:0:n]
	for x, i := range w.docs {
		for _, t := range w.b.Docs[i].Terms {
			ents = append(ents, tentry{id: w.ids[t.Term], slot: uint32(x), tf: tf16(t.TF)})
		}
	}
	w.ents = radixSortByID(ents, (*scratch)[n:2*n])
	return scratch
}

// replaced accounts for the earlier versions of the batch's docs: their
// statistics go, and each term a doc lost is a removal; then the new
// versions' statistics are added.
func (w *docsWrite) replaced(u *searchUpdate) error {
	w.dels = map[uint32][]uint32{}
	for _, i := range w.docs {
		d := &w.b.Docs[i]
		old, had, err := u.oldDoc(d.Doc)
		if err != nil {
			return err
		}
		if had {
			u.unstat(old)
			now := make([]uint32, 0, len(d.Terms))
			for _, t := range d.Terms {
				now = append(now, w.ids[t.Term])
			}
			slices.Sort(now)
			for _, id := range old.terms {
				if _, ok := slices.BinarySearch(now, id); !ok {
					w.dels[id] = append(w.dels[id], d.Doc)
				}
			}
		}
		u.stats.Docs++
		for f := range d.Len {
			u.stats.Len[f] += uint64(d.Len[f])
		}
	}
	w.delIDs = make([]uint32, 0, len(w.dels))
	for id := range w.dels {
		w.delIDs = append(w.delIDs, id)
	}
	slices.Sort(w.delIDs)
	return nil
}

// lengths quantizes each doc's field lengths (for the postings' block
// bounds and the norms chunks) and lays out the forward lists.
func (w *docsWrite) lengths() {
	w.norms = make([][SearchFields]uint8, len(w.docs))
	w.fwdOff = make([]int32, len(w.docs)+1)
	for x, i := range w.docs {
		l := &w.b.Docs[i].Len
		w.norms[x] = [SearchFields]uint8{QuantizeLength(l[0]), QuantizeLength(l[1]), QuantizeLength(l[2])}
		w.fwdOff[x+1] = w.fwdOff[x] + int32(len(w.b.Docs[i].Terms))
	}
	w.fwdFlat = make([]uint32, w.n)
	w.fwdPos = slices.Clone(w.fwdOff[:len(w.docs)])
}

// postings writes the postings term by term in id order: each term's new
// postings (group) and the docs it lost (del), merged into its blocks.
func (w *docsWrite) postings(u *searchUpdate, st *stagedTerms, bulk bool) error {
	post := u.tx.b(bSearchPost)
	c := post.Cursor()
	var group, ops []posting
	ents, delIDs := w.ents, w.delIDs
	i, di := 0, 0
	for i < len(ents) || di < len(delIDs) {
		var id uint32
		group = group[:0]
		if i < len(ents) && (di >= len(delIDs) || ents[i].id <= delIDs[di]) {
			id = ents[i].id
			for ; i < len(ents) && ents[i].id == id; i++ {
				x := ents[i].slot
				group = append(group, posting{doc: w.docNums[x], tf: ents[i].tf, norm: w.norms[x]})
				w.fwdFlat[w.fwdPos[x]] = id
				w.fwdPos[x]++
			}
			if di < len(delIDs) && delIDs[di] == id {
				di++
			}
		} else {
			id = delIDs[di]
			di++
		}
		var err error
		ops, err = u.putTerm(post, c, st, bulk, id, group, w.dels[id], ops)
		if err != nil {
			return err
		}
	}
	return nil
}

// putTerm writes one term's new postings (group) and removals (del): as
// new blocks, staged or in place, for a bulk batch; appended to its last
// block when it can; else merged into the blocks they fall into. ops is
// scratch space, returned for the next term.
func (u *searchUpdate) putTerm(post *bolt.Bucket, c *bolt.Cursor, st *stagedTerms, bulk bool, id uint32, group []posting, del []uint32, ops []posting) ([]posting, error) {
	switch {
	case st != nil:
		return ops, u.putBlocks(st.post, id, group, bulkBlock)
	case bulk:
		return ops, u.putBlocks(post, id, group, bulkBlock)
	case len(del) == 0:
		appended, err := u.appendPostings(post, c, id, group)
		if err != nil || appended {
			return ops, err
		}
		ops = append(ops[:0], group...)
	default:
		ops = mergeOps(ops[:0], group, del)
	}
	return ops, u.applyTermOps(post, id, ops)
}

// forward writes the docs' forward records, in doc order.
func (w *docsWrite) forward(u *searchUpdate) error {
	fwd := u.tx.b(bSearchFwd)
	for x, i := range w.docs {
		d := &w.b.Docs[i]
		terms := w.fwdFlat[w.fwdOff[x]:w.fwdOff[x+1]]
		size := 3*5 + 5 + 5*(len(terms)+1)
		for _, nm := range d.Names {
			size += 6 + 5*len(nm.Terms)
		}
		if err := fwd.Put(u32(d.Doc), appendFwd(u.arena.alloc(size), d.Len, d.Names, w.ids, terms)); err != nil {
			return err
		}
	}
	return nil
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
