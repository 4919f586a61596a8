package search

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkAnalyze tokenizes the pages of SYNAPSE_BENCH_VAULT (or the
// Obsidian Help corpus) on one goroutine and reports throughput.
func BenchmarkAnalyze(b *testing.B) {
	dir := os.Getenv("SYNAPSE_BENCH_VAULT")
	if dir == "" {
		dir = filepath.Join("..", "testdata", "obsidian-help-en")
	}
	var texts []string
	size := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && strings.Contains(p, "wiki") == (dir != filepath.Join("..", "testdata", "obsidian-help-en")) && size < 40<<20 {
			data, _ := os.ReadFile(p)
			texts = append(texts, string(data))
			size += len(data)
		}
		return nil
	})
	if size == 0 {
		for _, p := range mustGlob(filepath.Join(dir, "*", "*.md")) {
			data, _ := os.ReadFile(p)
			texts = append(texts, string(data))
			size += len(data)
		}
	}
	a := NewAnalyzer()
	b.SetBytes(int64(size))
	b.ResetTimer()
	start := CPUTime()
	n := 0
	for i := 0; i < b.N; i++ {
		for _, t := range texts {
			a.Each(t, func(Token) { n++ })
		}
	}
	ReportCPU(b, start)
	b.ReportMetric(float64(n)/float64(b.N), "tokens")
}

func mustGlob(p string) []string {
	m, _ := filepath.Glob(p)
	return m
}
