package index

import (
	"context"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

func openIndexer(t testing.TB, v *vault.Vault) *Indexer {
	t.Helper()
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &Indexer{Vault: v, Store: s}
}

func TestScan_Corpus(t *testing.T) {
	v := testvault.WithCorpus(t)
	ix := openIndexer(t, v)
	rep, err := ix.Scan(context.Background(), ScanOptions{Full: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report: scanned %d new %d", rep.Scanned, rep.NewCount)
	ix.Store.View(func(tx *store.Tx) error {
		if n := tx.PageCount(); n != 173 {
			t.Errorf("pages = %d, want 173", n)
		}
		for _, d := range tx.Dangling() {
			t.Logf("dangling %q (%s) x%d", d.Key, d.Raw, d.Count)
		}
		return nil
	})
}
