package ops

import (
	"os"
	"time"

	"github.com/synapse-wiki/synapse/store"
)

// A command that acts on a review item (create, deep-research) claims it
// until a deadline, so that no other command decides it meanwhile. When
// the command is killed (SIGKILL, a crash) its claim would hold the item
// until that deadline, refusing every create. The claim records its
// process (store.SetClaimHolder): a command that opens the store
// read-write releases the claims whose process has ended, journaled like
// any release. A process that still lives keeps its claim; so does a
// claim whose holder is not recorded, until its deadline.

// releaseGoneClaims releases the claims of processes that have ended. It
// needs the store read-write (nothing to do otherwise).
func (e *Env) releaseGoneClaims() error {
	if e.Store.ReadOnly() {
		return nil
	}
	var gone []uint64
	_ = e.Store.View(func(tx *store.Tx) error {
		gone = tx.GoneClaimHolders(os.Getpid())
		return nil
	})
	if len(gone) == 0 {
		return nil
	}
	return e.Store.Update(func(tx *store.Tx) error {
		for _, k := range gone {
			r, err := tx.ReviewByKey(k)
			if err != nil {
				return err
			}
			if r != nil && !r.Terminal() && r.ClaimNS != 0 {
				if err := claim(tx, r, time.Time{}, e.now()); err != nil {
					return err
				}
			}
			if err := tx.ClearClaimHolder(k); err != nil {
				return err
			}
		}
		return nil
	})
}
