package search

import (
	"syscall"
	"testing"
	"time"
)

// CPUTime returns the process's user+system CPU time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportCPU reports CPU milliseconds per op since start (the machine's
// other load inflates wall time, much less CPU time).
func ReportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((CPUTime()-start).Milliseconds())/float64(b.N), "cpu-ms/op")
}
