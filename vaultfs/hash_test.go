package vaultfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"runtime"
	"testing"
)

// TestHash_ReusesItsBuffer: hashing many small files does not allocate a
// chunk buffer per file (a reindex hashes every source; a fresh 1 MiB
// buffer each was half of what a 10k-page reindex allocated), and the sums
// are right.
func TestHash_ReusesItsBuffer(t *testing.T) {
	data := bytes.Repeat([]byte("source text "), 500)
	want := sha256.Sum256(data)
	hash := func() {
		sum, n, err := Hash(context.Background(), nil, bytes.NewReader(data))
		if err != nil || sum != want || n != int64(len(data)) {
			t.Fatalf("Hash: %x %d %v", sum, n, err)
		}
	}
	hash()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const files = 200
	for i := 0; i < files; i++ {
		hash()
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 8*chunk && !raceEnabled {
		t.Fatalf("hashing %d small files allocated %d bytes", files, got)
	}
	// a prefix and a reader larger than a chunk
	big := bytes.Repeat([]byte{7}, 3*chunk+5)
	sum, n, err := Hash(context.Background(), big[:10], bytes.NewReader(big[10:]))
	if err != nil || sum != sha256.Sum256(big) || n != int64(len(big)) {
		t.Fatalf("Hash of %d bytes: %d %v", len(big), n, err)
	}
}
