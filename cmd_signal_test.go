package main

import (
	"context"
	"testing"
	"time"
)

// A verb still running after the grace is ended with the code report
// gives, and no write starts after that; a write that started is waited
// for and not ended; a verb that ended is not ended again.
func TestSigGuard(t *testing.T) {
	exited := make(chan int, 1)
	exit := func(code int) { exited <- code }
	report := func() int { return 5 }

	var g sigGuard
	ctx, cancel := context.WithCancel(context.Background())
	defer g.watch(ctx, exit, report)()
	cancel()
	select {
	case code := <-exited:
		if code != 5 {
			t.Errorf("exit %d, want 5", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a read was not ended after the signal")
	}
	if g.beginWrite() {
		t.Error("a write started after the verb was ended")
	}

	var w sigGuard
	ctx, cancel = context.WithCancel(context.Background())
	defer w.watch(ctx, exit, report)()
	if !w.beginWrite() {
		t.Fatal("a write was refused before any signal")
	}
	cancel()
	time.Sleep(3 * signalGrace)
	w.endWrite()
	select {
	case code := <-exited:
		t.Errorf("a verb whose write ran was ended (exit %d)", code)
	case <-time.After(3 * signalGrace):
	}

	var d sigGuard
	ctx, cancel = context.WithCancel(context.Background())
	d.watch(ctx, exit, report)()
	cancel()
	select {
	case code := <-exited:
		t.Errorf("a verb that had ended was ended (exit %d)", code)
	case <-time.After(3 * signalGrace):
	}
}
