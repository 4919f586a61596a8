package index

import (
	"context"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// recordingPages is a PageIndexer that records the pages it is given.
type recordingPages struct {
	indexed map[string]int // path → times indexed
	calls   int
	txs     map[*store.Tx]int // IndexPages calls per transaction
}

func (r *recordingPages) IndexPages(tx *store.Tx, pages []IndexedPage) error {
	r.calls++
	r.txs[tx]++
	for _, p := range pages {
		if p.Parsed == nil || p.Rec == nil || p.Doc == 0 || p.Rec.Doc != p.Doc {
			panic("an indexed page without its record, parse or doc")
		}
		r.indexed[p.Rec.Path]++
	}
	return nil
}

func (r *recordingPages) RemovePages(tx *store.Tx, docs []uint32) error { return nil }

// smallBatches makes the scan's batches tiny for one test.
func smallBatches(t *testing.T, files, txFiles int) {
	t.Helper()
	bf, bb, tf, tb := batchFiles, batchBytes, bulkTxFiles, bulkTxBytes
	batchFiles, batchBytes, bulkTxFiles, bulkTxBytes = files, 1<<30, txFiles, 1<<30
	t.Cleanup(func() { batchFiles, batchBytes, bulkTxFiles, bulkTxBytes = bf, bb, tf, tb })
}

// TestScan_BulkBatchesShareTransactions: a reindex and a first scan apply
// several read batches in one write transaction (the batches already
// parsed, up to bulkTxFiles), handing each batch to the page index as it
// is applied; the store they build is the one built a batch per
// transaction, every page is indexed once, and an incremental scan still
// commits a batch at a time.
func TestScan_BulkBatchesShareTransactions(t *testing.T) {
	v := testvault.New(t)
	r := newRandVault(t, v, 23)
	for i := 0; i < 90; i++ {
		r.add()
	}
	// the reference: one transaction per batch of 5
	smallBatches(t, 5, 5)
	ref := openIndexerAt(t, v, t.TempDir()+"/ref.db")
	if _, err := ref.Scan(context.Background(), ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	want, _ := storecheck.Fingerprint(ref.Store)
	refCommits := ref.Store.Commits()

	for _, full := range []bool{true, false} {
		smallBatches(t, 5, 20)
		ix := openIndexerAt(t, v, t.TempDir()+"/bulk.db")
		rec := &recordingPages{indexed: map[string]int{}, txs: map[*store.Tx]int{}}
		ix.Pages = rec
		ix.waitBatches = true
		if _, err := ix.Scan(context.Background(), ScanOptions{Full: full}); err != nil {
			t.Fatal(err)
		}
		got, _ := storecheck.Fingerprint(ix.Store)
		if d := storecheck.DiffLines(want, got); len(d) > 0 {
			t.Fatalf("full=%v: batches sharing transactions built another store:\n%s", full, strings.Join(d[:min(20, len(d))], "\n"))
		}
		pages := 0
		_ = ix.Store.View(func(tx *store.Tx) error {
			return tx.EachPage(func(p *store.PageRec) bool {
				if !p.Reserved {
					pages++
					if rec.indexed[p.Path] != 1 {
						t.Errorf("full=%v: %s indexed %d times", full, p.Path, rec.indexed[p.Path])
					}
				}
				return true
			})
		})
		if pages < 60 || len(rec.indexed) != pages {
			t.Fatalf("full=%v: %d pages indexed of %d", full, len(rec.indexed), pages)
		}
		shared := 0
		for _, n := range rec.txs {
			if n > 4 {
				t.Fatalf("full=%v: %d batches in one transaction; at most 4 fit 20 files", full, n)
			}
			if n > 1 {
				shared++
			}
		}
		if full && (shared == 0 || ix.Store.Commits() >= refCommits) {
			t.Fatalf("full=%v: no transaction took more than one batch (%d commits, %d a batch at a time)", full, ix.Store.Commits(), refCommits)
		}
	}

	// an incremental scan of many changes: a batch per transaction
	for i := 0; i < 40; i++ {
		r.mutate()
	}
	rec := &recordingPages{indexed: map[string]int{}, txs: map[*store.Tx]int{}}
	ref.Pages = rec
	scan(t, ref)
	for _, n := range rec.txs {
		if n != 1 {
			t.Fatalf("an incremental scan applied %d batches in one transaction", n)
		}
	}
}
