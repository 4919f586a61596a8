package ops

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

// moveVault is a small vault with a page that several pages link to in
// several ways.
func moveVault(t *testing.T) *vault.Vault {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/notes/target.md", "---\ntitle: Target\n---\nSee [[a]] and [b](../b.md).\n")
	testvault.Write(t, v, "wiki/a.md", "[[Target]] and [[target#H|h]]\n")
	testvault.Write(t, v, "wiki/b.md", "---\nrel: \"[[Target]]\"\n---\n[t](notes/target.md)\n")
	testvault.Write(t, v, "wiki/c/d.md", "![[target]] [[notes/target]]\n")
	testvault.Write(t, v, "wiki/e.md", "No link.\n")
	return v
}

var crashMove = MovePageIn{Title: "Target", To: "Goal", Path: "wiki/archive/goal.md"}

// TestMove_CrashAtEveryStep stops a move at each of its file-system steps
// in turn (every step from there on fails, as after a kill: the files stay
// as they are at that moment) and opens the vault again: the vault is as
// before the move or as after it, never in between, with no journal left
// and an index that matches its files.
func TestMove_CrashAtEveryStep(t *testing.T) {
	ctx := context.Background()
	// the vault before and after a move that is not interrupted
	v0 := moveVault(t)
	before := testvault.WikiFiles(t, v0)
	e0 := newTestEnv(t, v0)
	if _, err := movePage(ctx, e0, &crashMove); err != nil {
		t.Fatal(err)
	}
	after := testvault.WikiFiles(t, v0)
	outcomes := map[string]int{}
	for n := 1; n < 200; n++ {
		v := moveVault(t)
		e, err := OpenEnv(ctx, v, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.Now = e0.Now
		steps := 0
		f := &faultFS{}
		f.before = func(step string) {
			if steps++; steps >= n {
				f.fail = step // this step and every one after fails
			}
		}
		privateStep = func() error {
			f.mu.Lock()
			defer f.mu.Unlock()
			if steps++; steps >= n {
				return errInjected
			}
			return nil
		}
		withFS(e, f)
		_, moveErr := movePage(ctx, e, &crashMove)
		privateStep = nil
		done := steps < n
		e.Close()

		e, err = OpenEnv(ctx, v, OpenOptions{}) // finishes or rolls back
		if err != nil {
			t.Fatalf("step %d: open after the crash: %v", n, err)
		}
		e.Now = e0.Now
		got := testvault.WikiFiles(t, v)
		switch {
		case maps.Equal(got, before):
			outcomes["before"]++
		case maps.Equal(got, after):
			outcomes["after"]++
		default:
			t.Fatalf("step %d (move error %v): the vault is neither as before nor as after the move:\n%s", n, moveErr, diffFiles(before, after, got))
		}
		if _, err := os.Stat(v.Abs(moveJournalFile)); !os.IsNotExist(err) {
			t.Fatalf("step %d: the journal is left (%v)", n, err)
		}
		t.Logf("step %d: %d steps taken, move error %v", n, steps, moveErr)
		checkMoveHistory(t, e, maps.Equal(got, after))
		checkRebuilt(t, e)
		e.Close()
		if done {
			t.Logf("a move takes %d steps; crashed at each: %v", n-1, outcomes)
			if outcomes["before"] == 0 || outcomes["after"] < 2 {
				t.Fatalf("outcomes %v: the crashes did not land on both sides of the journal", outcomes)
			}
			return
		}
	}
	t.Fatal("the move did not finish in 200 steps")
}

// checkMoveHistory checks the page history after crashMove was
// interrupted and finished or rolled back: once moved, the moved page
// and a rewritten one hold their bytes from before the move and one
// revision of the move each, however often a crash made the move's last
// steps run again; otherwise no history was written.
func checkMoveHistory(t *testing.T, e *Env, moved bool) {
	t.Helper()
	want := map[string]string{"wiki/archive/goal.md": "2:move:synapse 1:edit:file", "wiki/a.md": "2:relink:synapse 1:edit:file"}
	if !moved {
		want = map[string]string{"wiki/notes/target.md": "", "wiki/a.md": ""}
	}
	for p, w := range want {
		if got := strings.Join(revOps(historyOf(t, e, p)), " "); got != w {
			t.Fatalf("the history of %s: %q, want %q", p, got, w)
		}
	}
}

// checkRebuilt fails when the index differs from one rebuilt from the
// files.
func checkRebuilt(t *testing.T, e *Env) {
	t.Helper()
	got, err := storecheck.Fingerprint(e.Store)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Index.Scan(context.Background(), index.ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	want, _ := storecheck.Fingerprint(e.Store)
	if got != want {
		d := storecheck.DiffLines(want, got)
		t.Fatalf("the index differs from a rebuild:\n%s", strings.Join(d[:min(len(d), 12)], "\n"))
	}
}

// diffFiles describes how got differs from before and after.
func diffFiles(before, after, got map[string]string) string {
	var b strings.Builder
	keys := slices.Sorted(maps.Keys(got))
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if _, ok := got[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		switch g := got[k]; {
		case g == before[k] && g == after[k]:
		case g == before[k]:
			b.WriteString(k + ": as before\n")
		case g == after[k]:
			b.WriteString(k + ": as after\n")
		default:
			b.WriteString(k + ": neither: " + g + "\n")
		}
	}
	return b.String()
}
