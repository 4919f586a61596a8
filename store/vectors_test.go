package store

import (
	"math"
	"math/rand/v2"
	"path/filepath"
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
// while chunk lists do not, and are dropped when the model changes or no
// page refers to them (SweepVectors). The generation changes on every
// change and never repeats across a reindex.
func TestVectors_Lifecycle(t *testing.T) {
	s := openVec(t)
	r := rand.New(rand.NewPCG(3, 4))
	gens := map[uint64]bool{}
	gen := func() uint64 {
		var g uint64
		_ = s.View(func(tx *Tx) error { g = tx.VecGen(); return nil })
		return g
	}
	fresh := func(what string) {
		t.Helper()
		g := gen()
		if gens[g] {
			t.Fatalf("%s: generation %x seen before", what, g)
		}
		gens[g] = true
	}
	fresh("new store")
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
		if err := tx.PutVecPage(5, &VecPage{SHA256: "abc", Chunks: []VecChunk{{Key: key16(2)}}}); err == nil {
			t.Error("chunk list stored with a missing vector")
		}
		return tx.PutVecPage(5, &VecPage{SHA256: "abc", Chunks: []VecChunk{{Key: key16(1), Heading: "A > B"}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	fresh("after writes")
	_ = s.View(func(tx *Tx) error {
		p, ok, err := tx.VecPage(5)
		if err != nil || !ok || p.SHA256 != "abc" || len(p.Chunks) != 1 || p.Chunks[0].Heading != "A > B" {
			t.Errorf("VecPage(5) = %+v, %v, %v", p, ok, err)
		}
		if m, d := tx.VecModel(); m != "m1" || d != 8 {
			t.Errorf("model %q %d", m, d)
		}
		return nil
	})
	// reindex: chunk lists go, vectors stay
	if err := s.Update(func(tx *Tx) error { return tx.ResetDerived() }); err != nil {
		t.Fatal(err)
	}
	fresh("after reindex")
	_ = s.View(func(tx *Tx) error {
		if pages, vecs := tx.VecCounts(); pages != 0 || vecs != 1 {
			t.Errorf("after reindex: %d pages, %d vectors", pages, vecs)
		}
		return nil
	})
	err = s.Update(func(tx *Tx) error {
		if err := tx.PutVector(key16(3), randVec(r, 8)); err != nil {
			return err
		}
		return tx.PutVecPage(1, &VecPage{SHA256: "x", Chunks: []VecChunk{{Key: key16(3)}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	fresh("after re-linking")
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
	fresh("after sweep")
	if err := s.Update(func(tx *Tx) error { return tx.DeleteVecPages([]uint32{1, 99}) }); err != nil {
		t.Fatal(err)
	}
	fresh("after delete")
	// same model and dimension: nothing dropped; another model: all
	err = s.Update(func(tx *Tx) error {
		if err := tx.PutVector(key16(4), randVec(r, 8)); err != nil {
			return err
		}
		if err := tx.SetVecModel("m1", 8); err != nil || !tx.HasVector(key16(4)) {
			t.Errorf("same model dropped vectors (%v)", err)
		}
		if err := tx.SetVecModel("m2", 4); err != nil {
			return err
		}
		if _, vecs := tx.VecCounts(); vecs != 0 {
			t.Errorf("model change kept %d vectors", vecs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fresh("after model change")
}
