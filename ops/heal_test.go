package ops

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/hostile"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/internal/vaultgen"
	"github.com/synapse-wiki/synapse/vault"
)

// damagedVault makes a vault of generated pages whose store holds three
// review items (one decided), closed, ready to be damaged.
func damagedVault(t *testing.T) *vault.Vault {
	t.Helper()
	v := testvault.New(t)
	if _, err := vaultgen.Generate(v.Root, vaultgen.Options{Pages: 120, Sources: 3, Seed: 1, BodyWords: 200, CorpusDir: testvault.CorpusDir()}); err != nil {
		t.Fatal(err)
	}
	e, err := OpenEnv(context.Background(), v, OpenOptions{})
	must(t, err)
	var first string
	for _, title := range []string{"Split the page", "Merge two pages", "Check a claim"} {
		out, err := callJSON(t, opAddReview, e, map[string]any{"type": "suggestion", "title": title})
		must(t, err)
		if first == "" {
			first = out.(*AddReviewOut).Item.ID
		}
	}
	_, err = callJSON(t, opResolveReview, e, map[string]any{"id": first, "action": "skip"})
	must(t, err)
	must(t, e.Close())
	return v
}

// damageOps are the verbs run against every damaged store, as the CLI
// runs them: reads open the store read-only.
var damageOps = []struct {
	op    *Op
	input map[string]any
}{
	{opStatus, nil},
	{opSearch, map[string]any{"query": "page"}},
	{opListPages, nil},
	{opGetPage, map[string]any{"title": "index"}},
	{opListReviews, map[string]any{"status": "all"}},
	{opMissing, nil},
	{opLint, nil},
	{opReindex, nil},
}

// runLikeCLI opens the vault as a CLI verb does and runs op, collecting
// what the run says on stderr.
func runLikeCLI(t *testing.T, v *vault.Vault, op *Op, input map[string]any, notes *[]string) ([]byte, error) {
	t.Helper()
	var mu sync.Mutex
	e, err := OpenEnv(context.Background(), v, OpenOptions{
		ReadOnly: op.Access == Read && !op.Rescans, Fresh: !op.Scans && !op.Rescans, NoInitialScan: op.Scans,
		Notify: func(msg string) { mu.Lock(); *notes = append(*notes, msg); mu.Unlock() },
	})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	raw, _ := json.Marshal(input)
	out, err := op.Call(context.Background(), e, raw)
	if err != nil {
		return nil, err
	}
	return MarshalJSON(out)
}

// TestHeal_DamagedStores: for each of the damaged store files, every verb
// answers (the first one heals the store: the damaged file is moved aside,
// the review queue put back, a new store built from the files) or says
// how to recover, and reindex always recovers. With the review journal in
// the vault, no review item is lost, whatever the damage. Without one (a
// vault of an older synapse), the queue survives every damage that leaves
// it readable; where it cannot be read, the loss is said (stderr and
// status), never silent.
func TestHeal_DamagedStores(t *testing.T) {
	base := damagedVault(t)
	for _, journal := range []bool{true, false} {
		for _, d := range hostile.Damages() {
			name := d.Name
			if !journal {
				name += "/no journal"
			}
			t.Run(name, func(t *testing.T) { checkHealed(t, base, d, journal) })
		}
	}
}

func checkHealed(t *testing.T, base *vault.Vault, d hostile.Damage, journal bool) {
	v := testvault.New(t)
	must(t, os.RemoveAll(v.Root))
	must(t, testvault.CopyTree(base.Root, v.Root))
	if !journal {
		must(t, os.Remove(v.Abs(vault.ReviewJournal)))
	}
	must(t, d.Apply(v.Abs(vault.DBFile)))
	var notes []string
	for _, c := range damageOps {
		_, err := runLikeCLI(t, v, c.op, c.input, &notes)
		if err != nil && (errs.CodeOf(err) == errs.Internal || !strings.Contains(errs.Message(err), "synapse reindex")) {
			t.Errorf("%s: %v", c.op.Name, err)
		}
	}
	out, err := runLikeCLI(t, v, opListReviews, map[string]any{"status": "all"}, &notes)
	if err != nil {
		t.Fatalf("review list after reindex: %v", err)
	}
	var list ListReviewsOut
	must(t, json.Unmarshal(out, &list))
	moved, _ := filepath.Glob(v.Abs(vault.DBFile) + ".damaged-*")
	healed := strings.Join(notes, "\n")
	st, err := runLikeCLI(t, v, opStatus, nil, &notes)
	must(t, err)
	var s StatusOut
	must(t, json.Unmarshal(st, &s))
	switch {
	case journal:
		if list.Total != 3 {
			t.Errorf("%d of 3 review items kept with the journal", list.Total)
		}
		if len(moved) > 0 && (s.StoreHealed == nil || !s.StoreHealed.FromJournal || s.StoreHealed.QueueLost ||
			!strings.Contains(healed, "replayed from "+vault.ReviewJournal)) {
			t.Errorf("the replay is not said: status %+v, said %q", s.StoreHealed, healed)
		}
	case d.Lossy || list.Total != 3:
		// the queue could not be read back (whole): said on stderr and
		// by status, never silent
		if len(moved) != 1 || !strings.Contains(healed, "COULD NOT BE RECOVERED") {
			t.Errorf("%d of 3 review items kept, and the loss is not said: moved %v, said %q", list.Total, moved, healed)
		}
		if s.StoreHealed == nil || !s.StoreHealed.QueueLost {
			t.Errorf("status does not say the queue was lost: %+v", s.StoreHealed)
		}
	}
	if len(moved) > 0 && !strings.Contains(healed, "moved to .synapse/synapse.db.damaged-") {
		t.Errorf("the move is not said: %q", healed)
	}
}
