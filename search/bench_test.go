package search_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// Benchmarks on a generated vault (go run ./tools/genvault -pages N -out
// DIR) named by SYNAPSE_BENCH_VAULT; they are skipped without it. The
// vault's store is rebuilt by BenchmarkColdReindex; the query benchmarks
// reuse it when it exists.
//
//	SYNAPSE_BENCH_VAULT=/tmp/search-g10k go test ./search -run XXX -bench . -benchtime 3x

func benchVault(b *testing.B) *vault.Vault {
	dir := os.Getenv("SYNAPSE_BENCH_VAULT")
	if dir == "" {
		b.Skip("set SYNAPSE_BENCH_VAULT to a generated vault")
	}
	v, err := vault.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return v
}

func benchIndexer(b *testing.B, v *vault.Vault, pages index.PageIndexer) *index.Indexer {
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{Timeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return &index.Indexer{Vault: v, Store: s, Pages: pages}
}

// BenchmarkColdReindex is index.BenchmarkColdReindex with the search
// indexer plugged in, as synapse runs it; /NoSearch is the same scan
// without it, so the difference is the cost of the search index.
func BenchmarkColdReindex(b *testing.B) {
	v := benchVault(b)
	for _, c := range []struct {
		name  string
		pages index.PageIndexer
	}{{"NoSearch", nil}, {"Search", search.Indexer{}}} {
		b.Run(c.name, func(b *testing.B) {
			ix := benchIndexer(b, v, c.pages)
			b.ResetTimer()
			c0 := search.CPUTime()
			for i := 0; i < b.N; i++ {
				if _, err := ix.Scan(context.Background(), index.ScanOptions{Full: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			search.ReportCPU(b, c0)
			if c.pages != nil {
				ix.Store.View(func(tx *store.Tx) error {
					st := tx.SearchIndexSize()
					b.ReportMetric(float64(st.Bytes)/(1<<20), "searchMB")
					b.ReportMetric(float64(st.Terms), "terms")
					return nil
				})
				b.ReportMetric(float64(ix.Store.SizeBytes())/(1<<20), "dbMB")
			}
			ix.Store.Close()
		})
	}
}

// benchQueries builds queries from the vault's manifest (DIR.pages.tsv):
// titles, aliases, unique headings and natural-language questions around
// titles.
func benchQueries(b *testing.B, dir string) []string {
	f, err := os.Open(strings.TrimSuffix(dir, "/") + ".pages.tsv")
	if err != nil {
		b.Skipf("no manifest next to the vault: %v", err)
	}
	defer f.Close()
	var qs []string
	sc := bufio.NewScanner(f)
	for i := 0; sc.Scan() && len(qs) < 400; i++ {
		if i%97 != 0 {
			continue
		}
		col := strings.Split(sc.Text(), "\t")
		if len(col) < 5 {
			continue
		}
		switch len(qs) % 4 {
		case 0:
			qs = append(qs, col[0])
		case 1:
			if col[3] != "" {
				qs = append(qs, col[3])
			} else {
				qs = append(qs, strings.ToLower(col[0]))
			}
		case 2:
			qs = append(qs, col[4])
		case 3:
			qs = append(qs, "how do I use "+strings.ToLower(col[0])+"?")
		}
	}
	return qs
}

// BenchmarkQuery measures in-process search latency (ranking, page
// records, snippets read from the files) over the manifest's queries and
// reports p50 and p95.
func BenchmarkQuery(b *testing.B) {
	v := benchVault(b)
	ix := benchIndexer(b, v, search.Indexer{})
	var docs uint32
	ix.Store.View(func(tx *store.Tx) error { docs = tx.SearchStats().Docs; return nil })
	if docs == 0 {
		if _, err := ix.Scan(context.Background(), index.ScanOptions{Full: true}); err != nil {
			b.Fatal(err)
		}
	}
	qs := benchQueries(b, v.Root)
	read := func(p string) ([]byte, error) { return os.ReadFile(v.Abs(p)) }
	var size store.SearchIndexStats
	ix.Store.View(func(tx *store.Tx) error { size = tx.SearchIndexSize(); return nil })
	// one untimed pass: the store's pages are mapped in, as in a server
	for _, q := range qs {
		if _, err := search.Search(ix.Store, q, search.Options{K: 5, ReadFile: read}); err != nil {
			b.Fatal(err)
		}
	}
	type timed struct {
		q string
		d time.Duration
	}
	var lat []time.Duration
	var slow []timed
	b.ResetTimer()
	c0 := search.CPUTime()
	for i := 0; i < b.N; i++ {
		q := qs[i%len(qs)]
		t0 := time.Now()
		if _, err := search.Search(ix.Store, q, search.Options{K: 5, ReadFile: read}); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		lat = append(lat, d)
		slow = append(slow, timed{q, d})
	}
	b.StopTimer()
	search.ReportCPU(b, c0)
	b.ReportMetric(float64(size.Bytes)/(1<<20), "searchMB")
	b.ReportMetric(float64(size.Terms), "terms")
	b.ReportMetric(float64(size.Blocks), "blocks")
	sort.Slice(slow, func(i, j int) bool { return slow[i].d > slow[j].d })
	for _, s := range slow[:min(3, len(slow))] {
		b.Logf("slow: %v %q", s.d, s.q)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
}

// benchQuery is one query of the repository's query set and its kind.
type benchQuery struct{ kind, q string }

// loadQuerySet reads testdata/search/bench-queries.txt (its header
// describes the format).
func loadQuerySet(b *testing.B) []benchQuery {
	data, err := os.ReadFile(filepath.Join(testvault.RepoRoot(), "testdata", "search", "bench-queries.txt"))
	if err != nil {
		b.Fatal(err)
	}
	var out []benchQuery
	kind := ""
	for _, line := range strings.Split(string(data), "\n") {
		if k, ok := strings.CutPrefix(line, "#kind:"); ok {
			kind = strings.TrimSpace(k)
			continue
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, benchQuery{kind, line})
	}
	return out
}

// BenchmarkQuerySet measures in-process search latency (ranking, page
// records, phrase checks and snippets read from the files) over the
// repository's query set, overall and per kind, and reports p50 and p95:
//
//	SYNAPSE_BENCH_VAULT=/tmp/v100k go test ./search -run '^$' -bench QuerySet -benchtime 20x -count 6
//
// -benchtime Nx runs every query N times per kind.
func BenchmarkQuerySet(b *testing.B) {
	v := benchVault(b)
	ix := benchIndexer(b, v, search.Indexer{})
	var docs uint32
	ix.Store.View(func(tx *store.Tx) error { docs = tx.SearchStats().Docs; return nil })
	if docs == 0 {
		if _, err := ix.Scan(context.Background(), index.ScanOptions{Full: true}); err != nil {
			b.Fatal(err)
		}
	}
	all := loadQuerySet(b)
	read := func(p string) ([]byte, error) { return os.ReadFile(v.Abs(p)) }
	for _, q := range all {
		if _, err := search.Search(ix.Store, q.q, search.Options{K: 5, ReadFile: read}); err != nil {
			b.Fatalf("%q: %v", q.q, err)
		}
	}
	kinds := []string{"all"}
	for _, q := range all {
		if !slices.Contains(kinds, q.kind) {
			kinds = append(kinds, q.kind)
		}
	}
	for _, kind := range kinds {
		var qs []benchQuery
		for _, q := range all {
			if kind == "all" || q.kind == kind {
				qs = append(qs, q)
			}
		}
		b.Run(kind, func(b *testing.B) {
			type timed struct {
				q      string
				d, cpu time.Duration
			}
			var lat []timed
			c0 := search.CPUTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, q := range qs {
					t0, u0 := time.Now(), search.CPUTime()
					if _, err := search.Search(ix.Store, q.q, search.Options{K: 5, ReadFile: read}); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, timed{q.q, time.Since(t0), search.CPUTime() - u0})
				}
			}
			b.StopTimer()
			if os.Getenv("SEARCH_BENCH_EACH") != "" && kind == "all" {
				// each query's median wall and CPU time, by CPU time
				wall, cpu := map[string][]time.Duration{}, map[string][]time.Duration{}
				for _, l := range lat {
					wall[l.q] = append(wall[l.q], l.d)
					cpu[l.q] = append(cpu[l.q], l.cpu)
				}
				var med []timed
				for q := range wall {
					slices.Sort(wall[q])
					slices.Sort(cpu[q])
					med = append(med, timed{q, wall[q][len(wall[q])/2], cpu[q][len(cpu[q])/2]})
				}
				sort.Slice(med, func(i, j int) bool { return med[i].cpu > med[j].cpu })
				for _, m := range med {
					b.Logf("wall %7.2f ms  cpu %7.2f ms  %.90q", float64(m.d.Microseconds())/1000, float64(m.cpu.Microseconds())/1000, m.q)
				}
			}
			b.ReportMetric(float64((search.CPUTime()-c0).Microseconds())/1000/float64(b.N*len(qs)), "cpu-ms/query")
			// how much of the scored terms' postings top-k retrieval
			// decoded (the rest was skipped by pruning)
			var dec, all int
			for _, q := range qs {
				d, a, err := search.RankWork(ix.Store, q.q, 5)
				if err != nil {
					b.Fatal(err)
				}
				dec, all = dec+d, all+a
			}
			b.ReportMetric(100*float64(dec)/float64(max(all, 1)), "decoded-%")
			sort.Slice(lat, func(i, j int) bool { return lat[i].d < lat[j].d })
			if kind == "all" {
				for _, s := range lat[max(0, len(lat)-3):] {
					b.Logf("slow: %v %q", s.d, s.q)
				}
			}
			b.ReportMetric(float64(lat[len(lat)/2].d.Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].d.Microseconds())/1000, "p95-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkUpdateOnePage measures an incremental single-page update at
// the vault's size: one page's text changes and
//
//	/Search re-indexes it in the search index alone (one write
//	  transaction: IndexPages and the commit);
//	/Scan runs the scanner on that path (page record, links, graph and
//	  search index), as `synapse source rescan` or the write path does.
func BenchmarkUpdateOnePage(b *testing.B) {
	v := benchVault(b)
	ix := benchIndexer(b, v, search.Indexer{})
	var docs uint32
	ix.Store.View(func(tx *store.Tx) error { docs = tx.SearchStats().Docs; return nil })
	if docs == 0 {
		if _, err := ix.Scan(context.Background(), index.ScanOptions{Full: true}); err != nil {
			b.Fatal(err)
		}
	}
	var page string
	filepath.WalkDir(v.Abs(vault.WikiDir), func(p string, d os.DirEntry, err error) error {
		if page == "" && err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && !strings.HasSuffix(filepath.Dir(p), "wiki") {
			page = p
		}
		return nil
	})
	orig, err := os.ReadFile(page)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		os.WriteFile(page, orig, 0o644)
		ix.Scan(context.Background(), index.ScanOptions{Paths: []string{strings.TrimPrefix(page, v.Root+"/")}})
	})
	rel, _ := v.Rel(page)
	edited := func(i int) []byte {
		return append(append([]byte{}, orig...), fmt.Sprintf("\n\nEdit %d adds zymurgy%d and quokka.\n", i, i)...)
	}
	b.Run("Search", func(b *testing.B) {
		var rec *store.PageRec
		ix.Store.View(func(tx *store.Tx) error {
			var err error
			rec, err = tx.Page(tx.DocByPath(rel))
			return err
		})
		if rec == nil {
			b.Fatalf("%s is not indexed", rel)
		}
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			pg := markdown.Parse(rel, edited(i))
			b.StartTimer()
			err := ix.Store.Update(func(tx *store.Tx) error {
				return search.Indexer{}.IndexPages(tx, []index.IndexedPage{{Doc: rec.Doc, Rec: rec, Parsed: pg}})
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Scan", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			if err := os.WriteFile(page, edited(i), 0o644); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := ix.Scan(context.Background(), index.ScanOptions{Paths: []string{rel}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkIndexPages measures the search indexer alone: the vault's pages
// are read and parsed once, then indexed into a fresh store in the
// scanner's batches of 2000 (one write transaction each).
func BenchmarkIndexPages(b *testing.B) {
	v := benchVault(b)
	var pages []index.IndexedPage
	doc := uint32(0)
	filepath.WalkDir(v.Abs(vault.WikiDir), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		rel, _ := v.Rel(p)
		if vault.IsReserved(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		pg := markdown.Parse(rel, data)
		doc++
		typ := pg.Type
		if typ == "" {
			typ = vault.TypeFromPath(rel)
		}
		pages = append(pages, index.IndexedPage{Doc: doc, Parsed: pg, Rec: &store.PageRec{
			Doc: doc, Path: rel, Title: pg.Title, Type: typ, Aliases: pg.Aliases, Tags: pg.Tags, Sources: pg.Sources}})
		return nil
	})
	b.ResetTimer()
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "s.db")
		s, err := store.Open(path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c0 := search.CPUTime()
		for j := 0; j < len(pages); j += 2000 {
			batch := pages[j:min(j+2000, len(pages))]
			if err := s.Update(func(tx *store.Tx) error { return search.Indexer{}.IndexPages(tx, batch) }); err != nil {
				b.Fatal(err)
			}
		}
		cpu += search.CPUTime() - c0
		b.StopTimer()
		s.Close()
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}
