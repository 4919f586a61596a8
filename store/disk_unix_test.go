//go:build unix

package store

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDiskBytes: the space on disk of a sparse file is its allocated
// blocks, not its length; a store reports both.
func TestDiskBytes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sparse")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 8192)); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	n, ok := allocatedBytes(fi)
	if !ok || n < 8192 || n >= 64<<20 {
		t.Fatalf("allocated %d bytes (ok %v) of a 64 MiB file holding 8 KiB", n, ok)
	}

	s, err := Open(filepath.Join(t.TempDir(), "synapse.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if d, size := s.DiskBytes(), s.SizeBytes(); d <= 0 || size <= 0 {
		t.Fatalf("store: %d bytes on disk, %d apparent", d, size)
	}
}
