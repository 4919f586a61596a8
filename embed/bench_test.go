package embed_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/embed"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// BenchmarkHybrid measures in-process hybrid search on a generated vault
// (go run ./tools/genvault -pages 10000 -out DIR) named by
// SYNAPSE_BENCH_VAULT, with synthetic 512-dimension vectors stored for
// every chunk (no provider: the query vector is precomputed, so the
// provider's time is excluded). It reports p50/p95 of lexical and hybrid
// queries and the one-time load of the vectors into memory (what a CLI
// search pays once per process):
//
//	SYNAPSE_BENCH_VAULT=/tmp/embed/g10k go test ./embed -run XXX -bench Hybrid -benchtime 200x
func BenchmarkHybrid(b *testing.B) {
	dir := os.Getenv("SYNAPSE_BENCH_VAULT")
	if dir == "" {
		b.Skip("set SYNAPSE_BENCH_VAULT to a generated vault")
	}
	v, err := vault.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{Timeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var docs uint32
	s.View(func(tx *store.Tx) error { docs = tx.SearchStats().Docs; return nil })
	if docs == 0 {
		ix := &index.Indexer{Vault: v, Store: s, Pages: search.Indexer{}}
		if _, err := ix.Scan(context.Background(), index.ScanOptions{Full: true}); err != nil {
			b.Fatal(err)
		}
	}
	const dim = 512
	chunks, titles := storeSynthetic(b, s, v, dim)
	read := func(p string) ([]byte, error) { return os.ReadFile(v.Abs(p)) }
	r := rand.New(rand.NewPCG(5, 6))
	var qs []string
	var qv [][]float32
	for i := 0; i < 100; i++ {
		t := titles[r.IntN(len(titles))]
		qs = append(qs, "how do I use "+t+" with my notes?")
		qv = append(qv, randVec(r, dim))
	}
	query := func(i int, mode embed.Mode) time.Duration {
		y := qv[i%len(qv)]
		t0 := time.Now()
		_, err := embed.Search(context.Background(), s, qs[i%len(qs)], embed.SearchOptions{K: 5, Mode: mode, ReadFile: read, Model: "synthetic",
			Embed: func(context.Context, string) ([]float32, error) { return y, nil }})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	cold := query(0, embed.Hybrid) // loads the vectors
	// recall of the prefilter: semantic top 10 against the exact scan
	top := func(i int) []string {
		y := qv[i]
		r, err := embed.Search(context.Background(), s, qs[i], embed.SearchOptions{K: 10, Mode: embed.Semantic, Model: "synthetic",
			Embed: func(context.Context, string) ([]float32, error) { return y, nil }})
		if err != nil {
			b.Fatal(err)
		}
		var out []string
		for _, h := range r.Hits {
			out = append(out, h.Path)
		}
		return out
	}
	var approx [][]string
	for i := range qs {
		approx = append(approx, top(i))
	}
	restore := embed.SetExactLimit(1 << 30)
	found, total := 0, 0
	var exactLat []time.Duration
	for i := range qs {
		t0 := time.Now()
		ex := top(i)
		exactLat = append(exactLat, time.Since(t0))
		for _, p := range ex {
			total++
			for _, a := range approx[i] {
				if a == p {
					found++
				}
			}
		}
	}
	restore()
	for i := range qs {
		query(i, embed.Lexical)
	}
	b.ResetTimer()
	var lex, hyb []time.Duration
	for i := 0; i < b.N; i++ {
		lex = append(lex, query(i, embed.Lexical))
		hyb = append(hyb, query(i, embed.Hybrid))
	}
	b.StopTimer()
	// CPU time of hybrid queries alone (the machine's other load inflates
	// wall time, much less CPU time)
	c0 := cpuTime()
	for i := range qs {
		query(i, embed.Hybrid)
	}
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(len(qs)), "hybrid-cpu-ms")
	pct := func(d []time.Duration, p int) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[min(len(d)-1, len(d)*p/100)].Microseconds()) / 1000
	}
	b.ReportMetric(float64(chunks), "chunks")
	b.ReportMetric(float64(found)/float64(max(total, 1)), "prefilter-recall@10")
	b.ReportMetric(pct(exactLat, 50), "exact-sem-p50-ms")
	b.ReportMetric(pct(exactLat, 95), "exact-sem-p95-ms")
	b.ReportMetric(float64(cold.Microseconds())/1000, "cold-ms")
	b.ReportMetric(pct(lex, 50), "lex-p50-ms")
	b.ReportMetric(pct(lex, 95), "lex-p95-ms")
	b.ReportMetric(pct(hyb, 50), "hybrid-p50-ms")
	b.ReportMetric(pct(hyb, 95), "hybrid-p95-ms")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func randVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// storeSynthetic stores a pseudo-random vector for every chunk of every
// page (once; a second call finds them) and returns the chunk count and
// the page titles.
func storeSynthetic(b *testing.B, s *store.Store, v *vault.Vault, dim int) (int, []string) {
	var pages []*store.PageRec
	s.View(func(tx *store.Tx) error {
		return tx.EachPage(func(p *store.PageRec) bool {
			if !p.Reserved {
				pages = append(pages, p)
			}
			return true
		})
	})
	var titles []string
	total := 0
	done := false
	s.View(func(tx *store.Tx) error {
		if m, _ := tx.VecModel(); m != "synthetic" || !tx.HasVecPages() {
			return nil
		}
		done = true
		for _, p := range pages {
			titles = append(titles, p.Title)
		}
		return tx.EachVecPage(func(_ uint32, p *store.VecPage) error { total += len(p.Chunks); return nil })
	})
	if done {
		return total, titles // stored by an earlier run
	}
	for i := 0; i < len(pages); i += 500 {
		part := pages[i:min(i+500, len(pages))]
		err := s.Update(func(tx *store.Tx) error {
			if err := tx.SetVecModel("synthetic", dim); err != nil {
				return err
			}
			for _, p := range part {
				titles = append(titles, p.Title)
				data, err := os.ReadFile(v.Abs(p.Path))
				if err != nil {
					return err
				}
				cs := embed.ChunkPage(p.Title, markdown.Parse(p.Path, data))
				sum := sha256.Sum256(data)
				vp := &store.VecPage{SHA256: hex.EncodeToString(sum[:])}
				for _, c := range cs {
					if !tx.HasVector(c.Key) {
						seed := binary.LittleEndian.Uint64(c.Key[:8])
						if err := tx.PutVector(c.Key, randVec(rand.New(rand.NewPCG(seed, 1)), dim)); err != nil {
							return err
						}
					}
					vp.Chunks = append(vp.Chunks, store.VecChunk{Key: c.Key, Heading: c.Heading})
				}
				total += len(cs)
				if err := tx.PutVecPage(p.Doc, vp); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return total, titles
}
