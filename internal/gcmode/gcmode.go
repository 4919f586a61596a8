// Package gcmode sets how a synapse process collects garbage: a short CLI
// verb (one operation, then exit) collects only near the memory limit,
// everything that runs long or works through the whole vault (serve, a
// scan, reindex, embed) collects as Go does by default.
//
// A short verb's heap grows from nothing and the process exits soon
// after: collecting as it grows was a sixth to a third of a page write's
// CPU. The memory limit stays the bound: with the collector off, the
// runtime still collects when the heap nears it, so memory never grows
// past it for garbage.
package gcmode

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
)

// DefaultMemoryLimit is the soft memory limit when GOMEMLIMIT is not set:
// the garbage collector works harder near it, which keeps a reindex of a
// 100,000-page vault near 200 MB of anonymous memory for about 5% more
// time. It is a soft limit: nothing fails when more is needed.
const DefaultMemoryLimit = 200 << 20

var (
	mu  sync.Mutex
	off bool // Short turned the collector off
)

// Short sets the memory limit (DefaultMemoryLimit unless GOMEMLIMIT is
// set) and turns the collector off until the heap nears it, unless GOGC
// is set or the limit is off (GOMEMLIMIT=off): then the user's setting
// stands. main calls it first thing; commands that run long call Long.
func Short() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(DefaultMemoryLimit)
	}
	if os.Getenv("GOGC") != "" || debug.SetMemoryLimit(-1) == math.MaxInt64 {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	debug.SetGCPercent(-1)
	off = true
}

// Long turns the collector back on (GOGC=100, Go's default) if Short
// turned it off: for a server, a scan of the vault, a reindex. It is
// safe to call more than once and from any goroutine.
func Long() {
	mu.Lock()
	defer mu.Unlock()
	if off {
		debug.SetGCPercent(100)
		off = false
	}
}

// Off reports whether the collector is off (Short, and no Long since).
func Off() bool {
	mu.Lock()
	defer mu.Unlock()
	return off
}
