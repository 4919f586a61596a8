//go:build unix

package index

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// returns fails the test when fn has not returned within seconds (a hang
// detector: main blocks forever reading a fifo).
func returns(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatalf("%s hangs", what)
	}
}

// TestScan_FifoSwappedIn: a page replaced by a named pipe between the
// walk and the read is refused, not waited on; one there at walk time is
// skipped and reported; the scans after it index what changed.
func TestScan_FifoSwappedIn(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/a.md", "# A\n")
	testvault.Write(t, v, "wiki/b.md", "# B\n")
	ix := openIndexer(t, v)
	ctx := context.Background()

	rd, err := ix.openReaders()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.close()
	rep := &Report{}
	disk, _, err := ix.walk(ctx, rd, rep, nil)
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.Remove(v.Abs("wiki/b.md")))
	must(t, syscall.Mkfifo(v.Abs("wiki/b.md"), 0o644))
	var items []prepared
	returns(t, "reading a fifo swapped in after the walk", func() { items = ix.prepare(ctx, rd, disk, nil) })
	for _, it := range items {
		if it.d.path == "wiki/b.md" {
			if rf, ok := vaultfs.AsRefusal(it.err); !ok || rf.Reason != vaultfs.NotRegular {
				t.Errorf("b.md: %v", it.err)
			}
		} else if it.err != nil {
			t.Errorf("%s: %v", it.d.path, it.err)
		}
	}

	var srep *Report
	returns(t, "a scan with a fifo", func() {
		srep, err = ix.Scan(ctx, ScanOptions{})
	})
	if err != nil {
		t.Fatal(err)
	}
	// (the three reserved pages and a.md, then schema.md and purpose.md,
	// tracked by stat only)
	if srep.NewCount != 6 || srep.RefusedCount != 1 || srep.Refused[0].Path != "wiki/b.md" {
		t.Fatalf("scan: %d new, refused %+v", srep.NewCount, srep.Refused)
	}
	// a later save is indexed
	testvault.Write(t, v, "wiki/c.md", "# C\n")
	returns(t, "the next scan", func() { srep, err = ix.Scan(ctx, ScanOptions{Paths: []string{"wiki/c.md"}}) })
	if err != nil || srep.NewCount != 1 {
		t.Fatalf("next scan: %+v %v", srep, err)
	}
	var listed RefusedList
	_ = ix.Store.View(func(tx *store.Tx) error { listed = RefusedFiles(tx); return nil })
	if listed.Count != 1 || listed.Files[0].Path != "wiki/b.md" {
		t.Fatalf("the store's refused list: %+v (a scan of other paths keeps it)", listed)
	}
}

// TestScan_HugeSourceCancellable: hashing an 8 GiB (sparse) source stops
// when the scan's context is cancelled, within a chunk.
func TestScan_HugeSourceCancellable(t *testing.T) {
	v := testvault.New(t)
	f, err := os.Create(v.Abs("raw/sources/huge.jsonl"))
	must(t, err)
	if err := f.Truncate(8 << 30); err != nil {
		t.Skip("no sparse files here:", err)
	}
	f.Close()
	ix := openIndexer(t, v)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	returns(t, "a cancelled scan of an 8 GiB source", func() {
		_, err = ix.Scan(ctx, ScanOptions{})
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("scan: %v, want cancelled", err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
