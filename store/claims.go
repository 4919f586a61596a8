package store

import "encoding/binary"

// Who holds a review item's claim (ReviewRec.ClaimNS): the id of the
// process acting on it, so that a claim whose process is gone (killed
// while it wrote the item's page) can be released at once rather than
// holding the item until its deadline. It is a fact of this machine, kept
// beside the queue, not in the review journal (another machine's process
// ids mean nothing here).
//
//	review_claims (kept)   item key → u32 pid
var bReviewClaims = []byte("review_claims")

func init() { registerKept(string(bReviewClaims)) }

// SetClaimHolder records that process pid holds the claim on the item
// with key k.
func (tx *Tx) SetClaimHolder(k uint64, pid int) error {
	return tx.b(bReviewClaims).Put(u64(k), binary.BigEndian.AppendUint32(nil, uint32(pid)))
}

// ClearClaimHolder forgets who held the claim on the item with key k.
func (tx *Tx) ClearClaimHolder(k uint64) error {
	if b := tx.b(bReviewClaims); b != nil && b.Get(u64(k)) != nil {
		return b.Delete(u64(k))
	}
	return nil
}

// GoneClaimHolders returns the keys of the items whose claim was taken by
// a process that has ended (not self, the calling process).
func (tx *Tx) GoneClaimHolders(self int) []uint64 {
	b := tx.b(bReviewClaims)
	if b == nil {
		return nil
	}
	var out []uint64
	_ = b.ForEach(func(k, v []byte) error {
		if len(k) == 8 && len(v) == 4 {
			if pid := int(binary.BigEndian.Uint32(v)); pid != self && !processAlive(pid) {
				out = append(out, binary.BigEndian.Uint64(k))
			}
		}
		return nil
	})
	return out
}
