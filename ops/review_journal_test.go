package ops

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// journalLines reads the vault's journal as its events, one slice per
// line.
func journalLines(t testing.TB, e *Env) [][]*revEvent {
	t.Helper()
	data, err := os.ReadFile(e.Vault.Abs(vault.ReviewJournal))
	if err != nil {
		t.Fatal(err)
	}
	p := parseLines(data)
	if p.probs.BadLines > 0 {
		t.Fatalf("the journal has bad lines %v:\n%s", p.probs.BadLineNumbers, data)
	}
	return p.byLine
}

// kinds lists each line's kind, with its by.
func kinds(lines [][]*revEvent) []string {
	var out []string
	for _, evs := range lines {
		out = append(out, evs[0].Kind+":"+evs[0].By)
	}
	return out
}

// allItems lists the whole queue, oldest first, as every surface shows it.
func allItems(t testing.TB, e *Env) []ReviewItem {
	t.Helper()
	var out []ReviewItem
	for off := 0; ; off += 100 {
		l := mustCall[ListReviewsOut](t, e, opListReviews, obj{"status": "all", "limit": 100, "offset": off})
		out = append(out, l.Items...)
		if len(out) >= l.Total {
			return out
		}
	}
}

// Every change to the queue is a line of the journal, with who made it;
// a proposal that changes nothing is none.
func TestJournal_EveryChangeIsALine(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	a := add(t, e, TypeSuggestion, "Merge A and B", "rationale", "they overlap")
	add(t, e, TypeSuggestion, "Merge A and B", "rationale", "they overlap") // the same: no change
	add(t, e, TypeSuggestion, "Merge A and B", "origin", "user", "rationale", "a person says so")
	b := add(t, e, TypeConfirm, "Check the date")
	c := add(t, e, TypeConfirm, "Check the place")
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": a.ID, "action": "dismiss", "decided_by": "user"})
	mustCall[BulkResolveOut](t, e, opBulkResolve, obj{"ids": []string{b.ID, c.ID}, "action": "skip"})
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Coffee", "content": "See [[Cold brew]].\n"})
	stub := mustCall[ListReviewsOut](t, e, opListReviews, obj{"type": "missing-page"}).Items[0]
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": stub.ID, "action": "create"})
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Tea", "content": "See [[Matcha]].\n"})
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Matcha", "content": "Green.\n"})

	got := kinds(journalLines(t, e))
	want := []string{"filed:agent", "refreshed:user", "filed:agent", "filed:agent", "decided:user",
		"decided:agent", "decided:agent", "filed:rule", "claimed:", "decided:agent", "filed:rule", "decided:rule"}
	if !slices.Equal(got, want) {
		t.Errorf("journal kinds\n got %v\nwant %v", got, want)
	}
	// the store holds what the journal says, item by item
	items := allItems(t, e)
	if items[0].Rationale != "a person says so" || items[0].DecidedBy != "user" || items[0].Status != StatusDismissed {
		t.Errorf("first item %+v", items[0])
	}
}

// The queue rebuilt from the journal alone, after the store is deleted,
// is the same item by item: ids, order, statuses, resolutions, deciders
// and times. The open of the new store replays it; so does reindex.
func TestJournal_ReplayAfterStoreDeleted(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	t.Setenv(ResearchCmdEnv, "echo found it")
	for i := 0; i < 60; i++ {
		typ := ReviewTypes[i%len(ReviewTypes)]
		if typ == TypePurposeSuggestion || typ == TypeSchemaSuggestion {
			typ = TypeSuggestion
		}
		it := add(t, e, typ, fmt.Sprintf("Create page: Item %d", i), "rationale", fmt.Sprint("because ", i))
		action := []string{"", "skip", "dismiss", "resolve", "deep-research", "create", ""}[i%7]
		if action == "create" && typ != TypeMissingPage && typ != TypeSuggestion {
			action = "resolve"
		}
		if action != "" {
			mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": action, "decided_by": []string{"user", "agent"}[i%2]})
		}
	}
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Linker", "content": "[[Item 1]] [[Later]] [[Item 0]]\n"})
	want := allItems(t, e)
	statuses := map[string]bool{}
	for _, it := range want {
		statuses[it.Status] = true
	}
	if len(statuses) != len(ReviewStatuses) {
		t.Fatalf("the queue has statuses %v, want every one", statuses)
	}
	for _, how := range []string{"open", "reindex"} {
		e.Close()
		if err := os.Remove(v.Abs(vault.DBFile)); err != nil {
			t.Fatal(err)
		}
		e = newTestEnv(t, v)
		if how == "reindex" {
			out := mustCall[ReindexOut](t, e, opReindex, obj{})
			if out.Reviews == nil || out.Reviews.Items != len(want) || !out.Reviews.Problems.empty() {
				t.Errorf("reindex replay %+v", out.Reviews)
			}
		}
		if got := allItems(t, e); !reflect.DeepEqual(got, want) {
			t.Errorf("after %s the queue differs:\n got %+v\nwant %+v", how, got, want)
		}
	}
	// new events come after the journal's: the clock moved past them
	last := allItems(t, e)
	b := add(t, e, TypeConfirm, "After the replay")
	if b.CreatedAt < last[len(last)-1].CreatedAt {
		t.Errorf("an item added after the replay is older than the journal's: %s", b.CreatedAt)
	}
}

// ---- merge rules, on lines ----

const (
	tMin = int64(time.Minute)
	evT0 = int64(1_800_000_000) * int64(time.Second)
)

func proposal(key uint64, at int64, by, rationale string) *revEvent {
	return &revEvent{Kind: evFiled, T: evT0 + at*tMin, Key: key, Type: TypeSuggestion, Title: fmt.Sprint("Item ", key),
		Rationale: rationale, By: by, ID: fmt.Sprintf("id%04d", key)}
}

func decision(key uint64, at int64, status, by string) *revEvent {
	return &revEvent{Kind: evDecided, T: evT0 + at*tMin, Key: key, Type: TypeSuggestion, Title: fmt.Sprint("Item ", key),
		Status: status, Resolution: status, By: by}
}

func linesOf(t testing.TB, evs ...*revEvent) [][]byte {
	t.Helper()
	var out [][]byte
	for _, ev := range evs {
		b, err := encodeEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// fold parses and folds lines.
func fold(lines [][]byte) (*folded, *JournalProblems) {
	p := parseLines(bytes.Join(lines, nil))
	f := foldEvents(p.events)
	f.report(p.probs)
	return f, p.probs
}

func TestJournal_MergeRules(t *testing.T) {
	base := linesOf(t,
		proposal(1, 0, OriginAgent, "agent says"),
		proposal(2, 1, OriginRule, ""),
		proposal(3, 2, OriginLint, "lint says"),
	)
	for _, c := range []struct {
		name      string
		more      [][]byte
		key       uint64
		status    string
		rationale string
		conflicts int
	}{
		{"a later refresh by lint keeps an agent's rationale", linesOf(t, proposal(1, 5, OriginLint, "lint says")), 1, StatusPending, "agent says", 0},
		{"a person's refresh replaces an agent's", linesOf(t, proposal(1, 5, OriginUser, "person says")), 1, StatusPending, "person says", 0},
		{"an agent never replaces a person's", linesOf(t, proposal(1, 5, OriginUser, "person says"), proposal(1, 6, OriginAgent, "agent again")), 1, StatusPending, "person says", 0},
		{"lint fills what rule left empty", linesOf(t, proposal(2, 5, OriginLint, "lint fills")), 2, StatusPending, "lint fills", 0},
		{"lint replaces lint", linesOf(t, proposal(3, 5, OriginLint, "lint again")), 3, StatusPending, "lint again", 0},
		{"a decision stands against a later refresh", linesOf(t, decision(3, 4, StatusSkipped, OriginUser), proposal(3, 5, OriginUser, "too late")), 3, StatusSkipped, "lint says", 0},
		{"a refresh before the decision counts", linesOf(t, decision(3, 6, StatusSkipped, OriginUser), proposal(3, 5, OriginUser, "in time")), 3, StatusSkipped, "in time", 0},
		{"of two decisions the earlier stands", linesOf(t, decision(1, 9, StatusDismissed, OriginUser), decision(1, 7, StatusSkipped, OriginAgent)), 1, StatusSkipped, "agent says", 1},
		{"the same decision twice is no conflict", linesOf(t, decision(1, 9, StatusSkipped, OriginUser), decision(1, 7, StatusSkipped, OriginAgent)), 1, StatusSkipped, "agent says", 0},
		{"a decision for an item never filed makes it", linesOf(t, decision(9, 3, StatusDismissed, OriginUser)), 9, StatusDismissed, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines := append(append([][]byte{}, base...), c.more...)
			f, probs := fold(lines)
			r := f.byKey[c.key]
			if r == nil || r.Status != c.status || r.Rationale != c.rationale {
				t.Fatalf("item %d: %+v", c.key, r)
			}
			if probs.Conflicts != c.conflicts || len(probs.ConflictList) != c.conflicts {
				t.Errorf("conflicts %+v, want %d", probs, c.conflicts)
			}
			if c.conflicts > 0 {
				cf := probs.ConflictList[0]
				if cf.Kept.Status != StatusSkipped || cf.Other.Status != StatusDismissed || cf.Other.DecidedBy != OriginUser || cf.Other.Line != 4 {
					t.Errorf("conflict %+v", cf)
				}
			}
			// any order, any repeats: the same queue
			rng := rand.New(rand.NewSource(int64(len(c.name))))
			for i := 0; i < 20; i++ {
				mixed := append(append([][]byte{}, lines...), lines[rng.Intn(len(lines))], lines[rng.Intn(len(lines))])
				rng.Shuffle(len(mixed), func(i, j int) { mixed[i], mixed[j] = mixed[j], mixed[i] })
				g, p := fold(mixed)
				if !sameItems(g.items, f.items) || p.Conflicts != probs.Conflicts {
					t.Fatalf("shuffled with repeats, the queue differs:\n%s", bytes.Join(mixed, nil))
				}
			}
		})
	}
}

// sameItems compares two folds item by item (queue order, ids, state).
func sameItems(a, b []*store.ReviewRec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := *a[i], *b[i]
		x.Seq, y.Seq = 0, 0
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// Lines that are not journal lines are skipped and reported by number;
// the others still count.
func TestJournal_BadLinesSkipped(t *testing.T) {
	good := linesOf(t, proposal(1, 0, OriginAgent, "one"), proposal(2, 1, OriginAgent, "two"), decision(2, 2, StatusSkipped, OriginUser))
	newer := bytes.Replace(good[0], []byte(`"v":1`), []byte(`"v":2`), 1)
	badKey := bytes.Replace(good[1], []byte(`"key":"`), []byte(`"key":"zz`), 1)
	badStatus := bytes.Replace(good[2], []byte(`"skipped"`), []byte(`"pending"`), 1)
	journal := bytes.Join([][]byte{good[0], []byte("<<<<<<< HEAD\n"), good[1], []byte("{not json\n"), newer,
		[]byte("\n"), badKey, badStatus, good[2], []byte(`{"v":1,"ev":"filed"`)}, nil)
	v := testvault.New(t)
	if err := os.WriteFile(v.Abs(vault.ReviewJournal), journal, 0o644); err != nil {
		t.Fatal(err)
	}
	e := newTestEnv(t, v)
	items := allItems(t, e)
	if len(items) != 2 || items[1].Status != StatusSkipped {
		t.Fatalf("queue %+v", items)
	}
	st := mustCall[StatusOut](t, e, opStatus, obj{})
	p := st.ReviewJournal.Problems
	if p == nil || p.BadLines != 6 || !slices.Equal(p.BadLineNumbers, []int{2, 4, 5, 7, 8, 10}) || !st.ReviewJournal.InStep || st.ReviewJournal.Lines != 10 {
		t.Errorf("journal status %+v, problems %+v", st.ReviewJournal, p)
	}
}

// An append that a crash cut short leaves an unfinished last line after
// what the store knew: the next command cuts it off, never reports it as
// a bad line, and the journal goes on.
func TestJournal_TornLastLine(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	a := add(t, e, TypeConfirm, "One")
	before, _ := os.ReadFile(v.Abs(vault.ReviewJournal))
	half := linesOf(t, decision(keyOf(t, e, a.ID), 1, StatusSkipped, OriginUser))[0]
	for _, via := range []string{"a replay", "an append"} {
		f, err := os.OpenFile(v.Abs(vault.ReviewJournal), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(half[:len(half)/2])
		f.Close()
		if via == "a replay" {
			if got := allItems(t, e); len(got) != 1 || got[0].Status != StatusPending {
				t.Errorf("after the torn line: %+v", got)
			}
			st := mustCall[StatusOut](t, e, opStatus, obj{})
			if p := st.ReviewJournal.Problems; p == nil || p.BadLines != 0 || p.TornBytes != int64(len(half)/2) {
				t.Errorf("problems %+v", p)
			}
		} else {
			// the append itself (no replay first) cuts the torn line
			err := e.Store.Update(func(tx *store.Tx) error {
				r, _ := tx.ReviewByID(a.ID)
				return decide(tx, r, StatusDismissed, "dismissed", OriginUser, e.now())
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		after, _ := os.ReadFile(v.Abs(vault.ReviewJournal))
		if !bytes.HasPrefix(after, before) || via == "a replay" && len(after) != len(before) {
			t.Errorf("after %s the journal is\n%s", via, after)
		}
	}
	if got := kinds(journalLines(t, e)); !slices.Equal(got, []string{"filed:agent", "decided:user"}) {
		t.Errorf("journal %v", got)
	}
	st := mustCall[StatusOut](t, e, opStatus, obj{})
	if !st.ReviewJournal.InStep {
		t.Errorf("journal status %+v", st.ReviewJournal)
	}
}

// keyOf is the key of an item, read from the store.
func keyOf(t testing.TB, e *Env, id string) uint64 {
	t.Helper()
	var k uint64
	err := e.Store.View(func(tx *store.Tx) error {
		r, err := findReview(tx, id)
		if err == nil {
			k = r.Key
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A store kept by an older synapse holds a queue no journal recorded: the
// first open writes it to the journal (merged with what the journal
// holds already, from another machine, or in a journal it creates) and
// nothing is lost; who decided each item is inferred from its
// resolution.
func TestJournal_UpgradeWritesTheStoreQueue(t *testing.T) {
	for _, c := range []struct {
		name    string
		journal []byte // nil: the vault has none
		note    string
		lines   int
	}{
		// the journal knows one item of its own, one of the store's as
		// it is (W, pending) and one pending that the store holds
		// decided (Z)
		{"beside another machine's journal", bytes.Join(linesOf(t, proposal(1, 0, OriginAgent, "from the other machine"),
			&revEvent{Kind: evFiled, T: evT0 + 2, Key: 14, Type: TypeConfirm, Title: "W", By: OriginUser},
			&revEvent{Kind: evFiled, T: evT0 + 1, Key: 13, Type: TypeSuggestion, Title: "Z", By: OriginAgent}), nil),
			"3 review items the store held were written to reviews.jsonl", 6},
		{"without a journal", nil, "4 review items the store held were written to reviews.jsonl", 4},
	} {
		t.Run(c.name, func(t *testing.T) { upgrade(t, c.journal, c.note, c.lines) })
	}
}

func upgrade(t *testing.T, journal []byte, note string, lines int) {
	v := testvault.New(t)
	os.Remove(v.Abs(vault.ReviewJournal))
	if journal != nil {
		if err := os.WriteFile(v.Abs(vault.ReviewJournal), journal, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// what an older synapse stored: no journal, no deciders
	old := []*store.ReviewRec{
		{Key: 11, Type: TypeMissingPage, Status: StatusAutoResolved, Resolution: "page written: wiki/x.md", Title: "X", Origin: OriginRule, CreatedNS: evT0, ReviewedNS: evT0 + 5},
		{Key: 12, Type: TypeMissingPage, Status: StatusAutoResolved, Resolution: "page exists: wiki/y.md", Title: "Y", Origin: OriginLint, CreatedNS: evT0, ReviewedNS: evT0 + 6},
		{Key: 13, Type: TypeSuggestion, Status: StatusSkipped, Resolution: "skipped", Title: "Z", Rationale: "r", Origin: OriginAgent, CreatedNS: evT0 + 1, ReviewedNS: evT0 + 7},
		{Key: 14, Type: TypeConfirm, Status: StatusPending, Title: "W", Origin: OriginUser, CreatedNS: evT0 + 2, Referenced: []string{"A"}},
	}
	if err := s.Update(func(tx *store.Tx) error {
		for _, r := range old {
			r.TitleBy, r.RationaleBy, r.PageBy, r.SourceBy = r.Origin, r.Origin, r.Origin, r.Origin
			if err := tx.PutReview(r); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var notes []string
	e, err := OpenEnv(t.Context(), v, OpenOptions{Notify: func(m string) { notes = append(notes, m) }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	byTitle := map[string]ReviewItem{}
	for _, it := range allItems(t, e) {
		byTitle[it.Title] = it
	}
	for title, by := range map[string]string{"X": OriginRule, "Y": OriginLint, "Z": OriginUser, "W": ""} {
		if got := byTitle[title]; got.DecidedBy != by {
			t.Errorf("%s: decided_by %q, want %q", title, got.DecidedBy, by)
		}
	}
	for i, r := range old {
		if it := byTitle[r.Title]; it.ID != r.ID || it.Status != r.Status || it.CreatedAt != rfc3339(r.CreatedNS) {
			t.Errorf("item %d after the upgrade: %+v, was %+v", i, it, r)
		}
	}
	if len(notes) != 1 || !strings.Contains(notes[0], note) {
		t.Errorf("notes %q, want %q", notes, note)
	}
	if n := len(journalLines(t, e)); n != lines {
		t.Errorf("the journal has %d lines, want %d", n, lines)
	}
	// the next open finds them in step: nothing more is written
	data, _ := os.ReadFile(v.Abs(vault.ReviewJournal))
	e.Close()
	e = newTestEnv(t, v)
	if again, _ := os.ReadFile(v.Abs(vault.ReviewJournal)); !bytes.Equal(again, data) {
		t.Error("a second open wrote to the journal again")
	}
}

// A journal that went missing is written again from the store's queue,
// by the next command or by the next change.
func TestJournal_MissingJournalWrittenAgain(t *testing.T) {
	for _, next := range []string{"list", "change"} {
		t.Run(next, func(t *testing.T) {
			v := testvault.New(t)
			e := newTestEnv(t, v)
			a := add(t, e, TypeConfirm, "One")
			mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": a.ID, "action": "skip"})
			add(t, e, TypeConfirm, "Two")
			want := allItems(t, e)
			if err := os.Remove(v.Abs(vault.ReviewJournal)); err != nil {
				t.Fatal(err)
			}
			if next == "change" {
				// straight to the store, as write_page's producer does:
				// the append finds no journal
				err := e.Store.Update(func(tx *store.Tx) error {
					_, _, err := enqueue(tx, &Proposal{Type: TypeConfirm, Title: "Three", Origin: OriginAgent}, e.now())
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			// the next open writes it again (list) or finds it written
			// (change); then the queue comes from the journal alone
			e.Close()
			e = newTestEnv(t, v)
			e.Close()
			if err := os.Remove(v.Abs(vault.DBFile)); err != nil {
				t.Fatal(err)
			}
			e = newTestEnv(t, v)
			got := allItems(t, e)
			if next == "change" {
				want = append(want, got[len(got)-1])
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("queue\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// Lines another machine wrote (a git pull, a sync tool) are replayed by
// the next command: its decisions count, and an item both decided keeps
// the earlier decision, the other reported by status.
func TestJournal_ForeignLinesReplayed(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	a := add(t, e, TypeConfirm, "One")
	b := add(t, e, TypeConfirm, "Two")
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": b.ID, "action": "dismiss"})
	bDecided := item(t, e, b.ID)
	// the other machine skipped both, One after and Two before this one
	// (with a clock an hour behind: before Two was filed here)
	ka, kb := keyOf(t, e, a.ID), keyOf(t, e, b.ID)
	reviewed, _ := time.Parse(time.RFC3339, *bDecided.ReviewedAt)
	theirs := linesOf(t,
		&revEvent{Kind: evDecided, T: reviewed.UnixNano() + int64(time.Hour), Key: ka, Type: TypeConfirm, Title: "One", Status: StatusSkipped, Resolution: "skipped", By: OriginUser},
		&revEvent{Kind: evDecided, T: reviewed.UnixNano() - int64(time.Hour), Key: kb, Type: TypeConfirm, Title: "Two", Status: StatusSkipped, Resolution: "skipped", By: OriginUser})
	f, err := os.OpenFile(v.Abs(vault.ReviewJournal), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bytes.Join(theirs, nil))
	f.Close()
	for id, want := range map[string]string{a.ID: StatusSkipped, b.ID: StatusSkipped} {
		if got := mustCall[ListReviewsOut](t, e, opListReviews, obj{"status": "all"}); !slices.ContainsFunc(got.Items, func(it ReviewItem) bool { return it.ID == id && it.Status == want }) {
			t.Errorf("%s is not %s: %+v", id, want, got.Items)
		}
	}
	st := mustCall[StatusOut](t, e, opStatus, obj{})
	p := st.ReviewJournal.Problems
	if p == nil || p.Conflicts != 1 || p.ConflictList[0].ID != b.ID || p.ConflictList[0].Other.Status != StatusDismissed || p.ConflictList[0].Other.Line != 3 {
		t.Errorf("conflicts %+v", p)
	}
	if l := mustCall[LintOut](t, e, opLint, obj{}); !reflect.DeepEqual(l.ReviewJournal, p) {
		t.Errorf("lint reports %+v", l.ReviewJournal)
	}
}

// Commands running at once in one process (a server) append whole lines
// in their commit order: the journal replays to the queue they left.
func TestJournal_ConcurrentWriters(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	e.Now = time.Now
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				out, err := call[AddReviewOut](t, e, opAddReview, obj{"type": TypeConfirm, "title": fmt.Sprintf("W%d item %d", w, i%10), "rationale": fmt.Sprint(i)})
				if err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					if _, err := call[ResolveReviewOut](t, e, opResolveReview, obj{"id": out.Item.ID, "action": "skip"}); err != nil && !strings.Contains(err.Error(), "already") {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	want := allItems(t, e)
	journalLines(t, e) // no bad line
	e.Close()
	os.Remove(v.Abs(vault.DBFile))
	e = newTestEnv(t, v)
	if got := allItems(t, e); !reflect.DeepEqual(got, want) {
		t.Errorf("replayed queue differs:\n got %+v\nwant %+v", got, want)
	}
}
