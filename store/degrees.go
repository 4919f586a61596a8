package store

import (
	"encoding/binary"
)

// The degree table: every graph node's accounted degree (AdjRec.Deg) in
// fixed chunks, so that weighing an edge (adamic_adar sums 1/ln(deg) over
// the common neighbours of its ends) reads a few chunks instead of one
// adjacency record per common neighbour: a relink at 100,000 pages looked
// up 60,000–80,000 distinct degrees, each a B+tree descent to its own page.
//
//	adj_deg                  u32 chunk (doc >> 10) → 1024 × u32 big-endian (the Deg of docs chunk·1024 … chunk·1024+1023; 0: no node)
//	  "v"                    → 1: the table is complete (every node's Deg is in it)
//
// It is derived (dropped by ResetDerived) and kept exact by PutAdj and
// DeleteAdj while it is complete. A store without a complete table (one
// indexed by an older synapse, or a graph being rebuilt) reads each Deg
// from the adjacency record, as before, until BuildAdjDegrees or
// PutAdjDegrees completes it.
var bAdjDeg = []byte("adj_deg")

func init() { registerDerived(string(bAdjDeg)) }

const (
	degChunkBits = 10
	degChunk     = 1 << degChunkBits
)

var degComplete = []byte("v")

// degTable is a write transaction's view of the degree table: the chunks
// it read (slices of the mapped file or of values it put), by chunk.
type degTable struct {
	complete int8 // 0 unknown, 1 complete, -1 not
	chunks   map[uint32][]byte
}

func (tx *Tx) degs() *degTable {
	if tx.deg == nil {
		tx.deg = &degTable{chunks: map[uint32][]byte{}}
	}
	return tx.deg
}

// AdjDegreesComplete reports whether the degree table holds every node's
// Deg.
func (tx *Tx) AdjDegreesComplete() bool {
	d := tx.degs()
	if d.complete == 0 {
		d.complete = -1
		if b := tx.b(bAdjDeg); b != nil && b.Get(degComplete) != nil {
			d.complete = 1
		}
	}
	return d.complete > 0
}

// chunk returns the stored chunk c (nil when absent).
func (tx *Tx) degChunk(c uint32) []byte {
	d := tx.degs()
	if v, ok := d.chunks[c]; ok {
		return v
	}
	v := tx.b(bAdjDeg).Get(u32(c))
	if len(v) != degChunk*4 {
		v = nil
	}
	d.chunks[c] = v
	return v
}

// tableDeg returns doc's Deg from the (complete) table.
func (tx *Tx) tableDeg(doc uint32) uint32 {
	v := tx.degChunk(doc >> degChunkBits)
	if v == nil {
		return 0
	}
	i := int(doc&(degChunk-1)) * 4
	return binary.BigEndian.Uint32(v[i : i+4])
}

// setTableDeg records doc's Deg in the (complete) table; a chunk is
// copied and put only when the value changes.
func (tx *Tx) setTableDeg(doc, deg uint32) error {
	c := doc >> degChunkBits
	v := tx.degChunk(c)
	i := int(doc&(degChunk-1)) * 4
	if v == nil {
		if deg == 0 {
			return nil
		}
	} else if binary.BigEndian.Uint32(v[i:i+4]) == deg {
		return nil
	}
	nv := make([]byte, degChunk*4)
	copy(nv, v)
	binary.BigEndian.PutUint32(nv[i:i+4], deg)
	if err := tx.b(bAdjDeg).Put(u32(c), nv); err != nil {
		return err
	}
	tx.degs().chunks[c] = nv
	return nil
}

// DropAdjDegrees empties the degree table and marks it incomplete (a
// graph rebuild writes every node, then PutAdjDegrees).
func (tx *Tx) DropAdjDegrees() error {
	if err := tx.tx.DeleteBucket(bAdjDeg); err != nil && tx.tx.Bucket(bAdjDeg) != nil {
		return err
	}
	if _, err := tx.tx.CreateBucket(bAdjDeg); err != nil {
		return err
	}
	tx.deg = &degTable{complete: -1, chunks: map[uint32][]byte{}}
	return nil
}

// PutAdjDegrees replaces the degree table by degs (degs[doc] is doc's
// Deg) and marks it complete.
func (tx *Tx) PutAdjDegrees(degs []uint32) error {
	if err := tx.DropAdjDegrees(); err != nil {
		return err
	}
	b := tx.b(bAdjDeg)
	for lo := 0; lo < len(degs); lo += degChunk {
		hi := min(lo+degChunk, len(degs))
		var v []byte
		for d := lo; d < hi; d++ {
			if degs[d] != 0 {
				if v == nil {
					v = make([]byte, degChunk*4)
				}
				binary.BigEndian.PutUint32(v[(d-lo)*4:], degs[d])
			}
		}
		if v != nil {
			if err := b.Put(u32(uint32(lo>>degChunkBits)), v); err != nil {
				return err
			}
		}
	}
	if err := b.Put(degComplete, []byte{1}); err != nil {
		return err
	}
	tx.deg = &degTable{complete: 1, chunks: map[uint32][]byte{}}
	return nil
}

// BuildAdjDegrees completes the degree table from the adjacency records'
// headers (a store indexed before the table existed); nothing when it is
// complete.
func (tx *Tx) BuildAdjDegrees() error {
	if tx.AdjDegreesComplete() {
		return nil
	}
	var degs []uint32
	c := tx.b(bAdj).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		doc := getU32(k)
		if int(doc) >= len(degs) {
			degs = append(degs, make([]uint32, int(doc)+1-len(degs))...)
		}
		degs[doc] = headerDeg(v)
	}
	return tx.PutAdjDegrees(degs)
}

// headerDeg reads Deg from an encoded AdjRec without decoding its edges.
func headerDeg(v []byte) uint32 {
	r := reader{b: v}
	_ = r.str()
	d := r.uvarint()
	if r.err != nil {
		return 0
	}
	return uint32(d)
}
