package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
)

// The review journal end to end, with the real binary: the queue of a
// vault whose store is deleted comes back item by item; two copies of a
// vault merged by git keep both sides' decisions; decisions acknowledged
// before a SIGKILL are never lost. See docs/review.md.

// emptyVault makes a new vault in a temporary folder.
func emptyVault(t *testing.T) *vault.Vault {
	t.Helper()
	v, _, err := vault.Init(filepath.Join(t.TempDir(), "v"))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// runIn runs the binary in a vault and returns its stdout, failing the
// test on an error.
func runIn(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append(args, "--vault", dir)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("synapse %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

// queueOf lists every review item through the CLI, page by page.
func queueOf(t *testing.T, bin, dir string) []ops.ReviewItem {
	t.Helper()
	var all []ops.ReviewItem
	for off := 0; ; off += 100 {
		var page ops.ListReviewsOut
		out := runIn(t, bin, dir, "review", "list", "--status", "all", "--limit", "100", "--offset", fmt.Sprint(off), "--json")
		if err := json.Unmarshal([]byte(out), &page); err != nil {
			t.Fatalf("review list: %v\n%s", err, out)
		}
		all = append(all, page.Items...)
		if len(all) >= page.Total {
			return all
		}
	}
}

// opCall runs an operation in this process, as an adapter would.
func opCall[Out any](t *testing.T, e *ops.Env, name string, in any) *Out {
	t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ops.Lookup(name).Call(context.Background(), e, raw)
	if err != nil {
		t.Fatalf("%s %s: %v", name, raw, err)
	}
	return out.(*Out)
}

// fillQueue files n review items and decides them so that every status
// has its share: pending, created (a stub page), skipped, dismissed,
// deep_researched (a research command), auto_resolved by hand and by
// write_page (a page that answers a missing page).
func fillQueue(t *testing.T, v *vault.Vault, n int) {
	t.Helper()
	t.Setenv(ops.ResearchCmdEnv, "echo researched")
	e, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	type obj = map[string]any
	actions := []string{"", "create", "skip", "dismiss", "deep-research", "resolve", "written"}
	for i := 0; i < n; i++ {
		typ := []string{"missing-page", "suggestion", "confirm", "contradiction"}[i%4]
		title := fmt.Sprintf("Item %03d", i)
		act := actions[i%len(actions)]
		if act == "create" || act == "written" {
			typ = "missing-page"
		}
		it := opCall[ops.AddReviewOut](t, e, "review.add", obj{"type": typ, "title": title, "rationale": fmt.Sprint("why ", i),
			"origin": []string{"agent", "user"}[i%2], "referenced_pages": []string{"Hub"}})
		switch act {
		case "":
		case "written":
			opCall[ops.WritePageOut](t, e, "page.write", obj{"title": title, "content": "Written.\n"})
		default:
			opCall[ops.ResolveReviewOut](t, e, "review.resolve", obj{"id": it.Item.ID, "action": act,
				"decided_by": []string{"user", "agent"}[i%2]})
		}
	}
}

// Delete the store of a vault with 500 review items in every status:
// after `synapse reindex`, and after a plain `synapse review list`, the
// queue is the same item by item (ids, order, statuses, resolutions,
// deciders, times).
func TestJournalCLI_QueueSurvivesTheStore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a queue of 500 items")
	}
	bin, v := synapseBinary(t), emptyVault(t)
	fillQueue(t, v, 500)
	want := queueOf(t, bin, v.Root)
	count := map[string]int{}
	for _, it := range want {
		count[it.Status+"/"+it.DecidedBy]++
	}
	for _, s := range ops.ReviewStatuses {
		if n := count[s+"/"] + count[s+"/user"] + count[s+"/agent"] + count[s+"/rule"]; len(want) != 500 || n < 50 {
			t.Fatalf("%d items, %d %s: %v", len(want), n, s, count)
		}
	}
	for _, how := range [][]string{{"reindex"}, {"review", "list"}} {
		if err := os.Remove(v.Abs(vault.DBFile)); err != nil {
			t.Fatal(err)
		}
		runIn(t, bin, v.Root, how...)
		got := queueOf(t, bin, v.Root)
		if !reflect.DeepEqual(got, want) {
			for i := range min(len(got), len(want)) {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("after %s, item %d differs:\n got %+v\nwant %+v", how, i, got[i], want[i])
				}
			}
			t.Fatalf("after %s: %d items, want %d", how, len(got), len(want))
		}
	}
}

// git runs git in dir.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Two copies of a vault (a git clone) decide different items; git merges
// their journals (init's .gitattributes: union): the queue replayed from
// the merge holds both sides' decisions, an item both decided keeps the
// earlier decision and the other is reported, and nothing decided on
// either side is pending again.
func TestJournalCLI_GitMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, runs git")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	bin := synapseBinary(t)
	root := t.TempDir()
	a := filepath.Join(root, "a")
	initVault(t, bin, a)
	var ids []string
	for i := 0; i < 24; i++ {
		out := runIn(t, bin, a, "review", "add", "--type", "missing-page", "--title", fmt.Sprintf("Topic %02d", i), "--json")
		var added ops.AddReviewOut
		if err := json.Unmarshal([]byte(out), &added); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, added.Item.ID)
	}
	git(t, a, "init", "-q", "-b", "main")
	git(t, a, "add", "-A")
	git(t, a, "commit", "-q", "-m", "base")
	b := filepath.Join(root, "b")
	git(t, root, "clone", "-q", a, b)
	initVault(t, bin, b) // the clone's own store (.synapse is not in git)
	if got := queueOf(t, bin, b); len(got) != 24 {
		t.Fatalf("the clone's queue has %d items", len(got))
	}

	// a decides 0..7 and 16, b decides 8..15 and then 16 otherwise; b's
	// write links item 0's title again, refreshing it there
	for _, id := range append(append([]string{}, ids[0:8]...), ids[16]) {
		runIn(t, bin, a, "review", "resolve", id, "--action", "skip", "--by", "user")
	}
	time.Sleep(10 * time.Millisecond) // b's decision of 16 is the later one
	for _, id := range append(append([]string{}, ids[8:16]...), ids[16]) {
		runIn(t, bin, b, "review", "resolve", id, "--action", "dismiss", "--by", "agent")
	}
	runIn(t, bin, b, "page", "write", "Linker", "--file", writeTemp(t, "See [[Topic 00]] and [[Topic 99]].\n"))
	git(t, a, "commit", "-qam", "a decides")
	git(t, b, "add", "-A")
	git(t, b, "commit", "-qm", "b decides")
	git(t, a, "pull", "-q", "--no-rebase", "--no-edit", b, "main")
	if st := git(t, a, "status", "--porcelain"); strings.Contains(st, "reviews.jsonl") {
		t.Fatalf("the merge left the journal unmerged:\n%s", st)
	}

	got := map[string]ops.ReviewItem{}
	for _, it := range queueOf(t, bin, a) {
		got[it.ID] = it
	}
	for i, id := range ids {
		want, by := "pending", ""
		switch {
		case i < 8 || i == 16:
			want, by = "skipped", "user"
		case i < 16:
			want, by = "dismissed", "agent"
		}
		if it := got[id]; it.Status != want || it.DecidedBy != by {
			t.Errorf("item %d (%s): %s by %q, want %s by %q", i, it.Title, it.Status, it.DecidedBy, want, by)
		}
	}
	if _, ok := got[ids[0]]; len(got) != 25 || !ok {
		t.Errorf("the merged queue has %d items, want the 24 and b's new missing page", len(got))
	}
	var st ops.StatusOut
	if err := json.Unmarshal([]byte(runIn(t, bin, a, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	p := st.ReviewJournal.Problems
	if p == nil || p.Conflicts != 1 || p.ConflictList[0].ID != ids[16] || p.ConflictList[0].Kept.Status != "skipped" ||
		p.ConflictList[0].Other.Status != "dismissed" || p.BadLines != 0 {
		t.Errorf("status reports %+v", p)
	}
}

// initVault runs synapse init DIR.
func initVault(t *testing.T, bin, dir string) {
	t.Helper()
	if out, err := exec.Command(bin, "init", dir).CombinedOutput(); err != nil {
		t.Fatalf("synapse init: %v\n%s", err, out)
	}
}

// writeTemp writes data to a temporary file and returns its path.
func writeTemp(t *testing.T, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "body.md")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// SIGKILL at random moments of 200 decisions and writes: a decision whose
// command answered is never missing afterwards, in the store nor in a
// queue replayed from the journal alone, and the journal replays without
// a bad line.
func TestJournalCLI_KillDuringDecisions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, runs it 200 times")
	}
	bin, v := synapseBinary(t), emptyVault(t)
	var ids []string
	for i := 0; i < 150; i++ {
		var added ops.AddReviewOut
		out := runIn(t, bin, v.Root, "review", "add", "--type", "confirm", "--title", fmt.Sprintf("Claim %03d", i), "--json")
		if err := json.Unmarshal([]byte(out), &added); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, added.Item.ID)
	}
	// kills land anywhere in a command: the delay is drawn up to
	// what an uninterrupted decision takes on this machine now, times 3
	var took []time.Duration
	for _, id := range ids[len(ids)-3:] {
		start := time.Now()
		runIn(t, bin, v.Root, "review", "resolve", id, "--action", "skip")
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	span := took[1] * 3
	ids = ids[:len(ids)-3]
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	acked := map[string]string{} // id → status its command answered
	killed := 0
	for i := 0; i < 200; i++ {
		var args []string
		want := ""
		id := ids[rng.Intn(len(ids))]
		switch r := rng.Intn(10); {
		case r < 6:
			act := []string{"skip", "dismiss", "resolve"}[rng.Intn(3)]
			want = map[string]string{"skip": "skipped", "dismiss": "dismissed", "resolve": "auto_resolved"}[act]
			args = []string{"review", "resolve", id, "--action", act}
		case r < 8:
			args = []string{"page", "write", fmt.Sprintf("Page %d", i), "--file", writeTemp(t, fmt.Sprintf("Links [[Gap %d]].\n", i))}
		default:
			args = []string{"review", "add", "--type", "suggestion", "--title", fmt.Sprintf("Idea %d", i)}
		}
		cmd := exec.Command(bin, append(args, "--vault", v.Root)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(time.Duration(rng.Int63n(int64(span))), func() { _ = cmd.Process.Kill() })
		err := cmd.Wait()
		timer.Stop()
		switch {
		case err == nil && want != "":
			acked[id] = want // a decided item is never decided again: this is its status for good
		case err != nil && cmd.ProcessState.ExitCode() != -1 && !strings.Contains(out.String(), "already"):
			t.Fatalf("synapse %s failed without a kill: %v\n%s", strings.Join(args, " "), err, out.String())
		case err != nil && cmd.ProcessState.ExitCode() == -1:
			killed++
		}
	}
	t.Logf("%d of 200 commands killed (delays up to %v), %d decisions acknowledged", killed, span, len(acked))
	if killed == 0 || killed == 200 {
		t.Fatalf("%d of 200 commands killed: the kills did not land within the commands", killed)
	}
	check := func(when string) {
		got := map[string]string{}
		for _, it := range queueOf(t, bin, v.Root) {
			got[it.ID] = it.Status
		}
		for id, want := range acked {
			if got[id] != want {
				t.Errorf("%s: %s was acknowledged %s, is %q", when, id, want, got[id])
			}
		}
		var st ops.StatusOut
		if err := json.Unmarshal([]byte(runIn(t, bin, v.Root, "status", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		if p := st.ReviewJournal.Problems; p != nil && (p.BadLines > 0 || p.Conflicts > 0) {
			t.Errorf("%s: the journal replays with problems %+v", when, p)
		}
	}
	check("after the kills")
	if err := os.Remove(v.Abs(vault.DBFile)); err != nil {
		t.Fatal(err)
	}
	check("replayed from the journal alone")
}
