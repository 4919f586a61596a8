package ops

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// BenchmarkSearch_NoProvider measures what the search modes cost lexical
// search when no embedding provider is configured ("lexical
// search loses no speed"): the search_wiki operation as every adapter calls
// it (op: mode resolution, the configuration read, then the lexical
// search) against the lexical search alone as it was before the modes
// (searchWiki), over the latency query set on the Obsidian Help vault.
//
//	go test ./ops -run '^$' -bench Search_NoProvider -count 6 | benchstat -col /path -
func BenchmarkSearch_NoProvider(b *testing.B) {
	v := testvault.WithCorpus(b)
	e := newTestEnv(b, v)
	data, err := os.ReadFile(filepath.Join(testvault.RepoRoot(), "testdata", "search", "bench-queries.txt"))
	if err != nil {
		b.Fatal(err)
	}
	var queries []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			queries = append(queries, l)
		}
	}
	ctx := context.Background()
	raws := make([][]byte, len(queries))
	for i, q := range queries {
		raws[i], _ = json.Marshal(SearchIn{Query: q})
	}
	b.Run("path=searchWiki", func(b *testing.B) {
		defer cpuPerOp(b)()
		for i := range b.N {
			if _, err := searchWiki(ctx, e, &SearchIn{Query: queries[i%len(queries)], K: 5}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("path=op", func(b *testing.B) {
		defer cpuPerOp(b)()
		for i := range b.N {
			out, err := opSearch.Call(ctx, e, raws[i%len(raws)])
			if err != nil {
				b.Fatal(err)
			}
			if m := out.(*SearchOut).Mode; m != "lexical" {
				b.Fatalf("mode %s", m)
			}
		}
	})
}

// cpuPerOp reports the CPU time per iteration when the returned func runs.
func cpuPerOp(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c0 := cpu()
	return func() {
		b.ReportMetric(float64((cpu()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}
