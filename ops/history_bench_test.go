//go:build unix

package ops

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWrite_HistoryCost measures what the page history adds to a
// write, on the vault of SYNAPSE_BENCH_VAULT: writes with the history and
// without it alternate (each kind on pages of its own, so that each sees
// the steady state of its own kind), and the wall and CPU time of each
// are reported (CPU: the whole process, getrusage, so the history's
// background flush counts). SYNAPSE_BENCH_MODE picks the writes: edit
// (one page each, edited again and again; the default), first (a page
// never written through synapse, each time another) or new.
func BenchmarkWrite_HistoryCost(b *testing.B) {
	e, titles := benchVault(b)
	if len(titles) < 4*b.N+10 {
		b.Skipf("the vault has %d pages; %d needed", len(titles), 4*b.N+10)
	}
	mode := os.Getenv("SYNAPSE_BENCH_MODE")
	if mode == "" {
		mode = "edit"
	}
	hist := e.History
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
			if _, err := WritePage(context.Background(), e, in); err != nil {
				b.Fatal(err)
			}
			wall[side] = append(wall[side], time.Since(t0))
			cpu[side] = append(cpu[side], cpuTime()-c0)
		}
	}
	e.History = hist
	for side, name := range []string{"with", "without"} {
		b.ReportMetric(wall[side].pct(0.50), name+"-p50-ms")
		b.ReportMetric(cpu[side].pct(0.50), name+"-cpu-p50-ms")
	}
	b.ReportMetric(wall[0].pct(0.50)/wall[1].pct(0.50), "wall-ratio")
	b.ReportMetric(cpu[0].pct(0.50)/cpu[1].pct(0.50), "cpu-ratio")
	if s, err := hist.Summary(); err == nil {
		b.Logf("history: %d pages, %d revisions, %d bytes", s.Pages, s.Revisions, s.Bytes)
	}
}

// benchWriteIn is write i of a kind (side 0 with history, 1 without).
func benchWriteIn(b *testing.B, e *Env, titles []string, mode string, i, side int) *WritePageIn {
	switch mode {
	case "new":
		return &WritePageIn{Title: fmt.Sprintf("History bench %d-%d", i, side), Content: fmt.Sprintf("# New %d\n\nLinks [[%s]].\n", i, titles[i])}
	case "first":
		t := titles[4*i+2*side+7]
		g := getPageOut(b, e, t)
		return &WritePageIn{Title: g.Path, Content: g.Content + fmt.Sprintf("\nfirst edit %d\n", i)}
	}
	t := titles[len(titles)/2+side]
	g := getPageOut(b, e, t)
	return &WritePageIn{Title: g.Path, Content: g.Content + fmt.Sprintf("\nedit %d\n", i)}
}

// cpuTime is the process's CPU time (user + system) so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
