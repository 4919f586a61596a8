//go:build unix

package history

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkHistory_VaultOfRevisions fills a history as a vault of N pages
// with R revisions each would (SYNAPSE_BENCH_VAULT: a generated vault,
// go run ./tools/genvault; SYNAPSE_BENCH_REVS: R, default 10): each page's
// file is its first revision, each later one changes a line and adds one,
// as an agent's edit does. It reports the bytes the history takes (its
// own count and the packs' blocks on disk) against the pages' own bytes,
// and what pruning did under the default bounds.
func BenchmarkHistory_VaultOfRevisions(b *testing.B) {
	src := os.Getenv("SYNAPSE_BENCH_VAULT")
	if src == "" {
		b.Skip("set SYNAPSE_BENCH_VAULT to a generated vault (go run ./tools/genvault)")
	}
	revs := 10
	if n, err := strconv.Atoi(os.Getenv("SYNAPSE_BENCH_REVS")); err == nil && n > 0 {
		revs = n
	}
	var files []string
	_ = filepath.WalkDir(filepath.Join(src, "wiki"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, ".synapse"), 0o700); err != nil {
			b.Fatal(err)
		}
		s := For(dir)
		var pageBytes int64
		start := time.Now()
		for n, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			pageBytes += int64(len(data))
			id := fmt.Sprintf("p%07d", n)
			lines := strings.Split(string(data), "\n")
			for r := 0; r < revs; r++ {
				if r > 0 {
					k := (r*7 + n) % len(lines)
					lines[k] = fmt.Sprintf("Revision %d rewrote this line of page %d with a new claim.", r, n)
					lines = append(lines, fmt.Sprintf("A sentence added by revision %d.", r))
				}
				p, err := s.Edit(id)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Append(Entry{Content: []byte(strings.Join(lines, "\n")), Op: OpWrite, Origin: OriginSynapse, Path: "wiki/x.md", Title: id}); err != nil {
					b.Fatal(err)
				}
				if err := p.Close(); err != nil {
					b.Fatal(err)
				}
			}
		}
		elapsed := time.Since(start)
		sum, _ := s.Summary()
		var used int64
		_ = filepath.WalkDir(filepath.Join(dir, filepath.FromSlash(Dir)), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if st, err := os.Stat(p); err == nil {
					used += st.Sys().(*syscall.Stat_t).Blocks * 512
				}
			}
			return nil
		})
		b.ReportMetric(float64(sum.Bytes)/(1<<20), "history-MiB")
		b.ReportMetric(float64(sum.DiskBytes)/(1<<20), "counted-disk-MiB")
		b.ReportMetric(float64(used)/(1<<20), "on-disk-MiB")
		b.ReportMetric(float64(pageBytes)/(1<<20), "pages-MiB")
		b.ReportMetric(float64(sum.Revisions), "revisions")
		b.ReportMetric(float64(sum.PrunedRevisions), "pruned")
		b.ReportMetric(float64(elapsed.Microseconds())/float64(len(files)*revs), "µs/revision")
		b.Logf("%d pages × %d revisions: %+v (limits %+v)", len(files), revs, sum, s.Limits())
	}
}
