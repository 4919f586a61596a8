package ops

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// goneProcess returns the id of a process that has ended.
func goneProcess(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no process to end: %v", err)
	}
	return cmd.Process.Pid
}

// TestReview_ClaimOfAGoneProcess: an item claimed by a command that was
// killed while it acted (a create writing its page) can be decided at
// once; a claim whose process is still there, or whose process is not
// recorded, holds until its deadline.
func TestReview_ClaimOfAGoneProcess(t *testing.T) {
	for _, tc := range []struct {
		name    string
		holder  func(t *testing.T) int // 0: none recorded
		refused bool
	}{
		{"holder gone", goneProcess, false},
		{"holder alive", func(*testing.T) int { return os.Getpid() }, true},
		{"no holder recorded", func(*testing.T) int { return 0 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t, testvault.New(t))
			it := add(t, e, TypeMissingPage, "Missing page: claimed")
			pid := tc.holder(t)
			if err := e.Store.Update(func(tx *store.Tx) error {
				r, _ := tx.ReviewByID(it.ID)
				r.ClaimNS = e.now().Add(time.Hour).UnixNano()
				if pid != 0 {
					if err := tx.SetClaimHolder(r.Seq, pid); err != nil {
						return err
					}
				}
				return tx.PutReview(r)
			}); err != nil {
				t.Fatal(err)
			}
			_, err := call[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "create"})
			if tc.refused {
				wantCode(t, err, errs.Conflict, "being acted on")
				return
			}
			if err != nil {
				t.Fatalf("create after the holder was gone: %v", err)
			}
			if got := item(t, e, it.ID); got.Status != StatusCreated {
				t.Errorf("status %s", got.Status)
			}
			if err := e.Store.View(func(tx *store.Tx) error {
				r, _ := tx.ReviewByID(it.ID)
				if tx.ClaimHolderGone(r.Seq) {
					t.Error("the decided item still names its holder")
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
