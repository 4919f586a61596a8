package store

// The review queue (docs/review.md) is the one thing in the store that exists
// nowhere else, so its buckets are kept: reindex and ResetDerived never
// touch them. Layout ("·" is a 0x00 separator, seq is 8 bytes big-endian):
//
//	reviews                  seq → ReviewRec (binary, see encodeReview); seq is the
//	                         queue position, handed out in increasing order and never reused
//	review_id                public id (6 Crockford base32 characters) → seq
//	review_key               idempotency key (8 bytes big-endian) → seq; one item per key
//	review_order             type · class · seq → ∅, where class is a status or "resolved"
//	                         (every terminal status) and type "" means any type; a typed
//	                         item also has type · "all" · seq. "Any type, any status" is
//	                         the reviews bucket itself. Cursor order is queue order.
//	review_counts            type · status → u64 number of items
//
// Items are never deleted. The domain rules (which statuses exist, which
// actions lead to them) live in package ops; the store enforces the one
// invariant that must hold whatever the caller: a terminal item (any status
// but "pending") is never rewritten.

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
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
}

// Terminal reports whether the item has been decided.
func (r *ReviewRec) Terminal() bool { return r.Status != ReviewPending }

const reviewCodecVersion = 1

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
	return b
}

func decodeReview(seq uint64, v []byte) (*ReviewRec, error) {
	if len(v) < 9 || v[0] != reviewCodecVersion {
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

func (tx *Tx) addReviewCount(typ, status string, delta int) error {
	b := tx.b(bReviewCounts)
	k := key(typ, status)
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

// PutReview stores r. A new item (Seq 0) gets the next queue position and
// a fresh public id, both written back into r; its Key must not be taken
// (errs.Conflict). An existing item is rewritten in place: its type and
// key cannot change, and an item whose stored status is terminal cannot
// be rewritten at all (errs.Conflict naming the status) — a decision,
// once made, stands.
func (tx *Tx) PutReview(r *ReviewRec) error {
	if r.Type == "" || r.Status == "" {
		return errs.E(errs.Internal, "review item without type or status")
	}
	bRev, bID, bKey, bOrd := tx.b(bReviews), tx.b(bReviewID), tx.b(bReviewKey), tx.b(bReviewOrder)
	if r.Seq == 0 {
		if bKey.Get(u64(r.Key)) != nil {
			return errs.E(errs.Conflict, "a review item with this key already exists")
		}
		seq, err := bRev.NextSequence()
		if err != nil {
			return err
		}
		r.Seq = seq
		for salt := 0; ; salt++ {
			id := reviewID(r.Key, salt)
			if bID.Get([]byte(id)) == nil {
				r.ID = id
				break
			}
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
		if err := tx.addReviewCount(r.Type, r.Status, 1); err != nil {
			return err
		}
		return bRev.Put(u64(seq), encodeReview(r))
	}
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
		if err := tx.addReviewCount(old.Type, old.Status, -1); err != nil {
			return err
		}
		if err := tx.addReviewCount(r.Type, r.Status, 1); err != nil {
			return err
		}
	}
	return bRev.Put(u64(r.Seq), encodeReview(r))
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
			switch {
			case class == ReviewClassAll,
				class == ReviewClassResolved && s != ReviewPending,
				class == s:
				total += n
			}
		}
	}
	return total
}

// reviewCounts returns the number of items by type, then status.
func (tx *Tx) reviewCounts() map[string]map[string]int {
	out := map[string]map[string]int{}
	c := tx.b(bReviewCounts).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		t, s, ok := strings.Cut(string(k), "\x00")
		if !ok || len(v) != 8 {
			continue
		}
		if out[t] == nil {
			out[t] = map[string]int{}
		}
		out[t][s] = int(binary.BigEndian.Uint64(v))
	}
	return out
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
