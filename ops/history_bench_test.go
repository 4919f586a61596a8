//go:build unix

package ops

import (
	"context"
	"fmt"
	"os"
	"path"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/history"
	"github.com/synapse-wiki/synapse/store"
)

// BenchmarkWrite_HistoryCost measures what the page history adds to a
// write, on the vault of SYNAPSE_BENCH_VAULT, indexed once for three kinds
// of write: edit (one page edited again and again: its pack grows to the
// revision bound and is pruned every tenth write; each side edits a twin
// of its own, two pages of the same body), first (a page never written
// through synapse, each time another, drawn in turn by the two sides: the
// replaced bytes are recorded and flushed as well) and new (a page
// created). Writes with the history and without it alternate (ABBA, each
// kind on pages of its own, so that each sees the steady state of its own
// kind); the medians of
// their wall and CPU time are reported with their ratios (CPU: the whole
// process, getrusage, so the flushes' goroutines count).
//
// The history starts as that of a vault whose every page has been written
// (historyFolders): its packs' folders exist, as they do in a vault of
// this size that has a history; only the packs of the pages written here
// are new.
//
//	go run ./tools/genvault -pages 100000 -sources 1000 -out /tmp/g100k
//	SYNAPSE_BENCH_VAULT=/tmp/g100k go test ./ops -run '^$' -bench Write_HistoryCost -benchtime 200x
func BenchmarkWrite_HistoryCost(b *testing.B) {
	e, titles := benchVault(b)
	historyFolders(b, e)
	for _, mode := range []string{"edit", "first", "new"} {
		b.Run(mode, func(b *testing.B) { benchHistoryCost(b, e, titles, mode) })
	}
}

// benchHistoryCost is BenchmarkWrite_HistoryCost's writes of one kind.
func benchHistoryCost(b *testing.B, e *Env, titles []string, mode string) {
	if len(titles) < 8*b.N+10 {
		b.Skipf("the vault has %d pages; %d needed", len(titles), 8*b.N+10)
	}
	hist := e.History
	defer func() { e.History = hist }()
	if mode == "edit" && b.N == 1 {
		twins(b, e, titles, hist)
	}
	var wall, cpu [2]latencies
	for i := 0; i < b.N; i++ {
		for k := 0; k < 2; k++ {
			on := (i+k)%2 == 0 // ABBA: neither kind always goes first
			e.History = nil
			side := 1
			if on {
				e.History, side = hist, 0
			}
			in := benchWriteIn(b, e, titles, mode, i, side)
			c0, t0 := cpuTime(), time.Now()
			var err error
			// labelled, so that a CPU profile tells the sides apart
			// (go tool pprof -tagfocus side=with)
			pprof.Do(context.Background(), pprof.Labels("side", sides[side]), func(ctx context.Context) {
				_, err = WritePage(ctx, e, in)
			})
			if err != nil {
				b.Fatal(err)
			}
			wall[side] = append(wall[side], time.Since(t0))
			cpu[side] = append(cpu[side], cpuTime()-c0)
		}
	}
	for side, name := range sides {
		b.ReportMetric(wall[side].pct(0.50), name+"-p50-ms")
		b.ReportMetric(cpu[side].pct(0.50), name+"-cpu-p50-ms")
	}
	b.ReportMetric(wall[0].pct(0.50)/wall[1].pct(0.50), "wall-ratio")
	b.ReportMetric(cpu[0].pct(0.50)/cpu[1].pct(0.50), "cpu-ratio")
	// the pairs' differences: other work on the machine drifts, and each
	// pair of writes ran side by side
	b.ReportMetric(1+paired(wall)/wall[1].pct(0.50), "wall-paired-ratio")
	b.ReportMetric(1+paired(cpu)/cpu[1].pct(0.50), "cpu-paired-ratio")
	if s, err := hist.Summary(); err == nil {
		b.Logf("%s, %d writes of each: history %d pages, %d revisions, %d bytes, %d pruned", mode, b.N, s.Pages, s.Revisions, s.Bytes, s.PrunedRevisions)
	}
}

// sides names the two sides of BenchmarkWrite_HistoryCost (0: with the
// history).
var sides = [2]string{"with", "without"}

// paired is the median of the differences with − without of the pairs
// of writes, in milliseconds.
func paired(l [2]latencies) float64 {
	var d []float64
	for i := range min(len(l[0]), len(l[1])) {
		d = append(d, float64(l[0][i]-l[1][i])/float64(time.Millisecond))
	}
	if len(d) == 0 {
		return 0
	}
	sort.Float64s(d)
	return d[len(d)/2]
}

// historyFolders makes the folders of the packs of every page of e's
// vault (pages/<id[:2]>/), as a history holding all of them has.
func historyFolders(b *testing.B, e *Env) {
	dirs := map[string]bool{}
	err := e.Store.View(func(tx *store.Tx) error {
		return tx.EachPage(func(p *store.PageRec) bool {
			dirs[p.ID[:2]] = true
			return true
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	for d := range dirs {
		if err := os.MkdirAll(e.Vault.Abs(path.Join(history.Dir, "pages", d)), 0o700); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d folders of packs", len(dirs))
}

// benchWriteIn is write i of a kind (side 0 with history, 1 without).
func benchWriteIn(b *testing.B, e *Env, titles []string, mode string, i, side int) *WritePageIn {
	switch mode {
	case "new":
		return &WritePageIn{Title: fmt.Sprintf("History bench %d-%d-%d", b.N, i, side), Content: fmt.Sprintf("# New %d\n\nLinks [[%s]].\n", i, titles[i])}
	case "first":
		t := titles[4*b.N+4*i+2*side+7] // past those of a shorter run before
		g := getPageOut(b, e, t)
		return &WritePageIn{Title: g.Path, Content: g.Content + fmt.Sprintf("\nfirst edit %d\n", i)}
	}
	g := getPageOut(b, e, twinTitle(side))
	return &WritePageIn{Title: g.Path, Content: g.Content + fmt.Sprintf("\nedit %d\n", i)}
}

// twinTitle is the page the edits of a side rewrite.
func twinTitle(side int) string { return fmt.Sprintf("History bench twin %d", side) }

// twins writes the two pages of the edits, one for each side, with the
// same body (a page of the vault's) and so the same links: a write of
// one costs what a write of the other does, but for the history.
func twins(b *testing.B, e *Env, titles []string, hist *history.Store) {
	body := getPageOut(b, e, titles[len(titles)/2]).Content
	if rest, ok := strings.CutPrefix(body, "---\n"); ok {
		if _, after, ok := strings.Cut(rest, "\n---\n"); ok {
			body = after
		}
	}
	for side := range 2 {
		e.History = nil
		if side == 0 {
			e.History = hist
		}
		if _, err := WritePage(context.Background(), e, &WritePageIn{Title: twinTitle(side), Content: body}); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuTime is the process's CPU time (user + system) so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
