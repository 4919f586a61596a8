package desk

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
)

// envCaller runs operations on an open store, one at a time, as the
// server behind the socket does.
type envCaller struct {
	mu    sync.Mutex
	e     *ops.Env
	calls []string
	ins   []string // the inputs, beside calls
}

func (c *envCaller) Call(ctx context.Context, name string, in []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, name)
	c.ins = append(c.ins, string(in))
	if c.e == nil {
		return nil, errs.E(errs.Unavailable, "the store is closed")
	}
	op := ops.Lookup(name)
	if op == nil {
		return nil, errs.E(errs.Unavailable, "no operation %s", name)
	}
	out, err := op.Call(ctx, c.e, in)
	if err != nil {
		return nil, err
	}
	return ops.MarshalJSON(out)
}

// fixture is a vault with pages and review items of four types, and the
// items' ids in queue order.
type fixture struct {
	v   *vault.Vault
	e   *ops.Env
	c   *envCaller
	ids []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/coffee.md", "---\ntitle: Coffee\n---\n# Coffee\n\nA drink. See [[Cold brew]] and [[Espresso]].\n\nThe first café opened in 1998.\n")
	testvault.Write(t, v, "wiki/history.md", "---\ntitle: Coffee history\n---\nIntro.\n\nThe first café opened in 2001, [[Coffee]] says otherwise.\n")
	testvault.Write(t, v, "wiki/drinks/coffee.md", "---\ntitle: Coffee\n---\nA second page on coffee.\n")
	testvault.Write(t, v, "wiki/tea.md", "---\ntitle: Tea\n---\nTea, and [[Cold brew]] tea.\n")
	e, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	e.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	f := &fixture{v: v, e: e, c: &envCaller{e: e}}
	t.Cleanup(func() {
		// commands of a desk that quit may still be running
		f.c.mu.Lock()
		defer f.c.mu.Unlock()
		f.c.e = nil
		e.Close()
	})
	for _, it := range []map[string]any{
		{"type": "missing-page", "title": "Cold brew", "rationale": "Two pages link to it."},
		{"type": "contradiction", "title": "When the first café opened", "page": "wiki/coffee.md",
			"referenced_pages": []string{"Coffee history"}, "rationale": "Coffee says 1998, Coffee history says 2001."},
		{"type": "duplicate", "title": "Coffee", "page": "wiki/coffee.md", "referenced_pages": []string{"wiki/drinks/coffee.md"}},
		{"type": "suggestion", "title": "Orphan page: Tea", "page": "wiki/tea.md", "origin": "user"},
		{"type": "missing-page", "title": "Espresso", "rationale": "Coffee links to it."},
		{"type": "suggestion", "title": "Create page: Latte", "rationale": "Readers ask."},
	} {
		f.ids = append(f.ids, f.add(t, it).ID)
	}
	return f
}

func (f *fixture) add(t *testing.T, in map[string]any) ops.ReviewItem {
	t.Helper()
	out, err := call[ops.AddReviewOut](context.Background(), f.c, "review.add", in)
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// decide decides an item as the CLI would.
func (f *fixture) decide(t *testing.T, id, action string) {
	t.Helper()
	if _, err := call[ops.ResolveReviewOut](context.Background(), f.c, "review.resolve", map[string]string{"id": id, "action": action}); err != nil {
		t.Fatal(err)
	}
}

// status is an item's status in the store.
func (f *fixture) status(t *testing.T, id string) string {
	t.Helper()
	return f.item(t, id).Status
}

// item is an item as the store holds it.
func (f *fixture) item(t *testing.T, id string) ops.ReviewItem {
	t.Helper()
	out, err := call[ops.ShowReviewOut](context.Background(), f.c, "review.show", map[string]string{"id": id})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

func (f *fixture) model(o Options) *Model {
	o.Caller, o.Plain, o.Output = f.c, true, io.Discard
	return New(context.Background(), o)
}

// screen is a desk under test: the teatest program and the last frame
// its model drew (read while the program runs, so behind a lock).
type screen struct {
	*teatest.TestModel
	mu    sync.Mutex
	frame string
}

// probe wraps the model to keep the frame after each update.
type probe struct {
	m *Model
	s *screen
}

func (p probe) Init() tea.Cmd { return p.m.Init() }

func (p probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := p.m.Update(msg)
	frame := p.m.View()
	p.s.mu.Lock()
	p.s.frame = frame
	p.s.mu.Unlock()
	return p, cmd
}

func (p probe) View() string { return p.m.View() }

// start runs the desk at w×h and waits for the first item's context.
func (f *fixture) start(t *testing.T, w, h int, o Options) *screen {
	t.Helper()
	s := &screen{}
	s.TestModel = teatest.NewTestModel(t, probe{m: f.model(o), s: s}, teatest.WithInitialTermSize(w, h))
	waitFor(t, s, "Linked from (2)")
	return s
}

// waitFor waits until the screen shows text.
func waitFor(t *testing.T, s *screen, text string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		frame := s.frame
		s.mu.Unlock()
		if strings.Contains(frame, text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen does not show %q after 5s:\n%s", text, frame)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// keys sends each key in turn: single characters, or names (enter, esc,
// space, up, down).
func keys(tm *screen, ks ...string) {
	for _, k := range ks {
		switch k {
		case "enter":
			tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
		case "esc":
			tm.Send(tea.KeyMsg{Type: tea.KeyEsc})
		case "space":
			tm.Send(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
		case "tab":
			tm.Send(tea.KeyMsg{Type: tea.KeyTab})
		case "down":
			tm.Send(tea.KeyMsg{Type: tea.KeyDown})
		default:
			tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)})
		}
	}
}

// final quits and returns the last model.
func final(t *testing.T, tm *screen) *Model {
	t.Helper()
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	return tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(probe).m
}

// Golden frames of each view at the smallest supported size and a larger
// one, without colour.
func TestDesk_Frames(t *testing.T) {
	views := []struct {
		name  string
		prep  func(t *testing.T, f *fixture)
		steps []string // keys to send and, after "=", texts to wait for
	}{
		{name: "queue"},
		{name: "contradiction", steps: []string{"j", "=2001, [[Coffee]]", "enter", "=tab next page"}},
		{name: "page", steps: []string{"enter", "=tab next page", "enter", "=Backlinks", "=first café opened in 1998"}},
		{name: "activity", prep: func(t *testing.T, f *fixture) { f.decide(t, f.ids[3], "skip") }, steps: []string{"2", "=recent changes"}},
		{name: "help", steps: []string{"?", "=any key: close help"}},
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, v := range views {
			t.Run(fmt.Sprintf("%s_%dx%d", v.name, size[0], size[1]), func(t *testing.T) {
				f := newFixture(t)
				if v.prep != nil {
					v.prep(t, f)
				}
				tm := f.start(t, size[0], size[1], Options{})
				for _, s := range v.steps {
					if text, ok := strings.CutPrefix(s, "="); ok {
						waitFor(t, tm, text)
					} else {
						keys(tm, s)
					}
				}
				golden.RequireEqual(t, []byte(final(t, tm).View()))
			})
		}
	}
}

// j, j, d, y dismisses the third item and nothing else. The two j arrive
// as one message, as keys typed faster than they are read do.
func TestDesk_DismissThird(t *testing.T) {
	f := newFixture(t)
	tm := f.start(t, 80, 24, Options{})
	keys(tm, "jj", "d")
	waitFor(t, tm, "Dismiss "+f.ids[2])
	keys(tm, "y")
	waitFor(t, tm, "dismissed "+f.ids[2])
	waitFor(t, tm, "5 pending")
	final(t, tm)
	for i, id := range f.ids {
		want := ops.StatusPending
		if i == 2 {
			want = ops.StatusDismissed
		}
		if got := f.status(t, id); got != want {
			t.Errorf("item %d (%s) is %s, want %s", i, id, got, want)
		}
	}
	// a decision at the desk is a person's
	if by := f.item(t, f.ids[2]).DecidedBy; by != ops.OriginUser {
		t.Errorf("decided by %q", by)
	}
}

// A refused confirmation (n) changes nothing.
func TestDesk_ConfirmRefused(t *testing.T) {
	f := newFixture(t)
	tm := f.start(t, 80, 24, Options{})
	keys(tm, "s")
	waitFor(t, tm, "[y/n]")
	keys(tm, "n")
	waitFor(t, tm, "nothing was changed")
	keys(tm, "d", "x", "esc")
	waitFor(t, tm, "nothing was changed")
	m := final(t, tm)
	if m.q.total != len(f.ids) {
		t.Errorf("queue shows %d items", m.q.total)
	}
	for _, id := range f.ids {
		if got := f.status(t, id); got != ops.StatusPending {
			t.Errorf("%s is %s after a refused confirmation", id, got)
		}
	}
	for _, c := range f.c.calls {
		if c == "review.resolve" || c == "review.bulk_resolve" {
			t.Errorf("a refused confirmation called %s", c)
		}
	}
}

// space on three items, then s, y skips all three in one bulk request.
func TestDesk_BulkSkip(t *testing.T) {
	f := newFixture(t)
	tm := f.start(t, 80, 24, Options{})
	keys(tm, "space", "j", "space", "space")
	waitFor(t, tm, "6, 3 selected")
	keys(tm, "s")
	waitFor(t, tm, "Skip 3 selected items?")
	keys(tm, "y")
	waitFor(t, tm, "skipped 3 items")
	waitFor(t, tm, "3 pending")
	m := final(t, tm)
	for i, id := range f.ids {
		want := ops.StatusPending
		if i == 0 || i == 2 || i == 3 {
			want = ops.StatusSkipped
		}
		if got := f.status(t, id); got != want {
			t.Errorf("item %d is %s, want %s", i, got, want)
		}
	}
	if len(m.q.sel) != 0 || m.q.total != 3 {
		t.Errorf("after the bulk: %d selected, %d pending", len(m.q.sel), m.q.total)
	}
	if by := f.item(t, f.ids[0]).DecidedBy; by != ops.OriginUser {
		t.Errorf("bulk: decided by %q", by)
	}
	n := 0
	for _, c := range f.c.calls {
		if c == "review.bulk_resolve" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d bulk requests, want 1", n)
	}
}

// c, y on a missing page writes the stub the context showed.
func TestDesk_CreateStub(t *testing.T) {
	f := newFixture(t)
	tm := f.start(t, 80, 24, Options{})
	waitFor(t, tm, "Create writes")
	keys(tm, "c")
	waitFor(t, tm, "Create wiki/")
	keys(tm, "y")
	waitFor(t, tm, "created "+f.ids[0]+" →")
	final(t, tm)
	if got := f.status(t, f.ids[0]); got != ops.StatusCreated {
		t.Fatalf("item is %s", got)
	}
	p, err := call[ops.GetPageOut](context.Background(), f.c, "page.get", map[string]string{"title": "Cold brew"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Content, "[[Coffee]]") || !strings.Contains(p.Content, "[[Tea]]") {
		t.Errorf("stub:\n%s", p.Content)
	}
}

// Keys that do not apply say why and ask nothing: create on a
// contradiction, deep-research with no research command.
func TestDesk_NotApplicable(t *testing.T) {
	t.Setenv(ops.ResearchCmdEnv, "")
	f := newFixture(t)
	tm := f.start(t, 80, 24, Options{})
	keys(tm, "R")
	waitFor(t, tm, "deep-research needs a research command")
	keys(tm, "j")
	waitFor(t, tm, "2001, [[Coffee]]")
	keys(tm, "c")
	waitFor(t, tm, "use r, s or d here")
	m := final(t, tm)
	if m.confirm != nil {
		t.Errorf("asked %q", m.confirm.prompt)
	}
}

// / filters by type, origin and words; the count and rows follow.
func TestDesk_Filter(t *testing.T) {
	f := newFixture(t)
	tm := f.start(t, 80, 24, Options{})
	keys(tm, "/type:missing-page") // one message: the filter gets the rest
	keys(tm, "enter")
	waitFor(t, tm, "2 pending matching type:missing-page")
	keys(tm, "/")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlU})
	keys(tm, "origin:user tea", "enter")
	waitFor(t, tm, "1 pending matching origin:user tea")
	m := final(t, tm)
	if it := m.q.current(); it == nil || it.ID != f.ids[3] {
		t.Errorf("current %+v", it)
	}
}

// A write by someone else (the agent) shows without a key: the desk polls
// the store's stamp.
func TestDesk_RefreshOnChange(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	stamp := "a"
	o := Options{Poll: 20 * time.Millisecond, Stamp: func() string { mu.Lock(); defer mu.Unlock(); return stamp }}
	tm := f.start(t, 80, 24, o)
	f.add(t, map[string]any{"type": "confirm", "title": "Check the prices"})
	mu.Lock()
	stamp = "b"
	mu.Unlock()
	waitFor(t, tm, "7 pending")
	final(t, tm)
}

// The activity view lists the page history's writes and the decisions
// (recent), shows the diff of the write under the cursor (page.diff) and
// u, y writes the revision before it back (page.restore), as the CLI's
// verbs run those operations; n keeps the page as it is.
func TestDesk_Activity(t *testing.T) {
	f := newFixture(t)
	write := func(content string) *ops.WritePageOut {
		out, err := call[ops.WritePageOut](context.Background(), f.c, "page.write", map[string]any{"title": "Latte", "content": content})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	get := func() string {
		out, err := call[ops.GetPageOut](context.Background(), f.c, "page.get", map[string]any{"title": "Latte"})
		if err != nil {
			t.Fatal(err)
		}
		return out.Content
	}
	first := write("Milk and [[Espresso]].\n")
	firstText := get()
	write("Milk, foam and [[Espresso]].\n")
	f.decide(t, f.ids[1], "dismiss")
	was := get()
	tm := f.start(t, 80, 24, Options{})
	keys(tm, "2")
	waitFor(t, tm, "3 recent changes")
	waitFor(t, tm, "When the first café opened") // the decision, newest
	keys(tm, "j")
	waitFor(t, tm, "+Milk, foam and [[Espresso]].")
	waitFor(t, tm, "-Milk and [[Espresso]].")
	keys(tm, "u")
	waitFor(t, tm, "Restore \"Latte\"")
	keys(tm, "n")
	waitFor(t, tm, "nothing was changed")
	if now := get(); now != was {
		t.Fatalf("n changed the page: %q", now)
	}
	keys(tm, "u", "y")
	waitFor(t, tm, "restored \"Latte\" to revision 1 (now revision 3)")
	waitFor(t, tm, "4 recent changes")
	keys(tm, "G")
	waitFor(t, tm, "(this write created the page: no revision before it)")
	final(t, tm)
	if now := get(); now != firstText {
		t.Errorf("after the restore the page is %q, want the first version %q", now, firstText)
	}
	h, err := call[ops.PageHistoryOut](context.Background(), f.c, "page.history", map[string]any{"title": "Latte"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Revisions) != 3 || h.Revisions[0].Op != "restore" || h.Revisions[0].From != 1 || h.Revisions[0].SHA256 != first.SHA256 || h.Current != 3 {
		t.Errorf("history after the restore: %+v", h)
	}
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	for _, op := range []string{opRecent, opDiff, opRestore} {
		if !strings.Contains(strings.Join(f.c.calls, " "), op) {
			t.Errorf("%s was never called: %v", op, f.c.calls)
		}
	}
}

// A long queue is read a chunk at a time around the screen: G reads the
// last chunk only, and what is kept stays bounded.
func TestDesk_PagedQueue(t *testing.T) {
	f := newFixture(t)
	for i := range 444 {
		f.add(t, map[string]any{"type": "suggestion", "title": fmt.Sprintf("Idea number %d", i)})
	}
	tm := f.start(t, 80, 24, Options{})
	keys(tm, "G")
	waitFor(t, tm, "· 450/450")
	waitFor(t, tm, "Idea number 443")
	keys(tm, "k")
	waitFor(t, tm, "· 449/450")
	m := final(t, tm)
	f.c.mu.Lock()
	defer f.c.mu.Unlock()
	var offsets []string
	for i, c := range f.c.calls {
		if c == "review.list" {
			var in struct{ Limit, Offset int }
			json.Unmarshal([]byte(f.c.ins[i]), &in)
			if in.Limit > chunk {
				t.Errorf("read %d items at once", in.Limit)
			}
			offsets = append(offsets, fmt.Sprint(in.Offset))
		}
	}
	if strings.Contains(strings.Join(offsets, ","), "100,") || len(m.q.rows) > 2*keptChunks+1 {
		t.Errorf("read offsets %v; %d chunks kept", offsets, len(m.q.rows))
	}
}

// A resize redraws at the new size: from 120 columns the context stands
// beside the list.
func TestDesk_Resize(t *testing.T) {
	f := newFixture(t)
	tm := f.start(t, 80, 24, Options{})
	tm.Send(tea.WindowSizeMsg{Width: 120, Height: 40})
	waitFor(t, tm, "│ 54w7wh  missing-page")
	tm.Send(tea.WindowSizeMsg{Width: 80, Height: 24})
	waitFor(t, tm, "────────")
	m := final(t, tm)
	if lines := strings.Split(m.View(), "\n"); len(lines) != 24 || len([]rune(lines[2])) > 80 {
		t.Errorf("%d lines, the third %d wide", len(lines), len([]rune(lines[2])))
	}
}

// A decision another copy of the vault made shows without a key when its
// journal arrives (as a git pull brings it): the vault's stamp covers the
// journal, and the queue's read replays it.
func TestDesk_RefreshOnJournalChange(t *testing.T) {
	f := newFixture(t)
	there := testvault.New(t)
	copyFile(t, f.v.Abs(vault.ReviewJournal), there.Abs(vault.ReviewJournal))
	other, err := ops.OpenEnv(context.Background(), there, ops.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tm := f.start(t, 80, 24, Options{Poll: 20 * time.Millisecond, Stamp: VaultStamp(f.v)})
	waitFor(t, tm, "6 pending")
	if _, err := call[ops.ResolveReviewOut](context.Background(), &envCaller{e: other}, "review.resolve", map[string]string{"id": f.ids[0], "action": "dismiss"}); err != nil {
		t.Fatal(err)
	}
	copyFile(t, there.Abs(vault.ReviewJournal), f.v.Abs(vault.ReviewJournal))
	waitFor(t, tm, "5 pending")
	final(t, tm)
	if got := f.status(t, f.ids[0]); got != "dismissed" {
		t.Errorf("the item is %s", got)
	}
}

// copyFile copies a file's bytes over another file.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A new filter clears the selection: a decision never acts on items the
// screen no longer shows.
func TestDesk_FilterClearsSelection(t *testing.T) {
	f := newFixture(t)
	tm := f.start(t, 80, 24, Options{})
	keys(tm, "space", "space")
	waitFor(t, tm, "2 selected")
	keys(tm, "/type:suggestion")
	keys(tm, "enter")
	waitFor(t, tm, "pending matching type:suggestion")
	m := final(t, tm)
	if len(m.q.sel) != 0 || len(m.q.selOrder) != 0 {
		t.Errorf("the selection outlived the filter: %v", m.q.selOrder)
	}
}

// Text from the vault is drawn without its control characters: a tab in
// a quoted line would move the terminal to its next tab stop and wrap the
// row, scrolling the screen; an ESC would restyle it.
func TestDesk_PageTextWithoutControls(t *testing.T) {
	if got := plain("a\tb\x1b[2Jc\u0085d\ne"); got != "a    b\uFFFD[2Jc\uFFFDd\ne" {
		t.Errorf("plain = %q", got)
	}
	f := newFixture(t)
	testvault.Write(t, f.v, "wiki/tabs.md", "---\ntitle: Tabs\n---\n\t- [[Cold brew]]\tindented\x1b[31m red\n")
	if _, err := f.e.Index.Scan(context.Background(), index.ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	tm := &screen{}
	tm.TestModel = teatest.NewTestModel(t, probe{m: f.model(Options{}), s: tm}, teatest.WithInitialTermSize(80, 24))
	waitFor(t, tm, "indented")
	tm.mu.Lock()
	frame := tm.frame
	tm.mu.Unlock()
	for _, l := range strings.Split(frame, "\n") {
		if strings.ContainsAny(l, "\t\x1b") {
			t.Errorf("a line of the frame holds a control character: %q", l)
		}
	}
	final(t, tm)
}
