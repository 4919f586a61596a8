package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

// recentT is recent through the operation's row (its default limit).
func recentT(t *testing.T, e *Env, in *RecentIn) *RecentOut {
	t.Helper()
	p := obj{}
	if in.Since != "" {
		p["since"] = in.Since
	}
	if in.Limit != 0 {
		p["limit"] = in.Limit
	}
	return mustCall[RecentOut](t, e, opRecent, p)
}

// actions lists recent items as "kind:action:title", newest first.
func actions(out *RecentOut) string {
	var s []string
	for _, it := range out.Items {
		s = append(s, it.Kind+":"+it.Action+":"+it.Title)
	}
	return strings.Join(s, " ")
}

func TestRecent_WritesRestoresEditsAndDecisions(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	w := write(t, e, &WritePageIn{Title: "Egret", Content: "# Egret\n"})
	write(t, e, &WritePageIn{Title: "Egret", Content: "# Egret\n\nWhite.\n"})
	it := add(t, e, "suggestion", "Split Egret")
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "dismiss"})
	if _, err := restore(t, e, "Egret", 1, ""); err != nil {
		t.Fatal(err)
	}
	// an edit outside synapse, seen by a scan
	testvault.Write(t, v, w.Path, readFile(t, v, w.Path)+"\nBy hand.\n")
	edited := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC) // after every reading of the test clock
	if err := os.Chtimes(v.Abs(w.Path), edited, edited); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Index.Scan(context.Background(), index.ScanOptions{Paths: []string{w.Path}}); err != nil {
		t.Fatal(err)
	}
	got := actions(recentT(t, e, &RecentIn{}))
	want := "page:edited:Egret page:restored:Egret review:dismissed:Split Egret review:filed:Split Egret page:updated:Egret page:created:Egret"
	if got != want {
		t.Fatalf("recent:\n%s\nwant\n%s", got, want)
	}
	out := recentT(t, e, &RecentIn{Limit: 2})
	if len(out.Items) != 2 || !out.More || out.Items[1].Rev != 3 || out.Items[1].From != 1 {
		t.Fatalf("limit 2: %+v", out)
	}
}

func TestRecent_Since(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	e.Now = func() time.Time { return clock }
	write(t, e, &WritePageIn{Title: "Gannet", Content: "# Gannet\n"})
	clock = clock.Add(48 * time.Hour)
	write(t, e, &WritePageIn{Title: "Grebe", Content: "# Grebe\n"})
	clock = clock.Add(time.Hour)
	for _, tc := range []struct {
		since, want string
	}{
		{"", "page:created:Grebe page:created:Gannet"},
		{"2h", "page:created:Grebe"},
		{"3d", "page:created:Grebe page:created:Gannet"},
		{"2026-03-02", "page:created:Grebe"},
		{"2026-03-01T08:00:00Z", "page:created:Grebe page:created:Gannet"},
	} {
		out := recentT(t, e, &RecentIn{Since: tc.since})
		if got := actions(out); got != tc.want {
			t.Errorf("since %q: %s, want %s", tc.since, got, tc.want)
		}
	}
	for _, bad := range []string{"yesterday", "5y", "-2h"} {
		if _, err := recent(context.Background(), e, &RecentIn{Since: bad, Limit: 5}); errs.CodeOf(err) != errs.Invalid {
			t.Errorf("since %q: %v, want invalid", bad, err)
		}
	}
}

func TestRecent_FitsInSixteenKB(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	long := strings.Repeat("Long Title Words ", 11)
	for i := 0; i < 120; i++ {
		write(t, e, &WritePageIn{Title: fmt.Sprintf("%s%d", long, i), Content: "body\n"})
	}
	out := recentT(t, e, &RecentIn{Limit: 500})
	b, _ := json.Marshal(out)
	if len(b) > MaxRecentBytes || !out.More || len(out.Items) < 20 {
		t.Fatalf("%d bytes, %d items, more=%v", len(b), len(out.Items), out.More)
	}
	if !strings.HasSuffix(out.Items[0].Title, "119") {
		t.Fatalf("newest first: %q", out.Items[0].Title)
	}
}

// Decisions in recent are those of the review journal: one another copy
// of the vault made (its journal brought here, as a git pull does) shows
// at once, with who made it.
func TestRecent_DecisionsFromTheJournal(t *testing.T) {
	here, there := testvault.New(t), testvault.New(t)
	e := newTestEnv(t, here)
	a := add(t, e, TypeSuggestion, "Split Egret")
	b := add(t, e, TypeConfirm, "Check the Egret dates")
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": a.ID, "action": "dismiss", "decided_by": "agent"})
	copyJournal(t, here, there)
	other := newTestEnv(t, there)
	other.Now = func() time.Time { return time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC) } // a day later
	mustCall[ResolveReviewOut](t, other, opResolveReview, obj{"id": b.ID, "action": "skip", "decided_by": "user"})
	copyJournal(t, there, here)

	out := recentT(t, e, &RecentIn{})
	if got := actions(out); got != "review:skipped:Check the Egret dates review:dismissed:Split Egret review:filed:Split Egret, Check the Egret dates" {
		t.Fatalf("recent: %s", got)
	}
	if out.Items[0].DecidedBy != OriginUser || out.Items[1].DecidedBy != OriginAgent || out.Items[0].ID != b.ID {
		t.Errorf("deciders: %+v", out.Items)
	}
}

// copyJournal copies the review journal of one vault over another's.
func copyJournal(t *testing.T, from, to *vault.Vault) {
	t.Helper()
	data, err := os.ReadFile(from.Abs(vault.ReviewJournal))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to.Abs(vault.ReviewJournal), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRecent_HandMadePagesAndMoves: the version synapse first saw of a
// page it never wrote is no edit made now; a move's link rewrites show as
// part of the move, not as edits or writes of their own.
func TestRecent_HandMadePagesAndMoves(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/lagoon.md", "---\ntitle: Lagoon\n---\nA lagoon.\n")
	testvault.Write(t, v, "wiki/robin.md", "---\ntitle: Robin\n---\nA bird.\n")
	testvault.Write(t, v, "wiki/boron.md", "---\ntitle: Boron\n---\nSee [[robin]].\n")
	e := newTestEnv(t, v)
	write(t, e, &WritePageIn{Title: "Lagoon", Content: "A blue lagoon.\n"})
	move(t, e, &MovePageIn{Title: "Robin", To: "Robin Sparrow"})
	out := recentT(t, e, &RecentIn{})
	if got, want := actions(out), "page:links rewritten:Boron page:moved:Robin Sparrow page:updated:Lagoon"; got != want {
		t.Fatalf("recent: %s\nwant: %s", got, want)
	}
	if it := out.Items[0]; it.MoveOf != "Robin Sparrow" || it.Path != "wiki/boron.md" {
		t.Fatalf("the rewritten page's entry: %+v", it)
	}
	if it := out.Items[1]; it.Path != "wiki/robin-sparrow.md" || it.MovedFrom != "wiki/robin.md" || it.ID != getPageOut(t, e, "Robin Sparrow").ID {
		t.Fatalf("the moved page's entry: %+v", it)
	}
	if out.Note != "" {
		t.Fatalf("a note beside a history: %q", out.Note)
	}
}

// TestRecent_NothingWrittenYet: on a vault synapse has not written, the
// empty answer says why.
func TestRecent_NothingWrittenYet(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/a.md", "A.\n")
	testvault.Write(t, v, "wiki/b.md", "B.\n")
	e := newTestEnv(t, v)
	out := recentT(t, e, &RecentIn{Since: "30d"})
	if len(out.Items) != 0 || !strings.Contains(out.Note, "starts at synapse's first write") || !strings.Contains(out.Note, "the 2 pages") {
		t.Fatalf("recent on a vault never written: %+v", out)
	}
}

// Items added to the queue show as filed: those one command added
// together as one entry with their count and who filed them.
func TestRecent_Filed(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	write(t, e, &WritePageIn{Title: "Heron", Content: "See [[Egret Nest]], [[Bittern]], [[Stork]] and [[Ibis]].\n"})
	out := recentT(t, e, &RecentIn{})
	if got := actions(out); got != "review:filed:Egret Nest, Bittern, Stork and 1 more page:created:Heron" {
		t.Fatalf("recent: %s", got)
	}
	f := out.Items[0]
	if f.Count != 4 || f.Origin != OriginRule || f.Type != TypeMissingPage || f.ID != "" {
		t.Fatalf("filed entry: %+v", f)
	}
	// one item alone is named by its id
	it := add(t, e, TypeSuggestion, "Merge Heron and Egret")
	out = recentT(t, e, &RecentIn{})
	if f := out.Items[0]; f.Action != "filed" || f.Count != 1 || f.ID != it.ID || f.Title != "Merge Heron and Egret" {
		t.Fatalf("one filed item: %+v", f)
	}
}

// TestRecent_NoGapPastFirstVersions: an edit of a page synapse never
// wrote records the version it replaced as well (passed over by recent);
// a limit still gives that many entries, newest first, with no older
// entry (a review filed before) shown in place of newer page writes.
func TestRecent_NoGapPastFirstVersions(t *testing.T) {
	v := testvault.New(t)
	for i := range 5 {
		testvault.Write(t, v, fmt.Sprintf("wiki/hand-%d.md", i), fmt.Sprintf("# Hand %d\n", i))
	}
	e := newTestEnv(t, v)
	add(t, e, "suggestion", "Earlier proposal")
	write(t, e, &WritePageIn{Title: "Created", Content: "New.\n"})
	for i := range 5 {
		write(t, e, &WritePageIn{Title: fmt.Sprintf("hand-%d", i), Append: true, Content: "More.\n"})
	}
	got := recentT(t, e, &RecentIn{Limit: 6})
	want := "page:updated:hand-4 page:updated:hand-3 page:updated:hand-2 page:updated:hand-1 page:updated:hand-0 page:created:Created"
	if a := actions(got); a != want || !got.More {
		t.Errorf("recent --limit 6: %s (more %v), want %s", a, got.More, want)
	}
	if a := actions(recentT(t, e, &RecentIn{Limit: 7})); !strings.HasSuffix(a, "page:created:Created review:filed:Earlier proposal") {
		t.Errorf("recent --limit 7: %s", a)
	}
}
