package store

import "encoding/binary"

// Who holds a review item's claim (ReviewRec.ClaimNS): the id of the
// process acting on it, so that a claim whose process is gone (killed
// while it wrote the item's page) is stale at once rather than at its
// deadline.
//
//	review_claims (kept)   seq → u32 pid
var bReviewClaims = []byte("review_claims")

func init() { registerKept(string(bReviewClaims)) }

// SetClaimHolder records that process pid holds the claim on item seq.
func (tx *Tx) SetClaimHolder(seq uint64, pid int) error {
	return tx.b(bReviewClaims).Put(u64(seq), binary.BigEndian.AppendUint32(nil, uint32(pid)))
}

// ClearClaimHolder forgets who held the claim on item seq.
func (tx *Tx) ClearClaimHolder(seq uint64) error {
	if b := tx.b(bReviewClaims); b != nil && b.Get(u64(seq)) != nil {
		return b.Delete(u64(seq))
	}
	return nil
}

// ClaimHolderGone reports whether the process recorded as holding the
// claim on item seq has ended (false when none is recorded: the claim's
// deadline rules alone).
func (tx *Tx) ClaimHolderGone(seq uint64) bool {
	b := tx.b(bReviewClaims)
	if b == nil {
		return false
	}
	v := b.Get(u64(seq))
	return len(v) == 4 && !processAlive(int(binary.BigEndian.Uint32(v)))
}
