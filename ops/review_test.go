package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// newTestEnv opens a read-write env on v with a clock that ticks one
// second per reading.
func newTestEnv(t testing.TB, v *vault.Vault) *Env {
	t.Helper()
	e, err := OpenEnv(context.Background(), v, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	e.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	return e
}

// call runs an operation through the same entry point as every adapter.
func call[Out any](t testing.TB, e *Env, op *Op, params any) (*Out, error) {
	t.Helper()
	raw, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	out, err := op.Call(context.Background(), e, raw)
	if err != nil {
		return nil, err
	}
	return out.(*Out), nil
}

func mustCall[Out any](t testing.TB, e *Env, op *Op, params any) *Out {
	t.Helper()
	out, err := call[Out](t, e, op, params)
	if err != nil {
		t.Fatalf("%s %v: %v", op.Name, params, err)
	}
	return out
}

type obj = map[string]any

func add(t testing.TB, e *Env, typ, title string, more ...any) ReviewItem {
	t.Helper()
	p := obj{"type": typ, "title": title}
	for i := 0; i+1 < len(more); i += 2 {
		p[more[i].(string)] = more[i+1]
	}
	return mustCall[AddReviewOut](t, e, opAddReview, p).Item
}

// item reads an item straight from the store.
func item(t testing.TB, e *Env, id string) ReviewItem {
	t.Helper()
	var it ReviewItem
	err := e.Store.View(func(tx *store.Tx) error {
		r, err := findReview(tx, id)
		if err == nil {
			it = itemOf(r)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func wantCode(t testing.TB, err error, code errs.Code, contains ...string) {
	t.Helper()
	if errs.CodeOf(err) != code {
		t.Fatalf("error %v (code %q), want code %q", err, errs.CodeOf(err), code)
	}
	for _, c := range contains {
		if !strings.Contains(errs.Message(err), c) {
			t.Errorf("error %q does not mention %q", errs.Message(err), c)
		}
	}
}

func TestProposedTitleAndKey(t *testing.T) {
	for in, want := range map[string]string{
		"Example":                     "Example",
		"Missing page: Example":       "Example",
		"missing PAGE:   [[Example]]": "Example",
		"Create: Missing: Foo  Bar":   "Foo Bar",
		"[[ Café au lait ]]":          "Café au lait",
		"Orphan page: X":              "Orphan page: X", // not a proposal prefix: lint keeps kinds apart
		"Missing page:":               "Missing page:",
		"Ratio: 3:4":                  "Ratio: 3:4",
	} {
		if got := ProposedTitle(in); got != want {
			t.Errorf("ProposedTitle(%q) = %q, want %q", in, got, want)
		}
	}
	same := [][2]string{{"Example", "Missing page: example"}, {"EXAMPLE", " [[example]] "}, {"a  b", "a b"}}
	for _, s := range same {
		if ReviewKey(TypeMissingPage, s[0]) != ReviewKey(TypeMissingPage, s[1]) {
			t.Errorf("%q and %q have different keys", s[0], s[1])
		}
	}
	if ReviewKey(TypeMissingPage, "Example") == ReviewKey(TypeSuggestion, "Example") {
		t.Error("the type is not part of the key")
	}
}

func FuzzProposedTitle(f *testing.F) {
	for _, s := range []string{"Missing page: [[X]]", "[[[[a]]]]", "todo: stub: page:", " a\tb "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := ProposedTitle(s)
		if ProposedTitle(p) != p {
			t.Fatalf("not idempotent: %q → %q → %q", s, p, ProposedTitle(p))
		}
		if ReviewKey("x", s) != ReviewKey("x", p) {
			t.Fatalf("key of %q differs from key of its proposed title %q", s, p)
		}
	})
}

func TestReview_ActionsFromPending(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	t.Setenv(ResearchCmdEnv, `printf 'researched %s' "$(cat | tr -d '\n' | head -c 40)"`)
	cases := []struct {
		typ, action, status, resolution string
	}{
		{TypeSuggestion, "skip", StatusSkipped, "skipped"},
		{TypeSuggestion, "dismiss", StatusDismissed, "dismissed"},
		{TypeConfirm, "resolve", StatusAutoResolved, "marked resolved"},
		{TypeConfirm, "mark-resolved", StatusAutoResolved, "marked resolved"},
		{TypeContradiction, "deep-research", StatusDeepResearched, `researched {"id":`},
		{TypePurposeSuggestion, "create", StatusCreated, "appended to purpose.md"},
		{TypeSchemaSuggestion, "create", StatusCreated, "appended to schema.md"},
		{TypeSuggestion, " SKIP ", StatusSkipped, "skipped"},
	}
	for i, c := range cases {
		t.Run(c.typ+"/"+c.action, func(t *testing.T) {
			it := add(t, e, c.typ, fmt.Sprintf("proposal %d", i), "rationale", "because")
			out := mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": c.action})
			if out.Status != c.status || !strings.HasPrefix(out.Resolution, c.resolution) || out.ReviewedAt == nil {
				t.Errorf("result %+v, want status %s, resolution %q…", out.ReviewItem, c.status, c.resolution)
			}
			if got := item(t, e, it.ID); !reflect.DeepEqual(got, out.ReviewItem) {
				t.Errorf("stored %+v, returned %+v", got, out.ReviewItem)
			}
		})
	}
	purpose, _ := os.ReadFile(e.Vault.Abs(vault.PurposeFile))
	if !strings.Contains(string(purpose), "\n## proposal 5\n\nbecause\n") {
		t.Errorf("purpose.md lacks the appended suggestion:\n%s", purpose)
	}
	schema, _ := os.ReadFile(e.Vault.Abs(vault.SchemaFile))
	if !strings.Contains(string(schema), "\n## proposal 6\n\nbecause\n") {
		t.Errorf("schema.md lacks the appended suggestion:\n%s", schema)
	}
}

// Every action on an item in every terminal status is a conflict naming
// the status, and nothing changes: not the item, not the files, and no
// research command runs.
func TestReview_TerminalNeverChanges(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	marker := filepath.Join(t.TempDir(), "ran")
	t.Setenv(ResearchCmdEnv, "cat >/dev/null; echo found")
	// one item per terminal status
	terminal := map[string]string{} // status → id
	for st, how := range map[string]struct{ typ, action string }{
		StatusSkipped: {TypeSuggestion, "skip"}, StatusDismissed: {TypeSuggestion, "dismiss"},
		StatusAutoResolved: {TypeConfirm, "resolve"}, StatusDeepResearched: {TypeConfirm, "deep-research"},
		StatusCreated: {TypePurposeSuggestion, "create"},
	} {
		it := add(t, e, how.typ, "decided "+st)
		mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": how.action})
		terminal[st] = it.ID
	}
	t.Setenv(ResearchCmdEnv, "touch "+marker)
	purpose, _ := os.ReadFile(e.Vault.Abs(vault.PurposeFile))
	for st, id := range terminal {
		before := item(t, e, id)
		if before.Status != st {
			t.Fatalf("setup: %s is %s, want %s", id, before.Status, st)
		}
		for _, a := range ReviewActions {
			_, err := call[ResolveReviewOut](t, e, opResolveReview, obj{"id": id, "action": a})
			wantCode(t, err, errs.Conflict, "already "+st)
		}
		for _, s := range ReviewStatuses[1:] {
			_, err := call[ResolveReviewOut](t, e, opPatchReview, obj{"id": id, "status": s})
			wantCode(t, err, errs.Conflict, "already "+st)
		}
		for _, a := range bulkActions {
			b := mustCall[BulkResolveOut](t, e, opBulkResolve, obj{"ids": []string{id}, "action": a})
			if b.Count != 0 || len(b.AlreadyTerminal) != 1 || b.AlreadyTerminal[0] != (TerminalRef{id, st}) {
				t.Errorf("bulk %s on %s item: %+v", a, st, b)
			}
		}
		// producers leave it alone too
		a := mustCall[AddReviewOut](t, e, opAddReview, obj{"type": before.Type, "title": before.Title, "rationale": "again"})
		if a.Outcome != EnqueueAlreadyTerminal || a.Item.ID != id {
			t.Errorf("re-proposing a %s item: %+v", st, a)
		}
		if after := item(t, e, id); !reflect.DeepEqual(after, before) {
			t.Errorf("%s item changed:\n before %+v\n after  %+v", st, before, after)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the research command ran for a decided item")
	}
	if now, _ := os.ReadFile(e.Vault.Abs(vault.PurposeFile)); string(now) != string(purpose) {
		t.Error("purpose.md changed")
	}
}

func TestReview_EnqueueRefreshesPending(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	first := add(t, e, TypeMissingPage, "Example", "rationale", "one", "page", "wiki/a.md",
		"referenced_pages", []string{"A"}, "search_queries", []string{"q1"})
	other := add(t, e, TypeMissingPage, "Other")
	out := mustCall[AddReviewOut](t, e, opAddReview, obj{"type": "missing-page", "title": "Missing page: [[example]]",
		"rationale": "two", "referenced_pages": []string{"B", "A"}, "search_queries": []string{"q2", "q3", "q4"}, "origin": "user"})
	if out.Outcome != EnqueueRefreshed || out.Item.ID != first.ID {
		t.Fatalf("second proposal: %+v", out)
	}
	got := item(t, e, first.ID)
	want := first
	want.Title, want.Rationale = "Missing page: [[example]]", "two"
	want.ReferencedPages, want.SearchQueries = []string{"B", "A"}, []string{"q2", "q3", "q4"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("refreshed item\n got %+v\nwant %+v", got, want)
	}
	// id, origin, creation time and queue position stay
	l := mustCall[ListReviewsOut](t, e, opListReviews, obj{})
	if l.Total != 2 || l.Items[0].ID != first.ID || l.Items[1].ID != other.ID {
		t.Errorf("queue after refresh: %+v", l)
	}
	// a proposal that provides nothing new keeps the rest
	mustCall[AddReviewOut](t, e, opAddReview, obj{"type": "missing-page", "title": "Missing page: [[example]]"})
	if again := item(t, e, first.ID); !reflect.DeepEqual(again, want) {
		t.Errorf("empty fields erased data: %+v", again)
	}
}

func TestReview_UnknownInputs(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	it := add(t, e, TypeSuggestion, "x")
	_, err := call[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "approve"})
	wantCode(t, err, errs.Invalid, `"approve"`, "skip, dismiss, resolve, mark-resolved, create, deep-research")
	_, err = call[ResolveReviewOut](t, e, opResolveReview, obj{"id": "nope99", "action": "skip"})
	wantCode(t, err, errs.NotFound, "nope99")
	_, err = call[ListReviewsOut](t, e, opListReviews, obj{"status": "done"})
	wantCode(t, err, errs.Invalid, `"done"`, "pending, created, skipped, dismissed, deep_researched, auto_resolved, open, resolved, all")
	_, err = call[ListReviewsOut](t, e, opListReviews, obj{"type": "idea"})
	wantCode(t, err, errs.Invalid, `"idea"`, "missing-page")
	_, err = call[ListReviewsOut](t, e, opListReviews, obj{"bogus": 1})
	wantCode(t, err, errs.Invalid, "bogus")
	_, err = call[AddReviewOut](t, e, opAddReview, obj{"type": "idea", "title": "x"})
	wantCode(t, err, errs.Invalid, `"idea"`, "purpose-suggestion")
	_, err = call[AddReviewOut](t, e, opAddReview, obj{"type": "confirm", "title": "x", "origin": "rule"})
	wantCode(t, err, errs.Invalid, "user or agent")
	_, err = call[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "skip", "decided_by": "lint"})
	wantCode(t, err, errs.Invalid, `"lint"`, "user or agent")
	_, err = call[AddReviewOut](t, e, opAddReview, obj{"type": "confirm", "title": strings.Repeat("x", 201)})
	wantCode(t, err, errs.Invalid, "200")
	_, err = call[AddReviewOut](t, e, opAddReview, obj{"type": "confirm", "title": "Missing page: [[ ]]"})
	wantCode(t, err, errs.Invalid, "title")
	_, err = call[AddReviewOut](t, e, opAddReview, obj{"type": "confirm", "title": "a\x07b"})
	wantCode(t, err, errs.Invalid, "control")
	_, err = call[AddReviewOut](t, e, opAddReview, obj{"type": "confirm", "title": "big", "rationale": strings.Repeat("x", MaxReviewRationale+1)})
	wantCode(t, err, errs.TooLarge, "rationale")
	_, err = call[ResolveReviewOut](t, e, opPatchReview, obj{"id": it.ID, "status": "pending"})
	wantCode(t, err, errs.Invalid, "not a decision")
	_, err = call[ResolveReviewOut](t, e, opPatchReview, obj{"id": it.ID, "status": "skipped", "action": "skip"})
	wantCode(t, err, errs.Invalid, "not both")
	_, err = call[ResolveReviewOut](t, e, opPatchReview, obj{"id": it.ID})
	wantCode(t, err, errs.Invalid, "action")
	_, err = call[BulkResolveOut](t, e, opBulkResolve, obj{"ids": []string{it.ID}, "action": "create"})
	wantCode(t, err, errs.Invalid, "one item at a time")
	_, err = call[BulkResolveOut](t, e, opBulkResolve, obj{"ids": []string{" "}, "action": "skip"})
	wantCode(t, err, errs.Invalid, "no review ids")
	if got := item(t, e, it.ID); got.Status != StatusPending {
		t.Errorf("item changed by refused requests: %+v", got)
	}
	// lists are clamped, not refused
	a := mustCall[AddReviewOut](t, e, opAddReview, obj{"type": "confirm", "title": "many",
		"referenced_pages": []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}, "search_queries": []string{"a", "b", "c", "d"}})
	if len(a.Item.ReferencedPages) != MaxReferencedPages || len(a.Item.SearchQueries) != MaxSearchQueries {
		t.Errorf("lists not clamped: %+v", a.Item)
	}
}

func TestReview_PatchByStatus(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	for _, c := range []struct{ field, value, status string }{
		{"status", "skipped", StatusSkipped}, {"status", "DISMISSED", StatusDismissed},
		{"status", "auto_resolved", StatusAutoResolved}, {"action", "mark-resolved", StatusAutoResolved},
	} {
		it := add(t, e, TypeSuggestion, "patch "+c.value+c.field)
		out := mustCall[ResolveReviewOut](t, e, opPatchReview, obj{"id": it.ID, c.field: c.value})
		if out.Status != c.status {
			t.Errorf("PATCH %s=%s: status %s, want %s", c.field, c.value, out.Status, c.status)
		}
	}
}

func TestReview_BulkCap(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	ids := fillQueue(t, e, 0, MaxBulkIDs)
	for _, op := range []*Op{opBulkResolve, opBulk} {
		_, err := op.Call(context.Background(), e, mustJSON(t, obj{"ids": append(ids, "extra1"), "action": "skip"}))
		wantCode(t, err, errs.TooLarge, "201", "200", "nothing was changed")
		if l := mustCall[ListReviewsOut](t, e, opListReviews, obj{}); l.Total != MaxBulkIDs {
			t.Fatalf("%s: %d pending after a refused bulk request, want %d", op.Name, l.Total, MaxBulkIDs)
		}
	}
	if s := opBulkResolve.HTTPStatus(errs.E(errs.TooLarge, "x")); s != 422 {
		t.Errorf("bulk-resolve too_large → HTTP %d, want 422", s)
	}
	if s := opBulk.HTTPStatus(errs.E(errs.TooLarge, "x")); s != 400 {
		t.Errorf("UI bulk too_large → HTTP %d, want 400", s)
	}
	if s := opBulkResolve.HTTPStatus(errs.E(errs.NotFound, "x")); s != 404 {
		t.Errorf("other codes keep their status: %d", s)
	}
	b := mustCall[BulkResolveOut](t, e, opBulkResolve, obj{"ids": ids, "action": "skip"})
	if b.Count != MaxBulkIDs || len(b.Resolved) != MaxBulkIDs {
		t.Errorf("200 ids: %d resolved", b.Count)
	}
}

func mustJSON(t testing.TB, v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestReview_BulkMixed(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	p1 := add(t, e, TypeSuggestion, "p1")
	p2 := add(t, e, TypeSuggestion, "p2")
	d := add(t, e, TypeSuggestion, "d")
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": d.ID, "action": "dismiss"})
	untouched := add(t, e, TypeSuggestion, "untouched")
	ids := []string{p1.ID, "zzzzzz", d.ID, strings.ToUpper(p2.ID), p1.ID, "", "#" + p2.ID}
	b := mustCall[BulkResolveOut](t, e, opBulkResolve, obj{"ids": ids, "action": "mark-resolved"})
	want := &BulkResolveOut{Count: 2, Status: StatusAutoResolved, Resolved: []string{p1.ID, p2.ID},
		AlreadyTerminal: []TerminalRef{{d.ID, StatusDismissed}}, NotFound: []string{"zzzzzz"}}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("bulk result\n got %+v\nwant %+v", b, want)
	}
	for id, st := range map[string]string{p1.ID: StatusAutoResolved, p2.ID: StatusAutoResolved, d.ID: StatusDismissed, untouched.ID: StatusPending} {
		if got := item(t, e, id).Status; got != st {
			t.Errorf("%s is %s, want %s", id, got, st)
		}
	}
	p3 := add(t, e, TypeSuggestion, "p3")
	u := mustCall[BulkOut](t, e, opBulk, obj{"ids": []string{p3.ID, d.ID, "nothere"}, "action": "skip"})
	if *u != (BulkOut{Updated: 1, SkippedTerminal: 1, NotFound: 1}) {
		t.Errorf("UI bulk: %+v", u)
	}
}

func TestReview_ListOrderFiltersAndPaging(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	var ids []string
	for i := 0; i < 8; i++ {
		typ := TypeSuggestion
		if i%2 == 1 {
			typ = TypeMissingPage
		}
		ids = append(ids, add(t, e, typ, fmt.Sprint("item ", i)).ID)
	}
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": ids[2], "action": "skip"})
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": ids[3], "action": "dismiss"})
	idsOf := func(l *ListReviewsOut) []string {
		var out []string
		for _, it := range l.Items {
			out = append(out, it.ID)
		}
		return out
	}
	for _, c := range []struct {
		params obj
		total  int
		want   []string
	}{
		{obj{}, 6, []string{ids[0], ids[1], ids[4], ids[5], ids[6], ids[7]}},
		{obj{"status": "open"}, 6, []string{ids[0], ids[1], ids[4], ids[5], ids[6], ids[7]}},
		{obj{"status": "Resolved"}, 2, []string{ids[2], ids[3]}},
		{obj{"status": "skipped"}, 1, []string{ids[2]}},
		{obj{"status": "all", "offset": 2, "limit": 3}, 8, ids[2:5]},
		{obj{"status": "all", "type": "missing-page"}, 4, []string{ids[1], ids[3], ids[5], ids[7]}},
		{obj{"type": "missing-page", "limit": 2, "offset": 1}, 3, []string{ids[5], ids[7]}},
		{obj{"status": "all", "offset": 50}, 8, nil},
		{obj{"limit": -5}, 6, []string{ids[0]}}, // clamped to 1
	} {
		l := mustCall[ListReviewsOut](t, e, opListReviews, c.params)
		if l.Total != c.total || !slices.Equal(idsOf(l), c.want) {
			t.Errorf("list %v: total %d %v, want %d %v", c.params, l.Total, idsOf(l), c.total, c.want)
		}
		if l.Items == nil {
			t.Errorf("list %v: items is null, want []", c.params)
		}
	}
	fillQueue(t, e, 0, 120)
	if l := mustCall[ListReviewsOut](t, e, opListReviews, obj{"limit": 1000}); len(l.Items) != 100 || l.Total != 126 {
		t.Errorf("limit 1000: %d items of %d, want 100 of 126", len(l.Items), l.Total)
	}
	if l := mustCall[ListReviewsOut](t, e, opListReviews, obj{}); len(l.Items) != 20 {
		t.Errorf("default limit: %d items, want 20", len(l.Items))
	}
}

func TestReview_StatusCountsAndReindex(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	a := add(t, e, TypeSuggestion, "a")
	add(t, e, TypeSuggestion, "b")
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": a.ID, "action": "dismiss"})
	if _, err := opReindex.Call(context.Background(), e, nil); err != nil {
		t.Fatal(err)
	}
	s := mustCall[StatusOut](t, e, opStatus, obj{})
	want := map[string]int{"pending": 1, "dismissed": 1, "created": 0, "skipped": 0, "deep_researched": 0, "auto_resolved": 0}
	if !reflect.DeepEqual(s.Reviews, want) {
		t.Errorf("status reviews %v, want %v", s.Reviews, want)
	}
	if got := item(t, e, a.ID); got.Status != StatusDismissed || got.Title != "a" {
		t.Errorf("item after reindex: %+v", got)
	}
}

func TestReview_PageWrittenHook(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	if e.pageWritten == nil {
		t.Fatal("the review queue is not wired to write_page")
	}
	alpha := add(t, e, TypeMissingPage, "Missing page: alpha")
	alias := add(t, e, TypeMissingPage, "A-one")
	decided := add(t, e, TypeMissingPage, "Alpha Two")
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": decided.ID, "action": "dismiss"})
	busy := add(t, e, TypeMissingPage, "Alpha Three")
	other := add(t, e, TypeSuggestion, "Alpha") // not a missing-page item
	if err := e.Store.Update(func(tx *store.Tx) error {
		r, _ := tx.ReviewByID(busy.ID)
		return claim(tx, r, e.now().Add(time.Hour), e.now())
	}); err != nil {
		t.Fatal(err)
	}
	page := &store.PageRec{Title: "Alpha", Path: "wiki/concepts/alpha.md"}
	written := func(dangling ...string) {
		t.Helper()
		var links []string
		for _, d := range dangling {
			links = append(links, "[["+d+"]]")
		}
		mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Alpha", "content": "Links " + strings.Join(links, ", ") + ".\n",
			"frontmatter": obj{"aliases": []string{"a-one", "alpha two", "Alpha Three"}}})
	}
	written("Beta", "Gamma", strings.Repeat("long ", 50))
	for id, st := range map[string]string{alpha.ID: StatusAutoResolved, alias.ID: StatusAutoResolved,
		decided.ID: StatusDismissed, busy.ID: StatusPending, other.ID: StatusPending} {
		if got := item(t, e, id); got.Status != st {
			t.Errorf("%s (%s) is %s, want %s", id, got.Title, got.Status, st)
		}
	}
	if r := item(t, e, alpha.ID).Resolution; r != "page written: wiki/concepts/alpha.md (it answers [[alpha]] by its title)" {
		t.Errorf("resolution %q", r)
	}
	l := mustCall[ListReviewsOut](t, e, opListReviews, obj{"type": "missing-page"})
	var titles []string
	for _, it := range l.Items {
		titles = append(titles, it.Title)
		if it.Title == "Beta" && (it.Origin != OriginRule || it.Page != page.Path || !slices.Equal(it.ReferencedPages, []string{"Alpha"})) {
			t.Errorf("dangling item %+v", it)
		}
	}
	if !slices.Equal(titles, []string{"Alpha Three", "Beta", "Gamma"}) {
		t.Errorf("pending missing pages %v", titles)
	}
	written("Beta", "Gamma") // the same page written again: nothing piles up
	if l2 := mustCall[ListReviewsOut](t, e, opListReviews, obj{"status": "all"}); l2.Total != 7 {
		t.Errorf("queue grew to %d on a repeated write", l2.Total)
	}
}

func TestReview_DeepResearch(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	it := add(t, e, TypeConfirm, "Check the date", "search_queries", []string{"when"})
	t.Setenv(ResearchCmdEnv, "")
	_, err := call[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "deep-research"})
	wantCode(t, err, errs.Unavailable, ResearchCmdEnv)

	t.Setenv(ResearchCmdEnv, "echo partial; echo 'no network' >&2; exit 3")
	_, err = call[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "deep-research"})
	wantCode(t, err, errs.Unavailable, "exit status 3", "no network", "stays pending")

	t.Setenv(ResearchTimeoutEnv, "300ms")
	t.Setenv(ResearchCmdEnv, "sleep 20 | cat")
	_, err = call[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "deep-research"})
	wantCode(t, err, errs.Unavailable, "timed out")
	t.Setenv(ResearchTimeoutEnv, "soon")
	_, err = call[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "deep-research"})
	wantCode(t, err, errs.Invalid, ResearchTimeoutEnv)
	t.Setenv(ResearchTimeoutEnv, "")
	if got := item(t, e, it.ID); !reflect.DeepEqual(got, it) {
		t.Fatalf("failed research changed the item: %+v", got)
	}

	// the item arrives as JSON on stdin, with the vault and id in the environment
	t.Setenv(ResearchCmdEnv, `cat > in.json; echo "$SYNAPSE_REVIEW_ID $(pwd)"; head -c 70000 /dev/zero | tr '\0' x`)
	out := mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "deep-research"})
	if out.Status != StatusDeepResearched || !strings.HasPrefix(out.Resolution, it.ID+" "+e.Vault.Root+"\n") ||
		!strings.HasSuffix(out.Resolution, "[output truncated at 64 KiB]") || len(out.Resolution) > MaxResearchOutput+100 {
		t.Errorf("research result: status %s, resolution %.80q… (%d bytes)", out.Status, out.Resolution, len(out.Resolution))
	}
	var got ReviewItem
	data, err := os.ReadFile(e.Vault.Abs("in.json"))
	if err != nil || json.Unmarshal(data, &got) != nil || !reflect.DeepEqual(got, it) {
		t.Errorf("stdin of the research command: %s (%v)", data, err)
	}
}

// create never overwrites: a page that already answers to the title is a
// conflict, and the item stays pending with its claim released.
func TestReview_CreateRefusesExistingPage(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/concepts/example.md", "---\naliases: [Sample]\n---\nAn example.\n")
	e := newTestEnv(t, v)
	it := add(t, e, TypeMissingPage, "Missing page: sample")
	_, err := call[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "create"})
	wantCode(t, err, errs.Conflict, "already exists", "wiki/concepts/example.md", "--action resolve")
	if got := item(t, e, it.ID); !reflect.DeepEqual(got, it) {
		t.Errorf("item changed: %+v", got)
	}
	var claim int64
	_ = e.Store.View(func(tx *store.Tx) error { r, _ := tx.ReviewByID(it.ID); claim = r.ClaimNS; return nil })
	if claim != 0 {
		t.Error("the claim was not released")
	}
	// the item can still be decided
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "resolve"})
}

// create writes a stub page through write_page that page get reads, and
// the write's own hook does not steal the item from create. Needs the
// write-path branch.
func TestReview_CreateWritesStubPage(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	it := add(t, e, TypeMissingPage, "Missing page: Café au lait", "rationale", "Linked from [[Coffee]].")
	out := mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "create"})
	if out.Status != StatusCreated || len(out.Pages) != 1 || out.Resolution != "created "+out.Pages[0].Path {
		t.Fatalf("create: %+v", out)
	}
	p := mustCall[GetPageOut](t, e, opGetPage, obj{"title": "café au lait"})
	if p.Path != out.Pages[0].Path || p.Title != "Café au lait" || !strings.Contains(p.Content, "# Café au lait") ||
		!strings.Contains(p.Content, "Linked from [[Coffee]].") {
		t.Errorf("stub page %s %q:\n%s", p.Path, p.Title, p.Content)
	}
	if tags := p.Frontmatter.List("tags", true); !slices.Contains(tags, "stub") {
		t.Errorf("stub page tags %v", tags)
	}
	if got := item(t, e, it.ID); got.Status != StatusCreated {
		t.Errorf("item is %s after create, want created", got.Status)
	}
	// the stub's dangling link was filed by write_page's producer
	l := mustCall[ListReviewsOut](t, e, opListReviews, obj{"type": "missing-page"})
	if l.Total != 1 || l.Items[0].Title != "Coffee" || l.Items[0].Origin != OriginRule {
		t.Errorf("missing pages after create: %+v", l.Items)
	}
	_, err := call[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "create"})
	wantCode(t, err, errs.Conflict, "already created")
}

// TestReview_CreateStubSaysWhatLinksToIt: the stub lists the pages that
// link to it as wikilinks, carries the rationale and search queries as the
// item's context, never links to itself, and its "linked from" is true
// once it exists.
func TestReview_CreateStubSaysWhatLinksToIt(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/coffee.md", "---\ntitle: Coffee\n---\nSee [[Cold brew]] and [[cold brew#Ratio]].\n")
	testvault.Write(t, v, "wiki/drinks/iced.md", "---\ntitle: Iced drinks\nrelated: \"[[Cold Brew]]\"\n---\nno body link\n")
	testvault.Write(t, v, "wiki/tea.md", "---\ntitle: Tea\n---\n[[Coffee]]\n")
	e := newTestEnv(t, v)
	it := add(t, e, TypeMissingPage, "Missing page: Cold brew",
		"rationale", "[[Coffee]] links to [[Cold brew]], which matches no page. See also [[cold brew|the drink]].",
		"search_queries", []string{"cold brew ratio", "cold brew concentrate"},
		"referenced_pages", []string{"Tea", "Coffee", "No such page"})
	out := mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": it.ID, "action": "create"})
	p := mustCall[GetPageOut](t, e, opGetPage, obj{"title": "Cold brew"})
	want := "# Cold brew\n\nLinked from:\n\n- [[Coffee]]\n- [[Iced drinks]]\n\n## Context\n\n" +
		"From review item " + it.ID + " (missing-page, proposed 2026-03-01):\n\n" +
		"[[Coffee]] links to Cold brew, which matches no page. See also the drink.\n\n" +
		"Related: [[Tea]]\n\nSearch queries:\n\n- cold brew ratio\n- cold brew concentrate\n"
	if p.Content != want {
		t.Errorf("stub %s:\n%s\nwant:\n%s", out.Pages[0].Path, p.Content, want)
	}
	for _, l := range p.Links {
		if l.Target == "Cold brew" || strings.EqualFold(l.Target, "cold brew") {
			t.Errorf("the stub links to itself: %+v", l)
		}
	}
	if tags := p.Frontmatter.List("tags", true); !slices.Contains(tags, "stub") {
		t.Errorf("tags %v", tags)
	}
	// what it says is true now that it exists
	bl := mustCall[BacklinksOut](t, e, opBacklinks, obj{"title": "Cold brew"})
	var from []string
	for _, b := range bl.Backlinks {
		from = append(from, b.Title)
	}
	if strings.Join(from, ",") != "Coffee,Iced drinks" {
		t.Errorf("backlinks of the stub %v", from)
	}
}

// The producer's rationale stays true once the page exists.
func TestReview_RuleRationaleStaysTrue(t *testing.T) {
	e := newTestEnv(t, testvault.New(t))
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Coffee", "content": "See [[Cold brew]].\n"})
	l := mustCall[ListReviewsOut](t, e, opListReviews, obj{"type": "missing-page"})
	if l.Total != 1 || strings.Contains(l.Items[0].Rationale, "[[Cold brew]]") || strings.Contains(l.Items[0].Rationale, "matches no page") {
		t.Errorf("rule item %+v", l.Items)
	}
}

// Paged lists say where the next part starts while more remain.
func TestLists_NextOffset(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	for _, title := range []string{"Split Egret", "Merge Heron", "Check Ibis"} {
		add(t, e, TypeSuggestion, title)
		write(t, e, &WritePageIn{Title: title, Content: "body\n"})
	}
	r := mustCall[ListReviewsOut](t, e, opListReviews, obj{"limit": 2})
	if r.Total != 3 || len(r.Items) != 2 || r.NextOffset != 2 {
		t.Fatalf("review list: total %d, %d items, next_offset %d", r.Total, len(r.Items), r.NextOffset)
	}
	if r = mustCall[ListReviewsOut](t, e, opListReviews, obj{"limit": 2, "offset": 2}); len(r.Items) != 1 || r.NextOffset != 0 {
		t.Fatalf("last part: %d items, next_offset %d", len(r.Items), r.NextOffset)
	}
	// more than one part: the types to narrow to; one part, or a type
	// asked for: none
	add(t, e, TypeContradiction, "Egret or heron")
	r = mustCall[ListReviewsOut](t, e, opListReviews, obj{"limit": 2})
	if len(r.Types) != 2 || r.Types[0] != (ReviewTypeCount{TypeSuggestion, 3}) || r.Types[1] != (ReviewTypeCount{TypeContradiction, 1}) {
		t.Fatalf("types: %+v", r.Types)
	}
	if r = mustCall[ListReviewsOut](t, e, opListReviews, obj{"limit": 2, "type": TypeSuggestion}); r.Types != nil {
		t.Fatalf("types with a type asked for: %+v", r.Types)
	}
	if r = mustCall[ListReviewsOut](t, e, opListReviews, obj{}); r.Types != nil {
		t.Fatalf("types of one part: %+v", r.Types)
	}
	p := mustCall[ListPagesOut](t, e, opListPages, obj{"limit": 1, "offset": 1})
	if p.Total != 3 || p.NextOffset != 2 {
		t.Fatalf("page list: total %d, next_offset %d", p.Total, p.NextOffset)
	}
}
