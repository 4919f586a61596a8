//go:build unix

package ops

import (
	"context"
	"syscall"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestSource_ReadFifo: a named pipe is refused at once, never waited on
// (a blocking open would hang this test).
func TestSource_ReadFifo(t *testing.T) {
	v := testvault.New(t)
	must(t, syscall.Mkfifo(v.Abs("raw/sources/pipe.md"), 0o644))
	_, err := readSource(context.Background(), &Env{Vault: v}, &ReadSourceIn{Path: "pipe.md"})
	if errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("fifo: %v, want forbidden", err)
	}
}
