package vaultfs

import (
	"context"
	"testing"
)

// TestFastPath: on this kernel reads take the openat2 path (the
// confinement tests above then exercise it), not the os.Root fallback.
func TestFastPath(t *testing.T) {
	f, _ := fixture(t)
	r, err := f.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, ok, err := r.readFast(context.Background(), "wiki/a.md", "wiki/a.md", 100); !ok || err != nil {
		t.Skipf("no openat2 here (%v): the os.Root path serves every read", err)
	}
	if noOpenat2.Load() {
		t.Fatal("openat2 marked unavailable")
	}
}

// TestSlowPath runs the read tests again on the os.Root path, as on a
// kernel without openat2.
func TestSlowPath(t *testing.T) {
	noOpenat2.Store(true)
	defer noOpenat2.Store(false)
	t.Run("confinement", TestRead_Confinement)
	t.Run("under", TestReaderUnder_StaysInFolder)
	t.Run("cancelled", TestRead_Cancelled)
	t.Run("walk", TestWalk_ReportsAndConfines)
}
