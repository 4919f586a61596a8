package index

import (
	"context"
	"os"
	"testing"

	"github.com/synapse-wiki/synapse/vault"
)

// BenchmarkColdReindex indexes the vault named by SYNAPSE_BENCH_VAULT (a
// generated one: go run ./tools/genvault) from scratch.
func BenchmarkColdReindex(b *testing.B) {
	dir := os.Getenv("SYNAPSE_BENCH_VAULT")
	if dir == "" {
		b.Skip("set SYNAPSE_BENCH_VAULT to a generated vault")
	}
	v, err := vault.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	ix := openIndexer(b, v)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ix.Scan(context.Background(), ScanOptions{Full: true}); err != nil {
			b.Fatal(err)
		}
	}
}
