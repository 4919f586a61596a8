package ops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// The source benchmarks run against the generated vault named by
// SYNAPSE_BENCH_SOURCES (skipped when unset), e.g.
//
//	go run ./tools/genvault -pages 100 -sources 100000 -out /tmp/source-g100k
//	SYNAPSE_BENCH_SOURCES=/tmp/source-g100k go test ./ops -run '^$' -bench 'Source' -benchtime 5x
//
// BenchmarkSourceRescan_Changed rewrites 1,000 of its sources per
// iteration: use a vault of your own, not a shared read-only one.
func benchEnv(b *testing.B) *Env {
	b.Helper()
	dir := os.Getenv("SYNAPSE_BENCH_SOURCES")
	if dir == "" {
		b.Skip("set SYNAPSE_BENCH_SOURCES to a generated vault (go run ./tools/genvault -pages 100 -sources 100000 -out /tmp/source-g100k)")
	}
	v, err := vault.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	e, err := OpenEnv(context.Background(), v, OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	// settle: the first scan after generation or a previous run indexes
	if _, err := e.Index.Scan(context.Background(), index.ScanOptions{}); err != nil {
		b.Fatal(err)
	}
	return e
}

func sourcePaths(b *testing.B, e *Env, n int) []string {
	var out []string
	_ = e.Store.View(func(tx *store.Tx) error {
		return tx.EachFile(vault.SourcesDir+"/", func(p string, _ store.FileRec) bool {
			out = append(out, p)
			return len(out) < n
		})
	})
	if len(out) < n {
		b.Fatalf("the vault has %d sources, want %d", len(out), n)
	}
	return out
}

// BenchmarkSourceRescan_Unchanged: `source rescan` over a vault where
// nothing changed (100,000 sources: target under 1 s).
func BenchmarkSourceRescan_Unchanged(b *testing.B) {
	e := benchEnv(b)
	b.ResetTimer()
	for b.Loop() {
		out, err := rescan(context.Background(), e, &RescanIn{})
		if err != nil {
			b.Fatal(err)
		}
		if out.NewCount+out.ChangedCount+out.DeletedCount != 0 {
			b.Fatalf("not a quiet vault: %+v", out)
		}
	}
}

// BenchmarkSourceRescan_Changed: `source rescan` after 1,000 sources
// changed (content and mtime), out of the whole vault.
func BenchmarkSourceRescan_Changed(b *testing.B) {
	e := benchEnv(b)
	paths := sourcePaths(b, e, 1000)
	base := time.Now().Add(time.Hour)
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		mt := base.Add(time.Duration(i) * time.Second)
		for _, p := range paths {
			abs := e.Vault.Abs(p)
			if err := os.WriteFile(abs, fmt.Appendf(nil, "# %s\n\nrevision %d\n", filepath.Base(p), i), 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.Chtimes(abs, mt, mt); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		out, err := rescan(context.Background(), e, &RescanIn{})
		if err != nil {
			b.Fatal(err)
		}
		if out.ChangedCount != len(paths) {
			b.Fatalf("changed %d, want %d", out.ChangedCount, len(paths))
		}
	}
}

// BenchmarkSourceList: the compile worklist (new and changed, first 1,000)
// and the full state count over every source.
func BenchmarkSourceList(b *testing.B) {
	e := benchEnv(b)
	for _, state := range []string{"new,changed", "ingested"} {
		b.Run(state, func(b *testing.B) {
			for b.Loop() {
				out, err := listSources(context.Background(), e, &ListSourcesIn{State: state, Limit: 1000})
				if err != nil {
					b.Fatal(err)
				}
				if out.Counts.New+out.Counts.Changed+out.Counts.Ingested == 0 {
					b.Fatal("no sources")
				}
			}
		})
	}
}

// BenchmarkSourceRead: one confined read of a small source.
func BenchmarkSourceRead(b *testing.B) {
	e := benchEnv(b)
	p := sourcePaths(b, e, 1)[0]
	for b.Loop() {
		if _, err := readSource(context.Background(), e, &ReadSourceIn{Path: p}); err != nil {
			b.Fatal(err)
		}
	}
}
