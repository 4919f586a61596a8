package index

import (
	"context"
	"os"
	"testing"

	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// BenchmarkCheck runs the freshness check of a CLI read (fresh.go) on the
// indexed vault named by SYNAPSE_BENCH_VAULT, read-only, in both modes:
//
//	go run ./tools/genvault -pages 10000 -sources 1000 -out /tmp/v10k
//	synapse --vault /tmp/v10k status
//	SYNAPSE_BENCH_VAULT=/tmp/v10k go test ./index -run X -bench Check -count 6
func BenchmarkCheck(b *testing.B) {
	dir := os.Getenv("SYNAPSE_BENCH_VAULT")
	if dir == "" {
		b.Skip("set SYNAPSE_BENCH_VAULT to an indexed generated vault")
	}
	v, err := vault.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	// a first check and reconcile remember the folder mtimes
	w, err := store.Open(v.Abs(vault.DBFile), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	wx := &Indexer{Vault: v, Store: w}
	if st, err := wx.Check(context.Background(), CheckOptions{}); err != nil {
		b.Fatal(err)
	} else if _, err := wx.Reconcile(context.Background(), st); err != nil {
		b.Fatal(err)
	}
	w.Close()
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ix := &Indexer{Vault: v, Store: s}
	for _, m := range []struct {
		name string
		max  int
	}{{CheckFiles, 1 << 30}, {CheckFolders, -1}} {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				st, err := ix.Check(context.Background(), CheckOptions{MaxFiles: m.max})
				if err != nil {
					b.Fatal(err)
				}
				if i == 0 {
					b.ReportMetric(float64(st.Files), "files")
					b.ReportMetric(float64(st.Folders), "folders")
					b.ReportMetric(float64(st.Count()), "differ")
				}
			}
		})
	}
}
