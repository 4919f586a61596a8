package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRun_PanicExitsOne: a panic of the command ends it with exit 1 (an
// internal error) and one short line, not Go's crash (exit 2, the code of
// a usage error, and a goroutine trace).
func TestRun_PanicExitsOne(t *testing.T) {
	var stderr bytes.Buffer
	code := func() (code int) {
		defer exitOnPanic(&stderr, &code)
		panic("boom")
	}()
	msg := stderr.String()
	if code != 1 || !strings.HasPrefix(msg, "synapse: internal error: boom") || strings.Contains(msg, "goroutine") || strings.Count(msg, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, msg)
	}
}
