package ops

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// randomEvents makes n events over a few items, at distinct times from
// `from` minutes on: proposals by every origin, decisions, claims.
func randomEvents(rng *rand.Rand, n int, from int64) []*revEvent {
	var evs []*revEvent
	times := rng.Perm(n * 3)
	pick := func(l ...string) string { return l[rng.Intn(len(l))] }
	for i := 0; i < n; i++ {
		k := uint64(1 + rng.Intn(6))
		at := from + int64(times[i])
		switch r := rng.Intn(10); {
		case r < 7:
			ev := proposal(k, at, pick(Origins...), pick("", "a", "b", "c"))
			ev.Page = pick("", "wiki/p.md", "wiki/q.md")
			ev.Title = pick("Item", "item", "Missing page: Item") + fmt.Sprint(" ", k)
			for j := rng.Intn(4); j > 0; j-- {
				ev.Refs = append(ev.Refs, pick("A", "B", "C", "D", "E", "F", "G", "H", "I", "J"))
			}
			ev.Refs = slices.Compact(ev.Refs)
			evs = append(evs, ev)
		case r < 9:
			evs = append(evs, decision(k, at, pick(ReviewStatuses[1:]...), pick(Origins...)))
		default:
			ev := &revEvent{Kind: evClaimed, T: evT0 + at*tMin, Key: k, Type: TypeSuggestion, Title: fmt.Sprint("Item ", k)}
			if rng.Intn(2) == 0 {
				ev.Until = ev.T + 10*tMin
			}
			evs = append(evs, ev)
		}
	}
	return evs
}

// compacted is the compacted journal of a fold.
func compacted(t testing.TB, f *folded) [][]byte {
	t.Helper()
	var out [][]byte
	for _, r := range f.items {
		line, err := f.line(r, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, line)
	}
	return out
}

// A compacted journal folds to the same queue as the journal it came
// from; so does the union of both (a git merge of a machine that
// compacted with one that did not); and events that come after fold the
// same on top of either.
func TestJournal_CompactionKeepsTheQueue(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewSource(seed))
		full := linesOf(t, randomEvents(rng, 40, 0)...)
		later := linesOf(t, randomEvents(rng, 15, 1000)...)
		f, _ := fold(full)
		c := compacted(t, f)
		if len(c) != len(f.items) {
			t.Fatalf("seed %d: %d lines for %d items", seed, len(c), len(f.items))
		}
		check := func(what string, a, b [][]byte) {
			t.Helper()
			fa, pa := fold(a)
			fb, pb := fold(b)
			if !sameItems(fa.items, fb.items) || pa.Conflicts != pb.Conflicts {
				t.Fatalf("seed %d, %s: the queues differ\n%v\n%v\nconflicts %d %d", seed, what, recs(fa.items), recs(fb.items), pa.Conflicts, pb.Conflicts)
			}
		}
		check("compacted", c, full)
		check("compacted with the original", append(append([][]byte{}, c...), full...), full)
		check("compacted, then more", append(append([][]byte{}, c...), later...), append(append([][]byte{}, full...), later...))
		// a second compaction changes nothing
		g, _ := fold(c)
		if !slices.EqualFunc(compacted(t, g), c, bytes.Equal) {
			t.Fatalf("seed %d: compacting a compacted journal changed it", seed)
		}
	}
}

func recs(rs []*store.ReviewRec) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%+v\n", *r)
	}
	return b.String()
}

// review compact rewrites the journal as one line per item, moves lines
// that do not parse aside, and the queue replayed from it is the same.
func TestJournal_CompactOp(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	var ids []string
	for i := 0; i < 5; i++ {
		for j := 0; j < 4; j++ { // refreshed three times
			ids = append(ids, add(t, e, TypeSuggestion, fmt.Sprint("Item ", i), "rationale", fmt.Sprint("take ", j)).ID)
		}
	}
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": ids[0], "action": "skip"})
	newer := `{"v":2,"t":"2030-01-01T00:00:00Z","ev":"retitled","key":"0000000000000001"}`
	f, _ := os.OpenFile(v.Abs(vault.ReviewJournal), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("not a line\n" + newer + "\n")
	f.Close()
	want := allItems(t, e)
	out := mustCall[CompactReviewsOut](t, e, opCompactReviews, obj{})
	if out.Items != 5 || out.LinesBefore != 23 || out.Lines != 6 || out.Dropped != 1 || !strings.HasPrefix(out.DroppedTo, ".synapse/") {
		t.Errorf("compact %+v", out)
	}
	// a newer synapse's line stays, as it was
	if data, _ := os.ReadFile(v.Abs(vault.ReviewJournal)); !bytes.HasSuffix(data, []byte("\n"+newer+"\n")) {
		t.Errorf("the newer line is not kept:\n%s", data)
	}
	if dropped, err := os.ReadFile(v.Abs(out.DroppedTo)); err != nil || string(dropped) != "not a line\n" {
		t.Errorf("dropped lines %q %v", dropped, err)
	}
	st := mustCall[StatusOut](t, e, opStatus, obj{})
	if j := st.ReviewJournal; !j.InStep || j.Lines != 6 || j.CompactedAt == "" || j.Problems == nil || !slices.Equal(j.Problems.BadLineNumbers, []int{6}) {
		t.Errorf("journal status %+v", j)
	}
	e.Close()
	os.Remove(v.Abs(vault.DBFile))
	e = newTestEnv(t, v)
	if got := allItems(t, e); !reflect.DeepEqual(got, want) {
		t.Errorf("after compaction and a replay:\n got %+v\nwant %+v", got, want)
	}
}

// Past its threshold, the journal is compacted by the next command.
func TestJournal_AutoCompact(t *testing.T) {
	defer func(b int64) { compactBytes = b }(compactBytes)
	compactBytes = 2000
	v := testvault.New(t)
	e := newTestEnv(t, v)
	var notes []string
	e.Index.Notify = func(m string) { notes = append(notes, m) }
	for j := 0; j < 12; j++ {
		add(t, e, TypeSuggestion, "Item", "rationale", fmt.Sprint("take ", j))
		add(t, e, TypeSuggestion, "Other", "rationale", fmt.Sprint("take ", j))
	}
	if n := len(journalLines(t, e)); n >= 24 {
		t.Errorf("the journal has %d lines for 24 changes: no compaction", n)
	}
	if len(notes) == 0 || !strings.Contains(notes[0], "compacted") {
		t.Errorf("notes %q", notes)
	}
}

// review export prints the queue as compacted lines; review import in
// another vault adds what it lacks, leaves what it decided, and adds
// nothing when run twice.
func TestJournal_ExportImport(t *testing.T) {
	src := newTestEnv(t, testvault.New(t))
	a := add(t, src, TypeSuggestion, "Shared", "rationale", "from src")
	b := add(t, src, TypeConfirm, "Only in src")
	mustCall[ResolveReviewOut](t, src, opResolveReview, obj{"id": a.ID, "action": "skip", "decided_by": "user"})
	mustCall[ResolveReviewOut](t, src, opResolveReview, obj{"id": b.ID, "action": "dismiss"})
	add(t, src, TypeConfirm, "Pending in src")
	if ex := mustCall[ExportReviewsOut](t, src, opExportReviews, obj{"status": "resolved"}); ex.Count != 2 {
		t.Errorf("export of the decided items: %d lines", ex.Count)
	}
	ex := mustCall[ExportReviewsOut](t, src, opExportReviews, obj{})
	var jsonl bytes.Buffer
	for _, l := range ex.Lines {
		jsonl.Write(l)
		jsonl.WriteByte('\n')
	}

	dst := newTestEnv(t, testvault.New(t))
	shared := add(t, dst, TypeSuggestion, "shared", "rationale", "from dst")
	mustCall[ResolveReviewOut](t, dst, opResolveReview, obj{"id": shared.ID, "action": "dismiss", "decided_by": "user"})
	out := mustCall[ImportReviewsOut](t, dst, opImportReviews, obj{"journal": jsonl.String()})
	if out.Lines != 3 || out.Appended != 2 || out.Added != 2 || out.KeptDecided != 1 || out.Items != 3 {
		t.Errorf("import %+v", out)
	}
	items := allItems(t, dst)
	got := map[string]ReviewItem{}
	for _, it := range items {
		got[it.Title] = it
	}
	if got["shared"].Status != StatusDismissed || got["Only in src"].Status != StatusDismissed || got["Only in src"].ID != b.ID ||
		got["Pending in src"].Status != StatusPending {
		t.Errorf("queue after the import %+v", items)
	}
	// again, and as export's --json object: nothing new
	again := mustCall[ImportReviewsOut](t, dst, opImportReviews, obj{"journal": string(mustJSON(t, ex))})
	if again.Appended != 0 || again.Duplicates != 1 || again.KeptDecided != 2 {
		t.Errorf("second import %+v", again)
	}
	if n := len(journalLines(t, dst)); n != 4 {
		t.Errorf("the journal has %d lines", n)
	}
}
