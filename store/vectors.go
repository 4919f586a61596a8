package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sync/atomic"
	"time"
	"unsafe"
)

// Embedding vectors (optional semantic search). Package embed decides what a chunk is and
// how pages are ranked by meaning; this file decides how vectors and the
// pages' chunks are stored.
//
//	vec_meta   (kept)     "model"   → model name the vectors were made by
//	                      "dim"     → u32 dimension of every vector
//	                      "vectors" → u32 number of keys in vectors
//	                      "run"     → JSON VecRun: the last embedding run
//	                      "running" → JSON VecRunning: the run in progress
//	vectors    (kept)     chunk key (16 bytes) → quantized vector
//	vec_pages  (derived)  doc (4 bytes) → the page's chunks as embedded
//	                      "#counts"    → u32 pages, u32 chunks, u32 stale
//
// A chunk key is the first 16 bytes of the SHA-256 of the chunk's text as
// package embed cuts it (heading path and section text), so a vector is
// stored once per text and model however many pages hold that text, a
// renamed page finds its vectors again, and `synapse reindex` (which drops
// vec_pages with the other derived buckets) keeps every vector: the next
// embedding run re-links the pages to the vectors whose key is unchanged
// without asking the provider. Vectors no page refers to are removed by
// SweepVectors at the end of a complete run. Changing the model
// (SetVecModel) drops every vector and page.
//
// A quantized vector is symmetric int8 of a unit-length vector:
//
//	f32 scale (little-endian IEEE 754), then dim × int8 q, with
//	x[i] ≈ scale · q[i] and scale = max|x| / 127
//
// so the cosine of a float query y with the stored x is scale · Σ q[i]·y[i]
// (error ≈ 0.004 for 512 dimensions).
//
// A page's record holds a copy of its chunks' vectors, laid out so that a
// search reads them where they lie in the memory-mapped file, without
// decoding or copying (ScanVecPages): one record per page, its fixed-size
// arrays first.
//
//	byte     2 (the format)
//	byte     flags: 1 = stale (the page changed since it was embedded;
//	         only the chunks whose text it still holds are kept)
//	uvarint  n chunks, uvarint dim
//	string   file sha256 the chunks were cut from
//	n × f32  scales (little-endian)
//	n × w×8  sign bits of each vector, w = ⌈dim/64⌉ little-endian u64
//	         words (bit j set when q[j] > 0): the search's prefilter
//	n × dim  int8 q
//	n × 16   chunk keys
//	n × string heading paths (" > "-joined; "" before the first heading)
//
// (a string is a uvarint length and the bytes). The "#counts" key keeps
// the number of records, of their chunks and of stale records, so status
// never walks the records; records of an older format are not read (the
// next embedding run drops them and re-links the pages from vectors,
// without the provider).

var (
	bVecMeta  = []byte("vec_meta")
	bVectors  = []byte("vectors")
	bVecPages = []byte("vec_pages")
	kVecCount = []byte("#counts")
)

const vecFormat = 2

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
	// Stale says the page changed since: Chunks holds only the chunks
	// whose text the page still has, and the next run embeds it again.
	Stale  bool
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

// VecRunning marks an embedding run in progress, so that a second process
// does not start one beside it.
type VecRunning struct {
	PID   int       `json:"pid"`
	Token string    `json:"token"` // tells two runs of one process apart
	Since time.Time `json:"since"`
	What  string    `json:"what"` // the command, e.g. "synapse embed"
}

// VecStats counts what the vector buckets hold.
type VecStats struct {
	Pages   int // pages with a record
	Chunks  int // chunks in those records
	Stale   int // records of pages changed since they were embedded
	Vectors int // stored vectors
}

// VecModel returns the model and dimension the stored vectors were made
// with ("" and 0 when none are stored).
func (tx *Tx) VecModel() (model string, dim int) {
	m := tx.b(bVecMeta)
	return string(m.Get([]byte("model"))), int(getU32(m.Get([]byte("dim"))))
}

// SetVecModel records the model and dimension of the vectors. When either
// differs from what is recorded, every vector and every page record is
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

// ClearVectors drops every vector and page record and forgets the model.
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
	for _, k := range []string{"model", "dim", "vectors"} {
		if err := m.Delete([]byte(k)); err != nil {
			return err
		}
	}
	return nil
}

// VecStats returns the counts of the vector buckets (a few reads).
func (tx *Tx) VecStats() VecStats {
	c := tx.b(bVecPages).Get(kVecCount)
	s := VecStats{Vectors: int(getU32(tx.b(bVecMeta).Get([]byte("vectors"))))}
	if len(c) == 12 {
		s.Pages, s.Chunks, s.Stale = int(getU32(c)), int(getU32(c[4:])), int(getU32(c[8:]))
	}
	return s
}

// addVecCounts adds to the record counts.
func (tx *Tx) addVecCounts(pages, chunks, stale int) error {
	s := tx.VecStats()
	b := make([]byte, 0, 12)
	for _, v := range []int{s.Pages + pages, s.Chunks + chunks, s.Stale + stale} {
		b = append(b, u32(uint32(max(v, 0)))...)
	}
	return tx.b(bVecPages).Put(kVecCount, b)
}

// HasVecPages reports whether any page has a record.
func (tx *Tx) HasVecPages() bool { return tx.VecStats().Pages > 0 }

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
	b := tx.b(bVectors)
	if b.Get(k[:]) == nil {
		m := tx.b(bVecMeta)
		if err := m.Put([]byte("vectors"), u32(getU32(m.Get([]byte("vectors")))+1)); err != nil {
			return err
		}
	}
	return b.Put(k[:], enc)
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

// VecView is a page's record read in place: valid only inside the
// transaction that read it.
type VecView struct {
	N, Dim int
	SHA256 string
	Stale  bool
	scales []byte
	bits   []byte
	q      []byte
	keys   []byte
	heads  []byte
}

// Words is the number of u64 sign-bit words of a vector.
func (v *VecView) Words() int { return (v.Dim + 63) / 64 }

// Scale returns chunk i's scale.
func (v *VecView) Scale(i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(v.scales[4*i:]))
}

// Bits returns chunk i's sign bits: Words() little-endian u64 words.
func (v *VecView) Bits(i int) []byte { w := v.Words() * 8; return v.bits[i*w : (i+1)*w] }

// Q returns chunk i's int8 components.
func (v *VecView) Q(i int) []int8 { return bytesAsInt8(v.q[i*v.Dim : (i+1)*v.Dim]) }

// Key returns chunk i's key.
func (v *VecView) Key(i int) ChunkKey {
	var k ChunkKey
	copy(k[:], v.keys[i*ChunkKeyLen:])
	return k
}

// Headings decodes the heading paths of the chunks.
func (v *VecView) Headings() ([]string, error) {
	r := &reader{b: v.heads}
	out := make([]string, v.N)
	for i := range out {
		out[i] = r.str()
	}
	return out, r.err
}

// Page decodes the chunk list.
func (v *VecView) Page() (*VecPage, error) {
	hs, err := v.Headings()
	if err != nil {
		return nil, err
	}
	p := &VecPage{SHA256: v.SHA256, Stale: v.Stale, Chunks: make([]VecChunk, v.N)}
	for i := range p.Chunks {
		p.Chunks[i] = VecChunk{Key: v.Key(i), Heading: hs[i]}
	}
	return p, nil
}

// vecRecordsRead counts the page records read (VecRecordsRead).
var vecRecordsRead atomic.Int64

// VecRecordsRead returns how many page records this process has read: a
// test's way to check that an operation (status) reads none.
func VecRecordsRead() int64 { return vecRecordsRead.Load() }

// viewVec reads a record in place; ok is false for a record of another
// format.
func viewVec(b []byte) (VecView, bool, error) {
	vecRecordsRead.Add(1)
	if len(b) < 2 || b[0] != vecFormat {
		return VecView{}, false, nil
	}
	r := &reader{b: b[2:]}
	n, dim := r.uvarint(), r.uvarint()
	sha := r.str()
	if r.err != nil || n > uint64(len(b)) || dim > 1<<20 {
		return VecView{}, false, errCorrupt
	}
	v := VecView{N: int(n), Dim: int(dim), SHA256: sha, Stale: b[1]&1 != 0}
	w := v.Words() * 8
	v.scales = r.bytes(v.N * 4)
	v.bits = r.bytes(v.N * w)
	v.q = r.bytes(v.N * v.Dim)
	v.keys = r.bytes(v.N * ChunkKeyLen)
	v.heads = r.b
	if r.err != nil {
		return VecView{}, false, r.err
	}
	return v, true, nil
}

// VecPage returns the chunk list of doc.
func (tx *Tx) VecPage(doc uint32) (*VecPage, bool, error) {
	v, ok, err := tx.VecView(doc)
	if !ok || err != nil {
		return nil, false, err
	}
	p, err := v.Page()
	if err != nil {
		return nil, false, fmt.Errorf("chunk list of page %d: %w", doc, err)
	}
	return p, true, nil
}

// VecView returns doc's record in place.
func (tx *Tx) VecView(doc uint32) (VecView, bool, error) {
	v, ok, err := viewVec(tx.b(bVecPages).Get(u32(doc)))
	if err != nil {
		return v, false, fmt.Errorf("chunk list of page %d: %w", doc, err)
	}
	return v, ok, nil
}

// PutVecPage stores the record of doc: its chunk list and a copy of each
// chunk's vector. Every chunk's vector must be stored already, so a page
// is never listed with a vector missing.
func (tx *Tx) PutVecPage(doc uint32, p *VecPage) error {
	_, dim := tx.VecModel()
	vecs := make([]QVec, len(p.Chunks))
	for i, c := range p.Chunks {
		v, ok := tx.Vector(c.Key)
		if !ok || len(v.Q) != dim {
			return fmt.Errorf("chunk list of page %d: vector %x is not stored", doc, c.Key)
		}
		vecs[i] = v
	}
	return tx.putVecRecord(doc, p, dim, vecs)
}

func (tx *Tx) putVecRecord(doc uint32, p *VecPage, dim int, vecs []QVec) error {
	b := tx.b(bVecPages)
	dp, dc, ds := 1, len(p.Chunks), 0
	if p.Stale {
		ds = 1
	}
	if old, ok, _ := viewVec(b.Get(u32(doc))); ok {
		dp, dc = 0, dc-old.N
		if old.Stale {
			ds--
		}
	}
	flags := byte(0)
	if p.Stale {
		flags = 1
	}
	n, words := len(p.Chunks), (dim+63)/64
	rec := make([]byte, 0, 32+len(p.SHA256)+n*(4+words*8+dim+ChunkKeyLen+16))
	rec = append(rec, vecFormat, flags)
	rec = binary.AppendUvarint(rec, uint64(n))
	rec = binary.AppendUvarint(rec, uint64(dim))
	rec = appendStr(rec, p.SHA256)
	for _, v := range vecs {
		rec = binary.LittleEndian.AppendUint32(rec, math.Float32bits(v.Scale))
	}
	for _, v := range vecs {
		ws := make([]uint64, words)
		for j, x := range v.Q {
			if x > 0 {
				ws[j/64] |= 1 << (j % 64)
			}
		}
		for _, w := range ws {
			rec = binary.LittleEndian.AppendUint64(rec, w)
		}
	}
	for _, v := range vecs {
		rec = append(rec, int8AsBytes(v.Q)...)
	}
	for _, c := range p.Chunks {
		rec = append(rec, c.Key[:]...)
	}
	for _, c := range p.Chunks {
		rec = appendStr(rec, c.Heading)
	}
	if err := b.Put(u32(doc), rec); err != nil {
		return err
	}
	return tx.addVecCounts(dp, dc, ds)
}

// TrimVecPage rewrites doc's record after its page changed: only the
// chunks keep accepts (nil: all) stay, and stale says whether the page
// still differs from what was embedded (the next run embeds it again). A
// page without a record has none afterwards, nor one with no chunk kept.
func (tx *Tx) TrimVecPage(doc uint32, keep func(ChunkKey) bool, stale bool) error {
	v, ok, err := tx.VecView(doc)
	if !ok || err != nil {
		return err
	}
	p, err := v.Page()
	if err != nil {
		return err
	}
	np := &VecPage{SHA256: p.SHA256, Stale: stale}
	var vecs []QVec
	for i, c := range p.Chunks {
		if keep == nil || keep(c.Key) {
			np.Chunks = append(np.Chunks, c)
			// copied: the record is rewritten below
			vecs = append(vecs, QVec{Scale: v.Scale(i), Q: append([]int8(nil), v.Q(i)...)})
		}
	}
	if len(np.Chunks) == 0 {
		return tx.DeleteVecPages([]uint32{doc})
	}
	return tx.putVecRecord(doc, np, v.Dim, vecs)
}

// DeleteVecPages removes the records of docs (pages that are gone).
// Their vectors stay until SweepVectors, so a page that comes back under
// another path (a rename) finds them.
func (tx *Tx) DeleteVecPages(docs []uint32) error {
	b := tx.b(bVecPages)
	for _, d := range docs {
		raw := b.Get(u32(d))
		if raw == nil {
			continue
		}
		old, ok, _ := viewVec(raw)
		if err := b.Delete(u32(d)); err != nil {
			return err
		}
		if ok {
			ds := 0
			if old.Stale {
				ds = -1
			}
			if err := tx.addVecCounts(-1, -old.N, ds); err != nil {
				return err
			}
		}
	}
	return nil
}

// ScanVecPages calls fn with every record in doc order, read in place
// (valid only inside tx). Records of another format are skipped.
func (tx *Tx) ScanVecPages(fn func(doc uint32, v *VecView) error) error {
	c := tx.b(bVecPages).Cursor()
	for k, raw := c.First(); k != nil; k, raw = c.Next() {
		if len(k) != 4 {
			continue
		}
		v, ok, err := viewVec(raw)
		if err != nil {
			return fmt.Errorf("chunk list of page %d: %w", getU32(k), err)
		}
		if !ok {
			continue
		}
		if err := fn(getU32(k), &v); err != nil {
			return err
		}
	}
	return nil
}

// EachVecPage calls fn with every chunk list in doc order.
func (tx *Tx) EachVecPage(fn func(doc uint32, p *VecPage) error) error {
	return tx.ScanVecPages(func(doc uint32, v *VecView) error {
		p, err := v.Page()
		if err != nil {
			return fmt.Errorf("chunk list of page %d: %w", doc, err)
		}
		return fn(doc, p)
	})
}

// DropOldVecPages removes the records of an older format (the next run
// writes them again from the stored vectors) and reports how many went.
func (tx *Tx) DropOldVecPages() (int, error) {
	b := tx.b(bVecPages)
	if b.Get(kVecCount) != nil {
		return 0, nil // written by this format from the start
	}
	var old [][]byte
	c := b.Cursor()
	for k, raw := c.First(); k != nil; k, raw = c.Next() {
		if _, ok, _ := viewVec(raw); !ok {
			old = append(old, append([]byte(nil), k...))
		}
	}
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(old), tx.addVecCounts(0, 0, 0)
}

// SweepVectors removes every vector no page record refers to and returns
// how many went.
func (tx *Tx) SweepVectors() (int, error) {
	used := map[ChunkKey]bool{}
	if err := tx.ScanVecPages(func(_ uint32, v *VecView) error {
		for i := range v.N {
			used[v.Key(i)] = true
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
		m := tx.b(bVecMeta)
		n := int(getU32(m.Get([]byte("vectors")))) - len(drop)
		if err := m.Put([]byte("vectors"), u32(uint32(max(n, 0)))); err != nil {
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

// VecRunning returns the mark of the run in progress, if a live process
// holds one (a mark left by a process that is gone does not count).
func (tx *Tx) VecRunning() (VecRunning, bool) {
	var r VecRunning
	v := tx.b(bVecMeta).Get([]byte("running"))
	if v == nil || json.Unmarshal(v, &r) != nil || r.PID == 0 || !processAlive(r.PID) {
		return VecRunning{}, false
	}
	return r, true
}

// SetVecRunning marks a run in progress (nil: none).
func (tx *Tx) SetVecRunning(r *VecRunning) error {
	m := tx.b(bVecMeta)
	if r == nil {
		return m.Delete([]byte("running"))
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return m.Put([]byte("running"), data)
}

// bytesAsInt8 reinterprets b as int8s without copying.
func bytesAsInt8(b []byte) []int8 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(&b[0])), len(b))
}

// int8AsBytes reinterprets q as bytes without copying.
func int8AsBytes(q []int8) []byte {
	if len(q) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&q[0])), len(q))
}
