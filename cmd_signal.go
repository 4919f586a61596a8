package main

import (
	"context"
	"sync"
	"time"
)

// signalGrace is how long a verb stopped by SIGINT or SIGTERM has to end
// on its own (its loops check the context) before it is abandoned.
const signalGrace = 150 * time.Millisecond

// sigGuard ends a verb that is still running signalGrace after SIGINT or
// SIGTERM, unless it is writing: reads and scans end at once (everything
// they commit is one bbolt transaction, and a process that ends mid-way
// leaves the store as it was), a write that has started runs to its end,
// and one that has not started never starts. docs/limits.md, "Signals and
// panics".
type sigGuard struct {
	mu        sync.Mutex
	abandoned bool // the verb was abandoned: no write may start
	wrote     bool // a write started: the verb ends on its own
}

// sigGuardKey holds a verb's sigGuard in its context (runOp puts it there).
type sigGuardKey struct{}

// guardOf is the sigGuard of ctx, or nil (a verb run by the desk or a
// test: nothing watches it).
func guardOf(ctx context.Context) *sigGuard {
	g, _ := ctx.Value(sigGuardKey{}).(*sigGuard)
	return g
}

// beginWrite is called before a write starts: false means the verb was
// abandoned and the write must not start. Otherwise the guard waits for
// endWrite before it can end the process.
func (g *sigGuard) beginWrite() bool {
	if g == nil {
		return true
	}
	g.mu.Lock()
	if g.abandoned {
		g.mu.Unlock()
		return false
	}
	g.wrote = true
	return true
}

// endWrite ends what beginWrite began.
func (g *sigGuard) endWrite() {
	if g != nil {
		g.mu.Unlock()
	}
}

// watch ends the process with report's exit code (report prints why)
// once ctx is cancelled, the grace has passed and the verb neither ended
// (stop was not called) nor started a write. It returns stop, which the
// verb calls when it ends. exit nil watches nothing (tests that run the
// CLI in their own process).
func (g *sigGuard) watch(ctx context.Context, exit func(int), report func() int) (stop func()) {
	if exit == nil {
		return func() {}
	}
	ended := make(chan struct{})
	go func() {
		select {
		case <-ended:
			return
		case <-ctx.Done():
		}
		select {
		case <-ended:
			return
		case <-time.After(signalGrace):
		}
		g.mu.Lock()
		if g.wrote {
			g.mu.Unlock()
			return // a write ran to its end: the verb reports it
		}
		// no write starts from here on (beginWrite sees abandoned)
		g.abandoned = true
		g.mu.Unlock()
		exit(report())
	}()
	var once sync.Once
	return func() { once.Do(func() { close(ended) }) }
}
