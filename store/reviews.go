package store

// The review queue's buckets are a cache of the review journal, a file of
// the vault that package ops keeps (docs/review.md): ops replays the
// journal into them when they do not match it. ResetDerived leaves them
// alone (a replay rebuilds them, ResetReviews empties them). Layout ("·"
// is a 0x00 separator, seq is 8 bytes big-endian):
//
//	reviews                  seq → ReviewRec (binary, see encodeReview); seq is the
//	                         queue position, handed out in increasing order and never reused
//	review_id                public id (6 Crockford base32 characters) → seq
//	review_key               idempotency key (8 bytes big-endian) → seq; one item per key
//	review_order             type · class · seq → ∅, where class is a status or "resolved"
//	                         (every terminal status) and type "" means any type; a typed
//	                         item also has type · "all" · seq. "Any type, any status" is
//	                         the reviews bucket itself. Cursor order is queue order.
//	review_counts            type · status → u64 number of items decided by no one
//	                         (pending, or decided before deciders were recorded);
//	                         type · status · decided_by → u64 number of the others
//
// Items are never deleted (but for ResetReviews, before a replay). The domain rules (which statuses exist, which
// actions lead to them) live in package ops; the store enforces the one
// invariant that must hold whatever the caller: a terminal item (any status
// but "pending") is never rewritten.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
)

var (
	bReviews      = []byte("reviews")
	bReviewID     = []byte("review_id")
	bReviewKey    = []byte("review_key")
	bReviewOrder  = []byte("review_order")
	bReviewCounts = []byte("review_counts")
)

func init() {
	registerKept(string(bReviews), string(bReviewID), string(bReviewKey), string(bReviewOrder), string(bReviewCounts))
}

// ReviewPending is the one live status; every other status is terminal.
const ReviewPending = "pending"

// Review listing classes beyond the statuses themselves.
const (
	ReviewClassResolved = "resolved" // every terminal status
	ReviewClassAll      = "all"      // every status
)

// ReviewRec is a stored review item. Strings are stored as given; the
// domain layer validates them.
type ReviewRec struct {
	Seq        uint64 // queue position (set by PutReview for a new item)
	ID         string // public id (set by PutReview for a new item)
	Key        uint64 // idempotency key; unique in the queue
	Type       string
	Status     string
	Resolution string
	Title      string
	Rationale  string
	Page       string
	Source     string
	Referenced []string
	Queries    []string
	Origin     string
	CreatedNS  int64 // Unix nanoseconds
	ReviewedNS int64 // Unix nanoseconds; 0 while pending
	// ClaimNS, while in the future, marks a pending item that a command is
	// acting on (writing its page, running research): other commands and
	// producers leave it alone until then. Unix nanoseconds; 0 = none.
	ClaimNS int64
	// DecidedBy says who decided a terminal item: a person or an agent by
	// hand ("user", "agent"), or a producer automatically ("rule", "lint");
	// "" while pending.
	DecidedBy string
	// TitleBy, RationaleBy, PageBy and SourceBy name the origin whose text
	// each field holds (package ops lets a proposal replace a field only
	// when its producer ranks as high as the field's).
	TitleBy, RationaleBy, PageBy, SourceBy string
	// Note is why the item was decided as it was, in the decider's
	// words ("" = none given).
	Note string
}

// Terminal reports whether the item has been decided.
func (r *ReviewRec) Terminal() bool { return r.Status != ReviewPending }

// reviewCodecVersion 2 added DecidedBy and the fields' origins after
// ClaimNS; a version 1 record decodes with every field's origin the item's
// and no decider. Version 3 added Note at the end; older records have
// none.
const reviewCodecVersion = 3

func encodeReview(r *ReviewRec) []byte {
	b := make([]byte, 0, 96+len(r.Title)+len(r.Rationale)+len(r.Resolution))
	b = append(b, reviewCodecVersion)
	b = binary.BigEndian.AppendUint64(b, r.Key)
	for _, s := range []string{r.ID, r.Type, r.Status, r.Resolution, r.Title, r.Rationale, r.Page, r.Source, r.Origin} {
		b = appendStr(b, s)
	}
	for _, l := range [][]string{r.Referenced, r.Queries} {
		b = binary.AppendUvarint(b, uint64(len(l)))
		for _, s := range l {
			b = appendStr(b, s)
		}
	}
	b = binary.AppendVarint(b, r.CreatedNS)
	b = binary.AppendVarint(b, r.ReviewedNS)
	b = binary.AppendVarint(b, r.ClaimNS)
	for _, s := range []string{r.DecidedBy, r.TitleBy, r.RationaleBy, r.PageBy, r.SourceBy, r.Note} {
		b = appendStr(b, s)
	}
	return b
}

func decodeReview(seq uint64, v []byte) (*ReviewRec, error) {
	if len(v) < 9 || v[0] < 1 || v[0] > reviewCodecVersion {
		return nil, fmt.Errorf("review %d: %w", seq, errCorrupt)
	}
	r := &ReviewRec{Seq: seq, Key: binary.BigEndian.Uint64(v[1:9])}
	rd := reader{b: v[9:]}
	for _, p := range []*string{&r.ID, &r.Type, &r.Status, &r.Resolution, &r.Title, &r.Rationale, &r.Page, &r.Source, &r.Origin} {
		*p = rd.str()
	}
	for _, p := range []*[]string{&r.Referenced, &r.Queries} {
		n := rd.uvarint()
		if n > uint64(len(rd.b)) {
			return nil, fmt.Errorf("review %d: %w", seq, errCorrupt)
		}
		for i := uint64(0); i < n; i++ {
			*p = append(*p, rd.str())
		}
	}
	r.CreatedNS = rd.varint()
	r.ReviewedNS = rd.varint()
	r.ClaimNS = rd.varint()
	if v[0] == 1 {
		r.TitleBy, r.RationaleBy, r.PageBy, r.SourceBy = r.Origin, r.Origin, r.Origin, r.Origin
	} else {
		for _, p := range []*string{&r.DecidedBy, &r.TitleBy, &r.RationaleBy, &r.PageBy, &r.SourceBy} {
			*p = rd.str()
		}
	}
	if v[0] >= 3 {
		r.Note = rd.str()
	}
	if rd.err != nil {
		return nil, fmt.Errorf("review %d: %w", seq, rd.err)
	}
	return r, nil
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// reviewID derives the public id of an item from its idempotency key: six
// characters of the page-id alphabet (Crockford base32, lowercase: no i, l,
// o or u), salted on collision. The key is mixed first: FNV-1a's low bits
// hardly change when only the last byte of the input does, and titles that
// differ in their last letter must not get look-alike ids.
func reviewID(k uint64, salt int) string {
	v := k
	if salt > 0 {
		h := fnv.New64a()
		h.Write(u64(k))
		fmt.Fprintf(h, "\x00%d", salt)
		v = h.Sum64()
	}
	v ^= v >> 33 // murmur3 fmix64
	v *= 0xff51afd7ed558ccd
	v ^= v >> 33
	v *= 0xc4ceb9fe1a85ec53
	v ^= v >> 33
	b := make([]byte, 6)
	for i := range b {
		b[i] = idAlphabet[v&31]
		v >>= 5
	}
	return string(b)
}

// NormalizeReviewID is the lookup form of a typed id: trimmed, lowercased,
// a leading '#' dropped, and the Crockford look-alikes i/l → 1, o → 0.
func NormalizeReviewID(id string) string {
	id = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(id), "#"))
	return strings.Map(func(r rune) rune {
		switch r {
		case 'i', 'l':
			return '1'
		case 'o':
			return '0'
		}
		return r
	}, id)
}

// reviewBucketsExist is false when the store predates the queue (a
// read-only open of an older file, before Open created the buckets): the
// queue is then empty.
func (tx *Tx) reviewBucketsExist() bool { return tx.b(bReviews) != nil }

func (tx *Tx) reviewBySeq(seq uint64) (*ReviewRec, error) {
	v := tx.b(bReviews).Get(u64(seq))
	if v == nil {
		return nil, nil
	}
	return decodeReview(seq, v)
}

// ReviewByID returns the item with a public id (see NormalizeReviewID), or
// nil.
func (tx *Tx) ReviewByID(id string) (*ReviewRec, error) {
	if !tx.reviewBucketsExist() {
		return nil, nil
	}
	v := tx.b(bReviewID).Get([]byte(NormalizeReviewID(id)))
	if len(v) != 8 {
		return nil, nil
	}
	return tx.reviewBySeq(binary.BigEndian.Uint64(v))
}

// ReviewByKey returns the item with an idempotency key, or nil.
func (tx *Tx) ReviewByKey(k uint64) (*ReviewRec, error) {
	if !tx.reviewBucketsExist() {
		return nil, nil
	}
	v := tx.b(bReviewKey).Get(u64(k))
	if len(v) != 8 {
		return nil, nil
	}
	return tx.reviewBySeq(binary.BigEndian.Uint64(v))
}

// orderKeys are the review_order entries of an item in a given status.
func orderKeys(typ, status string, seq uint64) [][]byte {
	mk := func(t, class string) []byte { return append(key(t, class, ""), u64(seq)...) }
	ks := [][]byte{mk("", status), mk(typ, status), mk(typ, ReviewClassAll)}
	if status != ReviewPending {
		ks = append(ks, mk("", ReviewClassResolved), mk(typ, ReviewClassResolved))
	}
	return ks
}

// countKey is the review_counts key of a type, status and decider (none:
// the two-part key, as stores before deciders have it).
func countKey(typ, status, by string) []byte {
	if by == "" {
		return key(typ, status)
	}
	return key(typ, status, by)
}

func (tx *Tx) addReviewCount(typ, status, by string, delta int) error {
	b := tx.b(bReviewCounts)
	k := countKey(typ, status, by)
	v := int64(0)
	if old := b.Get(k); len(old) == 8 {
		v = int64(binary.BigEndian.Uint64(old))
	}
	v += int64(delta)
	if v <= 0 {
		return b.Delete(k)
	}
	return b.Put(k, u64(uint64(v)))
}

// PutReview stores r. A new item (Seq 0) gets the next queue position,
// written back into r, and a public id: r.ID when it is given and free
// (an id the journal recorded), else one derived from its key (salted
// until free), written back into r. Its Key must not be taken
// (errs.Conflict). An existing item is rewritten in place: its type and
// key cannot change, and an item whose stored status is terminal cannot
// be rewritten at all (errs.Conflict naming the status) — a decision,
// once made, stands.
func (tx *Tx) PutReview(r *ReviewRec) error {
	if r.Type == "" || r.Status == "" {
		return errs.E(errs.Internal, "review item without type or status")
	}
	if r.Seq == 0 {
		return tx.addReview(r)
	}
	bRev, bOrd := tx.b(bReviews), tx.b(bReviewOrder)
	old, err := tx.reviewBySeq(r.Seq)
	if err != nil {
		return err
	}
	if old == nil {
		return errs.E(errs.NotFound, "review item %s does not exist", r.ID)
	}
	if old.Terminal() {
		return errs.E(errs.Conflict, "review item %s is already %s; a decided item is never changed", old.ID, old.Status)
	}
	if old.Type != r.Type || old.Key != r.Key || old.ID != r.ID {
		return errs.E(errs.Internal, "review item %s: type, key and id cannot change", old.ID)
	}
	if old.Status != r.Status {
		for _, k := range orderKeys(old.Type, old.Status, r.Seq) {
			if err := bOrd.Delete(k); err != nil {
				return err
			}
		}
		for _, k := range orderKeys(r.Type, r.Status, r.Seq) {
			if err := bOrd.Put(k, []byte{}); err != nil {
				return err
			}
		}
	}
	if old.Status != r.Status || old.DecidedBy != r.DecidedBy {
		if err := tx.addReviewCount(old.Type, old.Status, old.DecidedBy, -1); err != nil {
			return err
		}
		if err := tx.addReviewCount(r.Type, r.Status, r.DecidedBy, 1); err != nil {
			return err
		}
	}
	return bRev.Put(u64(r.Seq), encodeReview(r))
}

// addReview stores a new item (PutReview).
func (tx *Tx) addReview(r *ReviewRec) error {
	bRev, bID, bKey, bOrd := tx.b(bReviews), tx.b(bReviewID), tx.b(bReviewKey), tx.b(bReviewOrder)
	if bKey.Get(u64(r.Key)) != nil {
		return errs.E(errs.Conflict, "a review item with this key already exists")
	}
	seq, err := bRev.NextSequence()
	if err != nil {
		return err
	}
	r.Seq = seq
	if want := NormalizeReviewID(r.ID); want == "" || !validReviewID(want) || bID.Get([]byte(want)) != nil {
		for salt := 0; ; salt++ {
			id := reviewID(r.Key, salt)
			if bID.Get([]byte(id)) == nil {
				r.ID = id
				break
			}
		}
	} else {
		r.ID = want
	}
	if err := bID.Put([]byte(r.ID), u64(seq)); err != nil {
		return err
	}
	if err := bKey.Put(u64(r.Key), u64(seq)); err != nil {
		return err
	}
	for _, k := range orderKeys(r.Type, r.Status, seq) {
		if err := bOrd.Put(k, []byte{}); err != nil {
			return err
		}
	}
	if err := tx.addReviewCount(r.Type, r.Status, r.DecidedBy, 1); err != nil {
		return err
	}
	return bRev.Put(u64(seq), encodeReview(r))
}

// validReviewID reports whether id (normalized) is a public id as
// reviewID makes them: six characters of the id alphabet.
func validReviewID(id string) bool {
	if len(id) != 6 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !strings.ContainsRune(idAlphabet, rune(id[i])) {
			return false
		}
	}
	return true
}

// ReviewFilter selects items for ListReviews.
type ReviewFilter struct {
	Type   string // "" = any type
	Class  string // a status, ReviewClassResolved or ReviewClassAll ("" = all)
	Offset int
	Limit  int
	// Match, when set, keeps only the items it accepts (origin, text):
	// the total then counts the accepted items, found by walking the
	// whole class once instead of read from the counters.
	Match func(*ReviewRec) bool
}

// ListReviews returns the items matching f in queue order (oldest first),
// skipping Offset and returning at most Limit, with the total number that
// match. Without Match, the total comes from counters and the page of
// results from one cursor walk over an order index, so the cost does not
// grow with the number of items outside the page (beyond skipping Offset
// keys). With Match, one walk over the class counts the accepted items.
func (tx *Tx) ListReviews(f ReviewFilter) ([]*ReviewRec, int, error) {
	if !tx.reviewBucketsExist() {
		return nil, 0, nil
	}
	if f.Class == "" {
		f.Class = ReviewClassAll
	}
	var out []*ReviewRec
	if f.Match != nil {
		total := 0
		err := tx.walkReviews(f.Type, f.Class, 0, func(r *ReviewRec) bool {
			if f.Match(r) {
				if total >= f.Offset && len(out) < f.Limit {
					out = append(out, r)
				}
				total++
			}
			return true
		})
		return out, total, err
	}
	total := tx.reviewTotal(f.Type, f.Class)
	if f.Limit <= 0 || f.Offset >= total {
		return nil, total, nil
	}
	err := tx.walkReviews(f.Type, f.Class, f.Offset, func(r *ReviewRec) bool {
		out = append(out, r)
		return len(out) < f.Limit
	})
	return out, total, err
}

// walkReviews calls fn with every item of a type ("" = any) and class in
// queue order, after skipping the first skip items without decoding them;
// fn returning false stops. fn must not write to tx.
func (tx *Tx) walkReviews(typ, class string, skip int, fn func(r *ReviewRec) bool) error {
	if typ == "" && class == ReviewClassAll {
		c := tx.b(bReviews).Cursor()
		i := 0
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if i++; i <= skip {
				continue
			}
			r, err := decodeReview(binary.BigEndian.Uint64(k), v)
			if err != nil {
				return err
			}
			if !fn(r) {
				return nil
			}
		}
		return nil
	}
	prefix := key(typ, class, "")
	c := tx.b(bReviewOrder).Cursor()
	i := 0
	for k, _ := c.Seek(prefix); k != nil && hasPrefixBytes(k, prefix); k, _ = c.Next() {
		if i++; i <= skip || len(k) != len(prefix)+8 {
			continue
		}
		r, err := tx.reviewBySeq(binary.BigEndian.Uint64(k[len(prefix):]))
		if err != nil {
			return err
		}
		if r != nil && !fn(r) {
			return nil
		}
	}
	return nil
}

// reviewTotal sums the counters for a type ("" = any) and class.
func (tx *Tx) reviewTotal(typ, class string) int {
	total := 0
	for t, byStatus := range tx.reviewCounts() {
		if typ != "" && t != typ {
			continue
		}
		for s, n := range byStatus {
			if inClass(s, class) {
				total += n
			}
		}
	}
	return total
}

// inClass reports whether items of status belong to class.
func inClass(status, class string) bool {
	return class == ReviewClassAll || class == ReviewClassResolved && status != ReviewPending || class == status
}

// reviewCounts returns the number of items by type, then status.
func (tx *Tx) reviewCounts() map[string]map[string]int {
	out := map[string]map[string]int{}
	tx.eachReviewCount(func(t, s, _ string, n int) {
		if out[t] == nil {
			out[t] = map[string]int{}
		}
		out[t][s] += n
	})
	return out
}

// eachReviewCount calls fn with every counter: type, status, decider ("" =
// none) and count.
func (tx *Tx) eachReviewCount(fn func(typ, status, by string, n int)) {
	c := tx.b(bReviewCounts).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		parts := strings.SplitN(string(k), "\x00", 3)
		if len(parts) < 2 || len(v) != 8 {
			continue
		}
		by := ""
		if len(parts) == 3 {
			by = parts[2]
		}
		fn(parts[0], parts[1], by, int(binary.BigEndian.Uint64(v)))
	}
}

// ReviewDeciderCounts returns the number of decided items by status, then
// by who decided them (DecidedBy; "" for items decided before deciders
// were recorded).
func (tx *Tx) ReviewDeciderCounts() map[string]map[string]int {
	out := map[string]map[string]int{}
	if !tx.reviewBucketsExist() {
		return out
	}
	tx.eachReviewCount(func(_, s, by string, n int) {
		if s == ReviewPending {
			return
		}
		if out[s] == nil {
			out[s] = map[string]int{}
		}
		out[s][by] += n
	})
	return out
}

// EachReview calls fn with every item in queue order; fn returning false
// stops. fn must not write to tx.
func (tx *Tx) EachReview(fn func(r *ReviewRec) bool) error {
	if !tx.reviewBucketsExist() {
		return nil
	}
	return tx.walkReviews("", ReviewClassAll, 0, fn)
}

// ReviewTypeCounts counts the items of a class by type from the stored
// counts, without reading an item.
func (tx *Tx) ReviewTypeCounts(class string) map[string]int {
	out := map[string]int{}
	if !tx.reviewBucketsExist() {
		return out
	}
	if class == "" {
		class = ReviewClassAll
	}
	for t, byStatus := range tx.reviewCounts() {
		for s, n := range byStatus {
			if n > 0 && inClass(s, class) {
				out[t] += n
			}
		}
	}
	return out
}

// ReviewCount returns the number of items in the queue.
func (tx *Tx) ReviewCount() int {
	if !tx.reviewBucketsExist() {
		return 0
	}
	return tx.reviewTotal("", ReviewClassAll)
}

// ReplaceReviews makes recs the whole queue, in that order (queue
// positions 1…n, written back into each record), as a replay of the
// journal does: the review buckets are emptied and each is filled in its
// key order (a random insertion order into one transaction costs bbolt
// a copy of the growing page per key: minutes at 100,000 items). Each
// item keeps its ID when it is well formed and not taken by an earlier
// one, else gets the id of its key, salted until free; written back.
// Keys must be distinct.
func (tx *Tx) ReplaceReviews(recs []*ReviewRec) error {
	if err := tx.ResetReviews(); err != nil {
		return err
	}
	ids := make(map[string]bool, len(recs))
	type kv struct{ k, v []byte }
	var byID, byKey, order []kv
	counts := map[string]uint64{}
	bRev := tx.b(bReviews)
	bRev.FillPercent = 0.9 // appended in key order
	for i, r := range recs {
		if r.Type == "" || r.Status == "" {
			return errs.E(errs.Internal, "review item without type or status")
		}
		r.Seq = uint64(i + 1)
		if want := NormalizeReviewID(r.ID); validReviewID(want) && !ids[want] {
			r.ID = want
		} else {
			for salt := 0; ; salt++ {
				if id := reviewID(r.Key, salt); !ids[id] {
					r.ID = id
					break
				}
			}
		}
		ids[r.ID] = true
		seq := u64(r.Seq)
		byID = append(byID, kv{[]byte(r.ID), seq})
		byKey = append(byKey, kv{u64(r.Key), seq})
		for _, k := range orderKeys(r.Type, r.Status, r.Seq) {
			order = append(order, kv{k, []byte{}})
		}
		counts[string(countKey(r.Type, r.Status, r.DecidedBy))]++
		if err := bRev.Put(seq, encodeReview(r)); err != nil {
			return err
		}
	}
	if err := bRev.SetSequence(uint64(len(recs))); err != nil {
		return err
	}
	var cs []kv
	for k, n := range counts {
		cs = append(cs, kv{[]byte(k), u64(n)})
	}
	for _, set := range []struct {
		bucket []byte
		kvs    []kv
	}{{bReviewID, byID}, {bReviewKey, byKey}, {bReviewOrder, order}, {bReviewCounts, cs}} {
		slices.SortFunc(set.kvs, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
		b := tx.b(set.bucket)
		b.FillPercent = 0.9
		for i, e := range set.kvs {
			if i > 0 && bytes.Equal(e.k, set.kvs[i-1].k) {
				return errs.E(errs.Internal, "two review items share a key")
			}
			if err := b.Put(e.k, e.v); err != nil {
				return err
			}
		}
	}
	return nil
}

// ResetReviews empties the review queue (its buckets dropped and made
// again, the queue positions starting over): what a replay of the journal
// does before it stores the items again.
func (tx *Tx) ResetReviews() error {
	for _, name := range [][]byte{bReviews, bReviewID, bReviewKey, bReviewOrder, bReviewCounts} {
		if tx.tx.Bucket(name) != nil {
			if err := tx.tx.DeleteBucket(name); err != nil {
				return fmt.Errorf("drop %s: %w", name, err)
			}
		}
		if _, err := tx.tx.CreateBucket(name); err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
	}
	return nil
}

// ReviewStatusCounts returns the number of items in each status (statuses
// with no items are absent).
func (tx *Tx) ReviewStatusCounts() map[string]int {
	out := map[string]int{}
	if !tx.reviewBucketsExist() {
		return out
	}
	for _, byStatus := range tx.reviewCounts() {
		for s, n := range byStatus {
			out[s] += n
		}
	}
	return out
}

// EachPendingReview calls fn with every pending item of a type ("" = any)
// in queue order; fn returning false stops. fn must not write to tx.
func (tx *Tx) EachPendingReview(typ string, fn func(r *ReviewRec) bool) error {
	if !tx.reviewBucketsExist() {
		return nil
	}
	return tx.walkReviews(typ, ReviewPending, 0, fn)
}
