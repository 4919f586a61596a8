package ops

import (
	"os"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

// TestReview_Note: a decision's note is kept on the item, written in the
// journal (so a replay from the journal alone keeps it, and a compaction
// too), in the log entry and in recent; a resolve by hand is logged and
// listed as resolved by its decider, while its status stays
// auto_resolved. A note of several lines is refused.
func TestReview_Note(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	a := add(t, e, TypeConfirm, "Check the date")
	b := add(t, e, TypeConfirm, "Check the name")
	c := add(t, e, TypeConfirm, "Check the place")
	r := mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": a.ID, "action": "resolve", "note": " the source says 1862 "})
	if r.Status != StatusAutoResolved || r.DecidedBy != OriginAgent || r.Note != "the source says 1862" {
		t.Fatalf("resolved: %+v", r.ReviewItem)
	}
	mustCall[BulkResolveOut](t, e, opBulkResolve, obj{"ids": []string{b.ID, c.ID}, "action": "skip", "decided_by": "user", "note": "after the trip"})
	log := readFile(t, v, vault.LogPage)
	for _, want := range []string{
		"] review resolved by agent | Check the date\n- item: " + a.ID + " (confirm)\n- resolution: marked resolved\n- note: the source says 1862\n",
		"] review skipped | 2 items\n- items: Check the name (" + b.ID + "), Check the place (" + c.ID + ")\n- note: after the trip\n",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "review auto_resolved") {
		t.Errorf("a resolve by hand logged as automatic:\n%s", log)
	}
	rec := recentT(t, e, &RecentIn{})
	notes := map[string]string{}
	for _, it := range rec.Items {
		notes[it.Action+":"+it.Title] = it.Note
	}
	if notes["resolved:Check the date"] != "the source says 1862" || notes["skipped:Check the name"] != "after the trip" {
		t.Fatalf("recent: %+v", rec.Items)
	}
	journal, err := os.ReadFile(v.Abs(vault.ReviewJournal))
	must(t, err)
	if !strings.Contains(string(journal), `"note":"the source says 1862"`) {
		t.Fatalf("the journal lacks the note:\n%s", journal)
	}
	// the store rebuilt from the journal, then the journal compacted
	want := allItems(t, e)
	for _, step := range []string{"replay", "compact"} {
		if step == "compact" {
			mustCall[CompactReviewsOut](t, e, opCompactReviews, obj{})
		}
		e.Close()
		must(t, os.Remove(v.Abs(vault.DBFile)))
		e = newTestEnv(t, v)
		if it := item(t, e, a.ID); it.Note != "the source says 1862" || it.DecidedBy != OriginAgent {
			t.Fatalf("after %s: %+v", step, it)
		}
		if got := allItems(t, e); len(got) != len(want) || got[1].Note != "after the trip" {
			t.Fatalf("after %s: %+v", step, got)
		}
	}
	d := add(t, e, TypeConfirm, "Check the spelling")
	_, err = call[ResolveReviewOut](t, e, opResolveReview, obj{"id": d.ID, "action": "dismiss", "note": "one\ntwo"})
	wantCode(t, err, errs.Invalid, "note is one line")
	_, err = call[BulkResolveOut](t, e, opBulkResolve, obj{"ids": []string{d.ID}, "action": "dismiss", "note": strings.Repeat("x", 501)})
	wantCode(t, err, errs.Invalid, "the limit is 500")
	if it := item(t, e, d.ID); it.Status != StatusPending {
		t.Fatalf("a refused note decided the item: %+v", it)
	}
}

// An older journal line (a decision without a note) reads as it did.
func TestReview_NoteOldLines(t *testing.T) {
	evs, err := decodeLine([]byte(`{"v":1,"t":"2026-01-02T03:04:05Z","ev":"decided","id":"abc123","key":"00000000000000ff","type":"confirm","title":"T","by":"user","status":"skipped","resolution":"skipped"}`))
	if err != nil || len(evs) != 1 || evs[0].Note != "" || evs[0].Status != StatusSkipped {
		t.Fatalf("%+v, %v", evs, err)
	}
	evs, err = decodeLine([]byte(`{"v":1,"t":"2026-01-02T03:04:05Z","ev":"item","id":"abc123","key":"00000000000000ff","type":"confirm","title":"T","by":"agent","decisions":[{"t":"2026-01-03T00:00:00Z","status":"dismissed","by":"user","note":"why"}]}`))
	if err != nil || len(evs) != 2 || evs[1].Note != "why" {
		t.Fatalf("%+v, %v", evs, err)
	}
}

// recent carries the writer's --log note of a page write and a move.
func TestRecent_WriterNotes(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	write(t, e, &WritePageIn{Title: "Egret", Content: "# Egret\n", Log: "first draft"})
	write(t, e, &WritePageIn{Title: "Egret", Content: "# Egret\n\nWhite.\n"})
	move(t, e, &MovePageIn{Title: "Egret", To: "Great egret", Log: "the proper name"})
	var got []string
	for _, it := range recentT(t, e, &RecentIn{}).Items {
		got = append(got, it.Action+"="+it.Note)
	}
	if want := "moved=the proper name updated= created=first draft"; strings.Join(got, " ") != want {
		t.Fatalf("recent: %q, want %q", strings.Join(got, " "), want)
	}
}
