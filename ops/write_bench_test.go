package ops

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// benchVault copies the generated vault named by SYNAPSE_BENCH_VAULT
// (go run ./tools/genvault -pages N -sources M -out DIR) into a temporary
// folder, indexes it, and returns it with the titles of its manifest.
func benchVault(b *testing.B) (*Env, []string) {
	src := os.Getenv("SYNAPSE_BENCH_VAULT")
	if src == "" {
		b.Skip("set SYNAPSE_BENCH_VAULT to a generated vault (go run ./tools/genvault)")
	}
	src = strings.TrimSuffix(src, "/")
	dst := filepath.Join(b.TempDir(), "vault")
	for _, d := range []string{vault.WikiDir, "raw"} {
		if err := testvault.CopyTree(filepath.Join(src, d), filepath.Join(dst, d)); err != nil {
			b.Fatal(err)
		}
	}
	v, _, err := vault.Init(dst)
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	e := NewEnv(v, s)
	start := time.Now()
	if _, err := e.Index.Scan(context.Background(), index.ScanOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Logf("indexed %s in %v", src, time.Since(start).Round(time.Millisecond))
	f, err := os.Open(src + ".pages.tsv")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var titles []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if t, _, ok := strings.Cut(sc.Text(), "\t"); ok {
			titles = append(titles, t)
		}
	}
	return e, titles
}

// latencies collects per-operation times and reports percentiles.
type latencies []time.Duration

func (l latencies) pct(p float64) float64 {
	if len(l) == 0 {
		return 0
	}
	s := append(latencies(nil), l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
}

func (l latencies) report(b *testing.B) {
	b.ReportMetric(l.pct(0.50), "p50-ms")
	b.ReportMetric(l.pct(0.95), "p95-ms")
	b.ReportMetric(l.pct(0.99), "p99-ms")
}

// stages records the stage times of every write of e and logs
// their medians, to show where a write's time goes.
func stages(b *testing.B, e *Env) {
	st := map[string]latencies{}
	e.observe.stage = func(s string, d time.Duration) { st[s] = append(st[s], d) }
	b.Cleanup(func() {
		e.observe.stage = nil
		var parts []string
		for _, s := range []string{"prepare", "file", "log", "reindex", "index.md", "commit", "rescan"} {
			if l := st[s]; len(l) > 0 {
				parts = append(parts, fmt.Sprintf("%s %.2f", s, l.pct(0.5)))
			}
		}
		b.Logf("median ms per stage (n=%d): %s", len(st["prepare"]), strings.Join(parts, ", "))
	})
}

// benchLinks is a paragraph linking n pages of the manifest.
func benchLinks(titles []string, seed, n int) string {
	var sb strings.Builder
	for k := 0; k < n; k++ {
		fmt.Fprintf(&sb, "Paragraph %d relates this topic to [[%s]] and the neighbouring ideas in the wiki.\n\n",
			k, titles[(seed*31+k*977)%len(titles)])
	}
	return sb.String()
}

// BenchmarkWritePage measures write_page end to end (validation, atomic
// write, re-index, log, review hook, index.md) on a generated vault:
//
//	go run ./tools/genvault -pages 10000 -sources 1000 -out /tmp/g10k
//	SYNAPSE_BENCH_VAULT=/tmp/g10k go test ./ops -run '^$' -bench WritePage -benchtime 200x
//
// edit rewrites an existing page's body keeping its links (the common
// agent edit; the catalogue is unchanged); relink rewrites a page with 10
// links to other pages than before (the scanner re-weighs the graph around
// every page gained or lost); create adds a page with 10 links and one
// dangling link (index.md is rewritten each time).
func BenchmarkWritePage(b *testing.B) {
	e, titles := benchVault(b)
	ctx := context.Background()
	nonce := int(time.Now().UnixNano() % 100000)
	b.Run("edit", func(b *testing.B) {
		stages(b, e)
		var lat latencies
		for i := 0; i < b.N; i++ {
			title := titles[(i*7919+nonce)%len(titles)]
			g, err := getPage(ctx, e, &GetPageIn{Title: title})
			if err != nil {
				b.Fatal(err)
			}
			in := &WritePageIn{Title: title, Content: g.Content + fmt.Sprintf("\nRevised in run %d.\n", nonce), IfMatch: g.SHA256}
			t0 := time.Now()
			if _, err := WritePage(ctx, e, in); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		lat.report(b)
	})
	b.Run("relink", func(b *testing.B) {
		stages(b, e)
		var lat latencies
		for i := 0; i < b.N; i++ {
			title := titles[(i*104729+nonce)%len(titles)]
			in := &WritePageIn{Title: title, Content: "# Revised\n\n" + benchLinks(titles, i+nonce, 10)}
			t0 := time.Now()
			if _, err := WritePage(ctx, e, in); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		lat.report(b)
	})
	b.Run("create", func(b *testing.B) {
		stages(b, e)
		var lat latencies
		for i := 0; i < b.N; i++ {
			in := &WritePageIn{Title: fmt.Sprintf("Bench page %d-%d", nonce, i),
				Content: benchLinks(titles, i, 10) + fmt.Sprintf("See also [[Not Yet Written %d]].\n", i%50), Tags: []string{"bench"}}
			t0 := time.Now()
			if _, err := WritePage(ctx, e, in); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		lat.report(b)
	})
}

// BenchmarkIndexMD measures wiki/index.md regeneration on a generated
// vault: render (stream the catalogue out of the store), check (render and
// compare with the file), skip (what a write that changes no catalogue
// entry pays: a stamp comparison) and rewrite (render, write atomically
// and bring the store in step: what a write that adds a page pays).
//
//	SYNAPSE_BENCH_VAULT=/tmp/write-g100k go test ./ops -run '^$' -bench IndexMD -benchtime 20x
func BenchmarkIndexMD(b *testing.B) {
	e, _ := benchVault(b)
	record := func(cw *catalogWrite) {
		if err := e.Store.Update(func(tx *store.Tx) error {
			ok, err := cw.fastForward(tx)
			if err == nil && !ok {
				err = fmt.Errorf("fast-forward refused")
			}
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("render", func(b *testing.B) {
		size := 0
		for i := 0; i < b.N; i++ {
			_ = e.Store.View(func(tx *store.Tx) error {
				size = len(Catalog(tx))
				return nil
			})
		}
		b.ReportMetric(float64(size), "bytes")
	})
	cw, err := regenerateIndex(e) // the first one writes
	if err != nil || cw == nil {
		b.Fatalf("%v %v", cw, err)
	}
	record(cw)
	b.Run("check", func(b *testing.B) {
		_ = e.Store.Update(func(tx *store.Tx) error { return tx.SetIndexStamp(store.IndexStamp{}) })
		var last *catalogWrite
		for i := 0; i < b.N; i++ {
			cw, err := regenerateIndex(e)
			if err != nil || cw == nil || !cw.unchanged {
				b.Fatalf("%+v %v", cw, err)
			}
			last = cw
		}
		record(last)
	})
	b.Run("skip", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			cw, err := regenerateIndex(e)
			if err != nil || cw != nil {
				b.Fatalf("%+v %v", cw, err)
			}
		}
	})
	b.Run("rewrite", func(b *testing.B) {
		abs := e.Vault.Abs(vault.IndexPage)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			if err := os.WriteFile(abs, []byte("# Index\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			if _, err := e.Index.Scan(context.Background(), index.ScanOptions{Paths: []string{vault.IndexPage}}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			cw, err := regenerateIndex(e)
			if err != nil || cw == nil || cw.unchanged {
				b.Fatalf("%+v %v", cw, err)
			}
			record(cw)
		}
	})
}
