package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"
	"unsafe"
)

// Embedding vectors (issue 16). Package embed decides what a chunk is and
// how pages are ranked by meaning; this file decides how vectors and the
// pages' chunk lists are stored.
//
//	vec_meta   (kept)     "model" → model name the vectors were made by
//	                      "dim"   → u32 dimension of every vector
//	                      "epoch" → u32, bumped when vec_pages starts afresh
//	                      "run"   → JSON VecRun: the last embedding run
//	vectors    (kept)     chunk key (16 bytes) → quantized vector
//	vec_pages  (derived)  doc → chunk list of the page as it was embedded
//
// A chunk key is the first 16 bytes of the SHA-256 of the chunk's text as
// package embed cuts it (heading path and section text), so a vector is
// stored once per text and model however many pages hold that text, a
// renamed page finds its vectors again, and `synapse reindex` (which drops
// vec_pages with the other derived buckets) keeps every vector: the next
// embedding run re-links the pages to the vectors whose key is unchanged
// without asking the provider. Vectors no page refers to are removed by
// SweepVectors at the end of a complete run. Changing the model
// (SetVecModel) drops every vector and chunk list.
//
// A quantized vector is symmetric int8 of a unit-length vector:
//
//	f32 scale (little-endian IEEE 754), then dim × int8 q, with
//	x[i] ≈ scale · q[i] and scale = max|x| / 127
//
// so the cosine of a float query y with the stored x is scale · Σ q[i]·y[i]
// (error ≈ 0.004 for 512 dimensions).
//
// A chunk list is:
//
//	string file sha256 (hex) the chunks were cut from
//	uvarint n, then n × (16-byte chunk key, string heading path)
//
// (a string is a uvarint length and the bytes). The bucket's sequence
// number, with the epoch, is the generation VecGen reports: it changes on
// every write to vec_pages or vectors, so a reader may cache what it
// loaded from them for as long as the generation stands.

var (
	bVecMeta  = []byte("vec_meta")
	bVectors  = []byte("vectors")
	bVecPages = []byte("vec_pages")
)

func init() {
	registerKept("vec_meta", "vectors")
	registerDerived("vec_pages")
}

// ChunkKeyLen is the length of a chunk key.
const ChunkKeyLen = 16

// ChunkKey identifies a chunk's text (see the layout above).
type ChunkKey [ChunkKeyLen]byte

// VecChunk is one chunk of an embedded page.
type VecChunk struct {
	Key     ChunkKey
	Heading string // heading path, " > "-joined; "" for the text before the first heading
}

// VecPage is a page's chunk list as it was embedded.
type VecPage struct {
	SHA256 string // hash of the page file the chunks were cut from
	Chunks []VecChunk
}

// QVec is a quantized unit vector: x[i] ≈ Scale·Q[i]. Q read inside a
// transaction points into the store's memory and is valid only until the
// transaction ends; copy it to keep it.
type QVec struct {
	Scale float32
	Q     []int8
}

// VecRun records the last embedding run (for status).
type VecRun struct {
	At        time.Time `json:"at"`
	Model     string    `json:"model"`
	Complete  bool      `json:"complete"`        // every page was embedded when it ended
	Error     string    `json:"error,omitempty"` // why it stopped short
	Embedded  int       `json:"embedded"`        // chunks sent to the provider
	Reused    int       `json:"reused"`          // chunks whose vector was already stored
	DurationM int64     `json:"duration_ms"`
}

// VecModel returns the model and dimension the stored vectors were made
// with ("" and 0 when none are stored).
func (tx *Tx) VecModel() (model string, dim int) {
	m := tx.b(bVecMeta)
	return string(m.Get([]byte("model"))), int(getU32(m.Get([]byte("dim"))))
}

// SetVecModel records the model and dimension of the vectors. When either
// differs from what is recorded, every vector and every chunk list is
// dropped first (vectors of two models are never mixed).
func (tx *Tx) SetVecModel(model string, dim int) error {
	if model == "" || dim <= 0 {
		return fmt.Errorf("vector model %q with dimension %d", model, dim)
	}
	old, oldDim := tx.VecModel()
	if old == model && oldDim == dim {
		return nil
	}
	if err := tx.ClearVectors(); err != nil {
		return err
	}
	m := tx.b(bVecMeta)
	if err := m.Put([]byte("model"), []byte(model)); err != nil {
		return err
	}
	return m.Put([]byte("dim"), u32(uint32(dim)))
}

// ClearVectors drops every vector and chunk list and forgets the model.
func (tx *Tx) ClearVectors() error {
	for _, name := range [][]byte{bVectors, bVecPages} {
		if err := tx.tx.DeleteBucket(name); err != nil {
			return fmt.Errorf("drop %s: %w", name, err)
		}
		if _, err := tx.tx.CreateBucket(name); err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
	}
	m := tx.b(bVecMeta)
	for _, k := range []string{"model", "dim"} {
		if err := m.Delete([]byte(k)); err != nil {
			return err
		}
	}
	return tx.bumpVecGen()
}

// VecGen returns the generation of the vectors and chunk lists: equal
// generations mean equal contents.
func (tx *Tx) VecGen() uint64 {
	return uint64(getU32(tx.b(bVecMeta).Get([]byte("epoch"))))<<32 | tx.b(bVecPages).Sequence()&0xffffffff
}

// bumpVecGen moves the generation on; a vec_pages bucket started afresh
// (a reindex, a model change) starts a new epoch, so no generation is
// ever reported twice for different contents.
func (tx *Tx) bumpVecGen() error {
	b := tx.b(bVecPages)
	if b.Sequence() == 0 {
		m := tx.b(bVecMeta)
		if err := m.Put([]byte("epoch"), u32(getU32(m.Get([]byte("epoch")))+1)); err != nil {
			return err
		}
	}
	_, err := b.NextSequence()
	return err
}

// HasVector reports whether the vector of chunk k is stored.
func (tx *Tx) HasVector(k ChunkKey) bool { return tx.b(bVectors).Get(k[:]) != nil }

// Vector returns the stored vector of chunk k.
func (tx *Tx) Vector(k ChunkKey) (QVec, bool) {
	v := tx.b(bVectors).Get(k[:])
	if len(v) < 4 {
		return QVec{}, false
	}
	return QVec{Scale: math.Float32frombits(binary.LittleEndian.Uint32(v)), Q: bytesAsInt8(v[4:])}, true
}

// PutVector quantizes and stores the vector of chunk k. It must have the
// recorded dimension (SetVecModel first), finite components and a
// non-zero length; it is normalized to unit length before quantization.
func (tx *Tx) PutVector(k ChunkKey, x []float32) error {
	_, dim := tx.VecModel()
	if dim == 0 || len(x) != dim {
		return fmt.Errorf("vector of dimension %d, the store holds dimension %d", len(x), dim)
	}
	enc, err := QuantizeVector(x)
	if err != nil {
		return err
	}
	if err := tx.b(bVectors).Put(k[:], enc); err != nil {
		return err
	}
	return tx.bumpVecGen()
}

// QuantizeVector encodes x (finite, non-zero) as a unit int8 vector.
func QuantizeVector(x []float32) ([]byte, error) {
	var norm float64
	for _, f := range x {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, fmt.Errorf("vector has a non-finite component")
		}
		norm += float64(f) * float64(f)
	}
	if norm == 0 {
		return nil, fmt.Errorf("vector is all zeros")
	}
	inv := 1 / math.Sqrt(norm)
	maxAbs := 0.0
	for _, f := range x {
		maxAbs = max(maxAbs, math.Abs(float64(f)*inv))
	}
	scale := maxAbs / 127
	out := make([]byte, 4+len(x))
	binary.LittleEndian.PutUint32(out, math.Float32bits(float32(scale)))
	for i, f := range x {
		out[4+i] = byte(int8(math.Round(float64(f) * inv / scale)))
	}
	return out, nil
}

// VecPage returns the chunk list of doc.
func (tx *Tx) VecPage(doc uint32) (*VecPage, bool, error) {
	v := tx.b(bVecPages).Get(u32(doc))
	if v == nil {
		return nil, false, nil
	}
	p, err := decodeVecPage(v)
	if err != nil {
		return nil, false, fmt.Errorf("chunk list of page %d: %w", doc, err)
	}
	return p, true, nil
}

// PutVecPage stores the chunk list of doc. Every chunk's vector must be
// stored already, so a page is never listed with a vector missing.
func (tx *Tx) PutVecPage(doc uint32, p *VecPage) error {
	for _, c := range p.Chunks {
		if !tx.HasVector(c.Key) {
			return fmt.Errorf("chunk list of page %d: vector %x is not stored", doc, c.Key)
		}
	}
	if err := tx.b(bVecPages).Put(u32(doc), encodeVecPage(p)); err != nil {
		return err
	}
	return tx.bumpVecGen()
}

// DeleteVecPages removes the chunk lists of docs (pages that are gone).
// Their vectors stay until SweepVectors, so a page that comes back under
// another path (a rename) finds them.
func (tx *Tx) DeleteVecPages(docs []uint32) error {
	b := tx.b(bVecPages)
	changed := false
	for _, d := range docs {
		if b.Get(u32(d)) == nil {
			continue
		}
		if err := b.Delete(u32(d)); err != nil {
			return err
		}
		changed = true
	}
	if !changed {
		return nil
	}
	return tx.bumpVecGen()
}

// EachVecPage calls fn with every chunk list in doc order.
func (tx *Tx) EachVecPage(fn func(doc uint32, p *VecPage) error) error {
	c := tx.b(bVecPages).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		p, err := decodeVecPage(v)
		if err != nil {
			return fmt.Errorf("chunk list of page %d: %w", getU32(k), err)
		}
		if err := fn(getU32(k), p); err != nil {
			return err
		}
	}
	return nil
}

// HasVecPages reports whether any page has a chunk list (cheap, unlike
// VecCounts).
func (tx *Tx) HasVecPages() bool {
	k, _ := tx.b(bVecPages).Cursor().First()
	return k != nil
}

// VecCounts returns the number of pages with a chunk list and of stored
// vectors.
func (tx *Tx) VecCounts() (pages, vectors int) {
	return tx.b(bVecPages).Stats().KeyN, tx.b(bVectors).Stats().KeyN
}

// SweepVectors removes every vector no chunk list refers to and returns
// how many went.
func (tx *Tx) SweepVectors() (int, error) {
	used := map[ChunkKey]bool{}
	if err := tx.EachVecPage(func(_ uint32, p *VecPage) error {
		for _, c := range p.Chunks {
			used[c.Key] = true
		}
		return nil
	}); err != nil {
		return 0, err
	}
	var drop [][]byte
	c := tx.b(bVectors).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		var ck ChunkKey
		copy(ck[:], k)
		if len(k) != ChunkKeyLen || !used[ck] {
			drop = append(drop, append([]byte(nil), k...))
		}
	}
	b := tx.b(bVectors)
	for _, k := range drop {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	if len(drop) > 0 {
		if err := tx.bumpVecGen(); err != nil {
			return 0, err
		}
	}
	return len(drop), nil
}

// VecRun returns the record of the last embedding run.
func (tx *Tx) VecRun() (VecRun, bool) {
	var r VecRun
	v := tx.b(bVecMeta).Get([]byte("run"))
	if v == nil || json.Unmarshal(v, &r) != nil {
		return VecRun{}, false
	}
	return r, true
}

// SetVecRun records the last embedding run.
func (tx *Tx) SetVecRun(r VecRun) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return tx.b(bVecMeta).Put([]byte("run"), data)
}

func encodeVecPage(p *VecPage) []byte {
	b := appendStr(nil, p.SHA256)
	b = binary.AppendUvarint(b, uint64(len(p.Chunks)))
	for _, c := range p.Chunks {
		b = append(b, c.Key[:]...)
		b = appendStr(b, c.Heading)
	}
	return b
}

func decodeVecPage(v []byte) (*VecPage, error) {
	r := &reader{b: v}
	p := &VecPage{SHA256: r.str()}
	n := r.uvarint()
	if n > uint64(len(v)) {
		return nil, errCorrupt
	}
	p.Chunks = make([]VecChunk, 0, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		var c VecChunk
		copy(c.Key[:], r.bytes(ChunkKeyLen))
		c.Heading = r.str()
		p.Chunks = append(p.Chunks, c)
	}
	if r.err != nil {
		return nil, r.err
	}
	return p, nil
}

// bytesAsInt8 reinterprets b as int8s without copying.
func bytesAsInt8(b []byte) []int8 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(&b[0])), len(b))
}
