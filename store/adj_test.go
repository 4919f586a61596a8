package store

import (
	"math/rand"
	"reflect"
	"testing"
)

func randAdj(r *rand.Rand, n int) *AdjRec {
	a := &AdjRec{Type: "concept", Deg: uint32(r.Intn(1 << 20)), Sources: []string{"raw/sources/a.md", "b"}}
	to := uint32(0)
	for i := 0; i < n; i++ {
		// deltas and counts of every varint length, mostly one byte
		step := uint32(1 + r.Intn(100))
		if r.Intn(10) == 0 {
			step = uint32(r.Intn(1 << 28))
		}
		to += step
		out, in := uint32(r.Intn(3)), uint32(r.Intn(3))
		if r.Intn(20) == 0 {
			out = uint32(r.Intn(1 << 31))
		}
		a.Edges = append(a.Edges, Edge{To: to, Out: out, In: in, Weight: r.Float32() * 20})
	}
	return a
}

func TestAdjRec_RoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 2, 17, 1000, 70000} {
		a := randAdj(r, n)
		got, err := decodeAdj(a.encode())
		if err != nil {
			t.Fatalf("%d edges: %v", n, err)
		}
		if n == 0 {
			a.Edges = []Edge{}
		}
		if !reflect.DeepEqual(got, a) {
			t.Fatalf("%d edges: round trip differs", n)
		}
	}
}

// FuzzDecodeAdj: no input makes the decoder panic, and what it accepts
// encodes back to something it decodes alike.
func FuzzDecodeAdj(f *testing.F) {
	r := rand.New(rand.NewSource(2))
	for _, n := range []int{0, 1, 5, 40} {
		f.Add(randAdj(r, n).encode())
	}
	f.Add([]byte{})
	f.Add([]byte{0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := decodeAdj(data)
		if err != nil {
			return
		}
		// compared encoded: a weight may be NaN
		b, err := decodeAdj(a.encode())
		if err != nil || string(b.encode()) != string(a.encode()) {
			t.Fatalf("re-encoded record decodes differently: %v", err)
		}
	})
}

func BenchmarkDecodeAdj_Hub(b *testing.B) {
	v := randAdj(rand.New(rand.NewSource(3)), 60000).encode()
	b.SetBytes(int64(len(v)))
	for i := 0; i < b.N; i++ {
		if _, err := decodeAdj(v); err != nil {
			b.Fatal(err)
		}
	}
}
