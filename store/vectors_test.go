package store

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

func openVec(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "s.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func key16(b byte) ChunkKey {
	var k ChunkKey
	k[0] = b
	return k
}

func randVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// TestVectors_Quantize: a stored vector's cosine with a float query is
// within 0.01 of the exact cosine.
func TestVectors_Quantize(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		x, y := randVec(r, 512), randVec(r, 512)
		// make them correlated so cosines span a range
		for i := range y {
			y[i] = 0.6*x[i] + 0.4*y[i]
		}
		enc, err := QuantizeVector(x)
		if err != nil {
			t.Fatal(err)
		}
		q := QVec{Scale: math.Float32frombits(uint32(enc[0]) | uint32(enc[1])<<8 | uint32(enc[2])<<16 | uint32(enc[3])<<24), Q: bytesAsInt8(enc[4:])}
		var dot, nx, ny, qd float64
		for i := range x {
			dot += float64(x[i]) * float64(y[i])
			nx += float64(x[i]) * float64(x[i])
			ny += float64(y[i]) * float64(y[i])
			qd += float64(q.Q[i]) * float64(y[i])
		}
		exact := dot / math.Sqrt(nx*ny)
		got := float64(q.Scale) * qd / math.Sqrt(ny)
		if math.Abs(exact-got) > 0.01 {
			t.Fatalf("cosine %.4f, quantized %.4f", exact, got)
		}
	}
	for _, bad := range [][]float32{{0, 0, 0}, {1, float32(math.NaN()), 0}, {float32(math.Inf(1)), 0, 0}} {
		if _, err := QuantizeVector(bad); err == nil {
			t.Errorf("QuantizeVector(%v) accepted", bad)
		}
	}
}

// TestVectors_Lifecycle: vectors need a model, keep their dimension, are
// listed by pages only once stored, survive a reindex (ResetDerived)
// while page records do not, and are dropped when the model changes or no
// page refers to them (SweepVectors). The counts status reads (VecStats)
// follow every change without a walk of the records.
func TestVectors_Lifecycle(t *testing.T) {
	s := openVec(t)
	r := rand.New(rand.NewPCG(3, 4))
	counts := func(what string, want VecStats) {
		t.Helper()
		var got VecStats
		_ = s.View(func(tx *Tx) error { got = tx.VecStats(); return nil })
		if got != want {
			t.Errorf("%s: counts %+v, want %+v", what, got, want)
		}
	}
	counts("new store", VecStats{})
	err := s.Update(func(tx *Tx) error {
		if err := tx.PutVector(key16(1), randVec(r, 8)); err == nil {
			t.Error("vector stored before a model is set")
		}
		if err := tx.SetVecModel("m1", 8); err != nil {
			return err
		}
		if err := tx.PutVector(key16(1), randVec(r, 7)); err == nil {
			t.Error("vector of the wrong dimension stored")
		}
		if err := tx.PutVector(key16(1), randVec(r, 8)); err != nil {
			return err
		}
		if err := tx.PutVector(key16(1), randVec(r, 8)); err != nil { // again: one vector
			return err
		}
		if err := tx.PutVecPage(5, &VecPage{SHA256: "abc", Chunks: []VecChunk{{Key: key16(2)}}}); err == nil {
			t.Error("chunk list stored with a missing vector")
		}
		return tx.PutVecPage(5, &VecPage{SHA256: "abc", Chunks: []VecChunk{{Key: key16(1), Heading: "A > B"}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	counts("after writes", VecStats{Pages: 1, Chunks: 1, Vectors: 1})
	_ = s.View(func(tx *Tx) error {
		p, ok, err := tx.VecPage(5)
		if err != nil || !ok || p.SHA256 != "abc" || len(p.Chunks) != 1 || p.Chunks[0].Heading != "A > B" || p.Stale {
			t.Errorf("VecPage(5) = %+v, %v, %v", p, ok, err)
		}
		if m, d := tx.VecModel(); m != "m1" || d != 8 {
			t.Errorf("model %q %d", m, d)
		}
		return nil
	})
	// reindex: page records go, vectors stay
	if err := s.Update(func(tx *Tx) error { return tx.ResetDerived() }); err != nil {
		t.Fatal(err)
	}
	counts("after reindex", VecStats{Vectors: 1})
	err = s.Update(func(tx *Tx) error {
		if err := tx.PutVector(key16(3), randVec(r, 8)); err != nil {
			return err
		}
		return tx.PutVecPage(1, &VecPage{SHA256: "x", Chunks: []VecChunk{{Key: key16(3)}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	counts("after re-linking", VecStats{Pages: 1, Chunks: 1, Vectors: 2})
	err = s.Update(func(tx *Tx) error {
		n, err := tx.SweepVectors()
		if n != 1 {
			t.Errorf("swept %d vectors, want 1 (key 1, no longer listed)", n)
		}
		if tx.HasVector(key16(1)) || !tx.HasVector(key16(3)) {
			t.Error("sweep removed the wrong vector")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	counts("after sweep", VecStats{Pages: 1, Chunks: 1, Vectors: 1})
	if err := s.Update(func(tx *Tx) error { return tx.DeleteVecPages([]uint32{1, 99}) }); err != nil {
		t.Fatal(err)
	}
	counts("after delete", VecStats{Vectors: 1})
	// same model and dimension: nothing dropped; another model: all
	err = s.Update(func(tx *Tx) error {
		if err := tx.PutVector(key16(4), randVec(r, 8)); err != nil {
			return err
		}
		if err := tx.SetVecModel("m1", 8); err != nil || !tx.HasVector(key16(4)) {
			t.Errorf("same model dropped vectors (%v)", err)
		}
		if err := tx.PutVecPage(2, &VecPage{SHA256: "y", Chunks: []VecChunk{{Key: key16(4)}}}); err != nil {
			return err
		}
		if err := tx.SetVecModel("m2", 4); err != nil {
			return err
		}
		if st := tx.VecStats(); st != (VecStats{}) {
			t.Errorf("model change kept %+v", st)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestVectors_RecordInPlace: a page record read in place gives back each
// chunk's vector, sign bits and heading; a trimmed record keeps only the
// chunks asked for and counts as stale; a record of an older format is
// not read, and DropOldVecPages removes it.
func TestVectors_RecordInPlace(t *testing.T) {
	s := openVec(t)
	r := rand.New(rand.NewPCG(5, 6))
	const dim = 70 // two sign-bit words, the second partial
	vecs := map[ChunkKey][]float32{}
	err := s.Update(func(tx *Tx) error {
		if err := tx.SetVecModel("m", dim); err != nil {
			return err
		}
		p := &VecPage{SHA256: "sha"}
		for i := range 3 {
			k := key16(byte(10 + i))
			vecs[k] = randVec(r, dim)
			if err := tx.PutVector(k, vecs[k]); err != nil {
				return err
			}
			p.Chunks = append(p.Chunks, VecChunk{Key: k, Heading: strings.Repeat("h", i)})
		}
		return tx.PutVecPage(7, p)
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, wantKeys []byte, stale bool) {
		t.Helper()
		_ = s.View(func(tx *Tx) error {
			n := 0
			err := tx.ScanVecPages(func(doc uint32, v *VecView) error {
				n++
				hs, err := v.Headings()
				if doc != 7 || v.N != len(wantKeys) || v.Dim != dim || v.SHA256 != "sha" || v.Stale != stale || err != nil {
					t.Errorf("%s: record %d: n %d dim %d sha %q stale %v (%v)", what, doc, v.N, v.Dim, v.SHA256, v.Stale, err)
					return nil
				}
				for i, b := range wantKeys {
					k := v.Key(i)
					want, _ := tx.Vector(k)
					if k != key16(b) || v.Scale(i) != want.Scale || string(int8AsBytes(v.Q(i))) != string(int8AsBytes(want.Q)) || hs[i] != strings.Repeat("h", int(b-10)) {
						t.Errorf("%s: chunk %d differs from the stored vector %x", what, i, k)
					}
					bits := v.Bits(i)
					for j, q := range want.Q {
						if set := bits[j/8]>>(j%8)&1 == 1; set != (q > 0) {
							t.Errorf("%s: chunk %d sign bit %d", what, i, j)
						}
					}
				}
				return nil
			})
			if err != nil || n != 1 {
				t.Errorf("%s: scan %d records, %v", what, n, err)
			}
			return nil
		})
	}
	check("stored", []byte{10, 11, 12}, false)
	counts := func() (st VecStats) { _ = s.View(func(tx *Tx) error { st = tx.VecStats(); return nil }); return }
	if err := s.Update(func(tx *Tx) error {
		return tx.TrimVecPage(7, func(k ChunkKey) bool { return k != key16(11) }, true)
	}); err != nil {
		t.Fatal(err)
	}
	check("trimmed", []byte{10, 12}, true)
	if st := counts(); st.Pages != 1 || st.Chunks != 2 || st.Stale != 1 {
		t.Errorf("counts after trimming: %+v", st)
	}
	if err := s.Update(func(tx *Tx) error { return tx.TrimVecPage(7, nil, false) }); err != nil {
		t.Fatal(err)
	}
	check("fresh again", []byte{10, 12}, false)
	if err := s.Update(func(tx *Tx) error { return tx.TrimVecPage(7, func(ChunkKey) bool { return false }, true) }); err != nil {
		t.Fatal(err)
	}
	if st := counts(); st.Pages != 0 || st.Chunks != 0 || st.Stale != 0 {
		t.Errorf("counts after trimming every chunk: %+v", st)
	}
	// a record of the first format (a store from before): not read, then
	// dropped
	err = s.Update(func(tx *Tx) error {
		if err := tx.tx.DeleteBucket(bVecPages); err != nil {
			return err
		}
		b, err := tx.tx.CreateBucket(bVecPages)
		if err != nil {
			return err
		}
		return b.Put(u32(9), append(appendStr(nil, strings.Repeat("a", 64)), 0))
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(func(tx *Tx) error {
		if _, ok, err := tx.VecPage(9); ok || err != nil {
			t.Errorf("old record read: %v %v", ok, err)
		}
		n, err := tx.DropOldVecPages()
		if n != 1 || err != nil || tx.b(bVecPages).Get(u32(9)) != nil {
			t.Errorf("DropOldVecPages: %d, %v", n, err)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestVectors_CountsMatchRecords: after any sequence of writes, trims,
// deletes, sweeps, reindexes and model changes, the kept counts equal a
// count of the records and vectors themselves.
func TestVectors_CountsMatchRecords(t *testing.T) {
	s := openVec(t)
	r := rand.New(rand.NewPCG(9, 10))
	const dim = 8
	if err := s.Update(func(tx *Tx) error { return tx.SetVecModel("m", dim) }); err != nil {
		t.Fatal(err)
	}
	for step := range 400 {
		err := s.Update(func(tx *Tx) error {
			doc := uint32(1 + r.IntN(20))
			switch op := r.IntN(20); {
			case op < 9: // a page (re)written with up to 4 chunks
				p := &VecPage{SHA256: fmt.Sprint(step), Stale: r.IntN(4) == 0}
				for range r.IntN(5) {
					k := key16(byte(r.IntN(40)))
					if err := tx.PutVector(k, randVec(r, dim)); err != nil {
						return err
					}
					p.Chunks = append(p.Chunks, VecChunk{Key: k, Heading: "h"})
				}
				return tx.PutVecPage(doc, p)
			case op < 13:
				cut := byte(r.IntN(40))
				return tx.TrimVecPage(doc, func(k ChunkKey) bool { return k[0] < cut }, r.IntN(2) == 0)
			case op < 16:
				return tx.DeleteVecPages([]uint32{doc, doc + 1})
			case op < 18:
				_, err := tx.SweepVectors()
				return err
			case op < 19:
				return tx.ResetDerived()
			default:
				if err := tx.SetVecModel(fmt.Sprint("m", r.IntN(2)), dim); err != nil {
					return err
				}
				return nil
			}
		})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		_ = s.View(func(tx *Tx) error {
			var want VecStats
			err := tx.ScanVecPages(func(_ uint32, v *VecView) error {
				want.Pages++
				want.Chunks += v.N
				if v.Stale {
					want.Stale++
				}
				return nil
			})
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			want.Vectors = tx.b(bVectors).Stats().KeyN
			if got := tx.VecStats(); got != want {
				t.Fatalf("step %d: counts %+v, records %+v", step, got, want)
			}
			return nil
		})
	}
}
