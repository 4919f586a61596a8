package gcmode

import (
	"math"
	"runtime/debug"
	"testing"
)

// restore puts the test binary's collector and limit back as they were.
func restore(t *testing.T) {
	pct, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(pct)
	t.Cleanup(func() {
		Long()
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	})
}

func TestShortThenLong(t *testing.T) {
	restore(t)
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(math.MaxInt64)
	Short()
	if got := debug.SetMemoryLimit(-1); got != DefaultMemoryLimit {
		t.Fatalf("memory limit %d after Short, want %d", got, DefaultMemoryLimit)
	}
	if !Off() {
		t.Fatal("Short left the collector on")
	}
	if pct := debug.SetGCPercent(-1); pct != -1 {
		t.Fatalf("GC percent %d after Short, want -1", pct)
	}
	Long()
	Long() // twice is fine
	if Off() {
		t.Fatal("Long left the collector off")
	}
	if pct := debug.SetGCPercent(100); pct != 100 {
		t.Fatalf("GC percent %d after Long, want 100", pct)
	}
	if got := debug.SetMemoryLimit(-1); got != DefaultMemoryLimit {
		t.Fatalf("Long changed the memory limit to %d", got)
	}
}

// GOGC set, or the limit off: the user's setting stands.
func TestShortRespectsUser(t *testing.T) {
	restore(t)
	t.Setenv("GOGC", "50")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetGCPercent(50)
	Short()
	if Off() || debug.SetGCPercent(50) != 50 {
		t.Fatal("Short turned the collector off with GOGC set")
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "off")
	debug.SetMemoryLimit(math.MaxInt64)
	Short()
	if Off() || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Fatal("Short turned the collector off (or set a limit) with GOMEMLIMIT=off")
	}
}
