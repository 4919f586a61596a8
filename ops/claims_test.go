package ops

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// otherProcess starts a process that lives until the test ends, or, with
// ended, one that has already ended; it returns its id.
func otherProcess(t *testing.T, ended bool) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if ended {
		cmd = exec.Command("true")
		if err := cmd.Run(); err != nil {
			t.Skipf("no process to run: %v", err)
		}
		return cmd.Process.Pid
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("no process to run: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// TestReview_ClaimOfAnEndedProcess: an item claimed by a command that was
// killed while it acted (a create writing its page) is free again once
// the next command opens the store; a claim whose process still lives, or
// whose process is not recorded, holds until its deadline.
func TestReview_ClaimOfAnEndedProcess(t *testing.T) {
	for _, tc := range []struct {
		name    string
		holder  func(t *testing.T) int // 0: none recorded
		refused bool
	}{
		{"holder ended", func(t *testing.T) int { return otherProcess(t, true) }, false},
		{"holder alive", func(t *testing.T) int { return otherProcess(t, false) }, true},
		{"no holder recorded", func(*testing.T) int { return 0 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := testvault.New(t)
			e, err := OpenEnv(context.Background(), v, OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			it := add(t, e, TypeMissingPage, "Missing page: claimed")
			pid := tc.holder(t)
			if err := e.Store.Update(func(tx *store.Tx) error {
				r, _ := tx.ReviewByID(it.ID)
				if err := claim(tx, r, e.now().Add(time.Hour), e.now()); err != nil {
					return err
				}
				if pid == 0 {
					return tx.ClearClaimHolder(r.Key)
				}
				return tx.SetClaimHolder(r.Key, pid)
			}); err != nil {
				t.Fatal(err)
			}
			e.Close()
			e = newTestEnv(t, v) // the next command
			_, err = call[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "create"})
			if tc.refused {
				wantCode(t, err, errs.Conflict, "being acted on")
				return
			}
			if err != nil {
				t.Fatalf("create once the holder ended: %v", err)
			}
			if got := item(t, e, it.ID); got.Status != StatusCreated {
				t.Errorf("status %s", got.Status)
			}
			var left []uint64
			_ = e.Store.View(func(tx *store.Tx) error { left = tx.GoneClaimHolders(0); return nil })
			if len(left) != 0 {
				t.Errorf("holders left: %v", left)
			}
		})
	}
}
