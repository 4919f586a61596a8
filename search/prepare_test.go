package search_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/internal/vaultgen"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// unprepared hides the search indexer's PreparePages: pages are analyzed
// in the transaction that indexes them.
type unprepared struct{ index.PageIndexer }

// TestIndexPages_Prepared: a reindex analyzes each bulk batch's pages
// before its transaction (index.PagePreparer, beside the transaction of
// the batch before), and builds the index that analysis inside the
// transaction builds.
func TestIndexPages_Prepared(t *testing.T) {
	v, _, err := vault.Init(filepath.Join(t.TempDir(), "v"))
	if err != nil {
		t.Fatal(err)
	}
	// two bulk batches (1000 files each) and a short one
	if _, err := vaultgen.Generate(v.Root, vaultgen.Options{Pages: 2300, Sources: 20, Seed: 9, BodyWords: 60, CorpusDir: testvault.CorpusDir()}); err != nil {
		t.Fatal(err)
	}
	build := func(name string, pages index.PageIndexer) string {
		s, err := store.Open(filepath.Join(t.TempDir(), name+".db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ix := &index.Indexer{Vault: v, Store: s, Pages: pages}
		if _, err := ix.Scan(context.Background(), index.ScanOptions{Full: true}); err != nil {
			t.Fatal(err)
		}
		fp, err := storecheck.Fingerprint(s)
		if err != nil {
			t.Fatal(err)
		}
		return fp
	}
	prepared := 0
	search.OnPrepared(func(n int) { prepared += n })
	defer search.OnPrepared(nil)
	got := build("prepared", search.Indexer{})
	if prepared < 2000 {
		t.Fatalf("%d pages were analyzed before their transaction, want the bulk batches' (≥ 2000)", prepared)
	}
	n := prepared
	want := build("unprepared", unprepared{search.Indexer{}})
	if prepared != n {
		t.Fatal("an indexer without PreparePages was handed prepared pages")
	}
	if d := storecheck.DiffLines(want, got); len(d) > 0 {
		t.Fatalf("the index built from prepared pages differs (%d lines):\n%s", len(d), strings.Join(d[:min(20, len(d))], "\n"))
	}
}
