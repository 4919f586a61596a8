package store

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// Staged writes: how a bulk build (a reindex, a first index, a search
// rebuild) writes its postings and its new terms.
//
//	search_stage        u32 run → a bucket: u32 term id + u32 block key doc →
//	                    postings block (search_post's keys and values)
//	search_stage_terms  u32 run → a bucket: term bytes → u32 term id
//	search_meta         "stage_next" → where a flush under way goes on:
//	                    "t" + a term (the dictionary), or "p" + u32 term id +
//	                    u32 doc (the postings)
//
// A bulk batch holds ~1000 pages, all above every doc indexed before, and
// writes a new block for each of its terms (~7000) and a dictionary entry
// for each term it is the first to hold (~2300). Put into search_post and
// search_terms, those keys fall all over the buckets, and every commit
// rewrites a leaf per key: a growing share of ever larger buckets, so a
// reindex grew quadratic in the vault (10 of 28 s at 100,000 pages). A
// bulk batch appends its writes to the stage instead, in a bucket of its
// own (the run, under the batch's first doc, above every earlier run's),
// where they are appends; FlushSearchStage then moves every run into place in key
// order, merging the runs, in bounded transactions, and each leaf of the
// index is written once. The values are the same bytes under the same keys
// as direct writes: a flush leaves the index the batches would have.
//
// The batches of one bulk find the terms staged before them in the Store's
// memory (stageTerms, filled when a staging transaction commits): the
// stage is only ever added to by the process that holds that list, and
// one that does not (a process killed mid-bulk left the stage behind)
// flushes it first.
//
// While anything is staged the index is incomplete (SearchStaged; search
// answers unavailable). The indexer flushes at the end of every scan and
// search rebuild, and at the start of a scan (a killed flush resumes at
// stage_next). A write that is no bulk append while anything is staged (an
// edit, a removal) flushes the rest in its own transaction first.

var (
	bSearchStage      = []byte("search_stage")
	bSearchStageTerms = []byte("search_stage_terms")
)

func init() { registerDerived(string(bSearchStage), string(bSearchStageTerms)) }

var metaStageNext = []byte("stage_next")

// stageFlushBytes is about how many bytes one flush transaction moves
// (Store.flushBytes lowers it for a test): the staged runs are spread over
// the file, and the kernel maps ten times what a transaction reads of them
// (see GovernMapped).
const stageFlushBytes = 4 << 20

// stageFlush is how many bytes one flush transaction of s moves.
func (s *Store) stageFlush() int {
	if s.flushBytes > 0 {
		return s.flushBytes
	}
	return stageFlushBytes
}

// StageSearch lets bulk batches stage their search writes until done is
// called. The indexer calls it for a scan that builds the index as a
// whole (a reindex, a first index) and for a search rebuild, where search
// answers unavailable until they end anyway; elsewhere bulk batches write
// in place, so that searches beside an import of many pages see them as
// they come. done does not flush (FlushSearchStage does).
func (s *Store) StageSearch() (done func()) {
	s.staging.Add(1)
	return func() { s.staging.Add(-1) }
}

// SearchStaged reports whether writes are staged (the index is incomplete
// until FlushSearchStage has run).
func (tx *Tx) SearchStaged() bool {
	for _, name := range [][]byte{bSearchStage, bSearchStageTerms} {
		if b := tx.b(name); b != nil {
			if k, _ := b.Cursor().First(); k != nil {
				return true
			}
		}
	}
	return false
}

// canStage reports whether a bulk batch may stage its writes: staging is
// on (StageSearch), the buckets exist (a store opened for writing has them), no flush is under way (a
// run added then could hold keys the flush has moved), and whatever is
// staged was staged by this Store, which knows its terms.
func (tx *Tx) canStage(staged bool) bool {
	if tx.s == nil || tx.s.staging.Load() == 0 || tx.b(bSearchStage) == nil || tx.b(bSearchStageTerms) == nil || tx.b(bSearchMeta).Get(metaStageNext) != nil {
		return false
	}
	return !staged || tx.s.stageTerms != nil
}

// stagedTerms is a staging batch's: its run's buckets, the terms staged
// before it, and the ones it stages itself (the Store's list when it
// commits).
type stagedTerms struct {
	before map[string]uint32
	added  map[string]uint32
	post   *bolt.Bucket // the run's postings
	terms  *bolt.Bucket // the run's new terms
}

// stageRun starts the run of the batch whose first doc is first.
func (tx *Tx) stageRun(staged bool, first uint32) (*stagedTerms, error) {
	var run [2]*bolt.Bucket
	for i, name := range [][]byte{bSearchStage, bSearchStageTerms} {
		b, err := tx.b(name).CreateBucket(u32(first))
		if err != nil {
			return nil, fmt.Errorf("search stage: run %d: %w", first, err)
		}
		b.FillPercent = 0.9 // written in key order
		run[i] = b
	}
	if !staged || tx.s.stageTerms == nil {
		tx.s.stageTerms = map[string]uint32{} // an empty stage: this Store's own from now on
	}
	st := &stagedTerms{before: tx.s.stageTerms, added: map[string]uint32{}, post: run[0], terms: run[1]}
	s := tx.s
	tx.tx.OnCommit(func() {
		for t, id := range st.added {
			s.stageTerms[t] = id
		}
	})
	return st, nil
}

func (st *stagedTerms) get(t string) (uint32, bool) {
	if id, ok := st.before[t]; ok {
		return id, true
	}
	id, ok := st.added[t]
	return id, ok
}

// forgetStagedTerms clears the Store's list of staged terms when tx
// commits (the stage is then empty).
func (tx *Tx) forgetStagedTerms() {
	if s := tx.s; s != nil {
		tx.tx.OnCommit(func() { s.stageTerms = nil })
	}
}

// FlushSearchStage moves the staged writes into the index, in write
// transactions of about stageFlushBytes each, and empties the stage.
// progress (optional) is told how many of the term ids it has passed.
func (s *Store) FlushSearchStage(ctx context.Context, progress func(done, total int)) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var done bool
		var next, total uint32
		err := s.Update(func(tx *Tx) error {
			if !tx.SearchStaged() {
				done = true
				return nil
			}
			var err error
			done, next, err = tx.flushStage(s.stageFlush())
			total = getU32(tx.b(bSearchMeta).Get([]byte("next_term")))
			return err
		})
		if err != nil {
			return err
		}
		s.ReleaseMapped()
		if done {
			return nil
		}
		if progress != nil {
			progress(int(next), int(total))
		}
	}
}

// flushStage moves staged writes into place, the dictionary first, from
// stage_next on, until about limit bytes have moved. It reports done once
// everything has moved (the stage is then empty and stage_next gone),
// else the term id the postings have reached.
func (tx *Tx) flushStage(limit int) (done bool, next uint32, err error) {
	meta := tx.b(bSearchMeta)
	from := meta.Get(metaStageNext)
	moved := 0
	if len(from) == 0 || from[0] == 't' {
		var at []byte
		if len(from) > 0 {
			at = from[1:]
		}
		rest, err := mergeRuns(tx.b(bSearchStageTerms), tx.b(bSearchTerms), at, limit, &moved)
		if err != nil || rest != nil {
			return false, 0, putNext(meta, 't', rest, err)
		}
		from = nil
	}
	var at []byte
	if len(from) > 0 {
		at = from[1:]
	}
	rest, err := mergeRuns(tx.b(bSearchStage), tx.b(bSearchPost), at, limit, &moved)
	if err != nil || rest != nil {
		return false, getU32(rest), putNext(meta, 'p', rest, err)
	}
	// every run moved: drop them, one by one (dropping a bucket reads each
	// of its pages, and the kernel maps their neighbours too: released
	// after each run, the mapped pages stay within a run's)
	for _, name := range [][]byte{bSearchStage, bSearchStageTerms} {
		stage := tx.b(name)
		var runs [][]byte
		c := stage.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			runs = append(runs, append([]byte{}, k...))
		}
		for _, run := range runs {
			if err := stage.DeleteBucket(run); err != nil {
				return false, 0, fmt.Errorf("drop %s run %x: %w", name, run, err)
			}
			tx.ReleaseMapped()
		}
	}
	tx.forgetStagedTerms()
	return true, 0, meta.Delete(metaStageNext)
}

func putNext(meta *bolt.Bucket, kind byte, key []byte, err error) error {
	if err != nil {
		return err
	}
	return meta.Put(metaStageNext, append([]byte{kind}, key...))
}

// stageRun is one run's cursor in a flush, at its next entry.
type stageRun struct {
	c    *bolt.Cursor
	ord  int // the run's place among the runs
	k, v []byte
}

// mergeRuns puts every entry of the runs of stage (a bucket per run) into
// dst, in key order, from key from on (nil: the first), until *moved
// (bytes moved so far, counted on) reaches limit. It returns the key to
// go on from, or nil when every entry has moved. Keys and values stay in
// the mapped stage, untouched until the transaction commits, as bbolt
// wants them.
func mergeRuns(stage, dst *bolt.Bucket, from []byte, limit int, moved *int) ([]byte, error) {
	// a cursor per run, at its first key ≥ from; the runs in order, so
	// that a term's blocks (in consecutive runs) come out in key order
	var runs []*stageRun
	c := stage.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		b := stage.Bucket(k)
		if v != nil || b == nil {
			return nil, fmt.Errorf("search stage: %x is no run", k)
		}
		r := &stageRun{c: b.Cursor(), ord: len(runs)}
		if from == nil {
			r.k, r.v = r.c.First()
		} else {
			r.k, r.v = r.c.Seek(from)
		}
		if r.k != nil {
			runs = append(runs, r)
		}
	}
	h := stageHeap(runs)
	h.init()
	dst.FillPercent = 0.9 // written in key order
	for len(h) > 0 {
		r := h[0]
		if *moved >= limit {
			return append([]byte{}, r.k...), nil
		}
		if err := dst.Put(r.k, r.v); err != nil {
			return nil, err
		}
		*moved += len(r.k) + len(r.v) + 16
		if r.k, r.v = r.c.Next(); r.k != nil {
			h.down(0)
		} else {
			h.pop()
		}
	}
	return nil, nil
}

// stageHeap is a min-heap of runs by their next key, then by run order.
type stageHeap []*stageRun

func (h stageHeap) less(i, j int) bool {
	if c := bytes.Compare(h[i].k, h[j].k); c != 0 {
		return c < 0
	}
	return h[i].ord < h[j].ord
}

func (h stageHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *stageHeap) pop() {
	n := len(*h) - 1
	(*h)[0] = (*h)[n]
	*h = (*h)[:n]
	if n > 0 {
		h.down(0)
	}
}

func (h stageHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// stage records a new term: in its run, in the batch's term order (an
// append), and in the list of terms the batch added.
func (st *stagedTerms) stage(a *arena, t string, id uint32) error {
	if err := st.terms.Put(append(a.alloc(len(t)), t...), append(a.alloc(4), u32(id)...)); err != nil {
		return err
	}
	st.added[strings.Clone(t)] = id
	return nil
}
