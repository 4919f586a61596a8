package ops

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/history"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

// historyOf is a page's history through the operation's row.
func historyOf(t testing.TB, e *Env, title string) *PageHistoryOut {
	t.Helper()
	return mustCall[PageHistoryOut](t, e, opPageHistory, obj{"title": title, "limit": 100})
}

// restore writes a revision back through the operation's row.
func restore(t testing.TB, e *Env, title string, rev int, ifMatch string) (*RestorePageOut, error) {
	t.Helper()
	in := obj{"title": title, "rev": rev}
	if ifMatch != "" {
		in["if_match"] = ifMatch
	}
	return call[RestorePageOut](t, e, opPageRestore, in)
}

// revOps lists a history's revisions as "rev:op:origin", newest first.
func revOps(h *PageHistoryOut) []string {
	var out []string
	for _, r := range h.Revisions {
		out = append(out, strings.Join([]string{strconv.Itoa(r.Rev), r.Op, r.Origin}, ":"))
	}
	return out
}

func TestHistory_WriteThriceRestoreExactBytes(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	bodies := []string{"# Heron\n\nFirst draft.\n", "# Heron\n\nSecond draft, longer.\n", "# Heron\n\nThird draft: [[Egret]].\n"}
	var outs []*WritePageOut
	var files []string
	for _, b := range bodies {
		outs = append(outs, write(t, e, &WritePageIn{Title: "Heron", Content: b}))
		files = append(files, readFile(t, v, outs[0].Path))
	}
	for i, o := range outs {
		if o.Revision != i+1 {
			t.Fatalf("write %d made revision %d", i+1, o.Revision)
		}
	}
	h := historyOf(t, e, "Heron")
	if got, want := strings.Join(revOps(h), " "), "3:write:synapse 2:write:synapse 1:create:synapse"; got != want {
		t.Fatalf("history %s, want %s", got, want)
	}
	for i, r := range h.Revisions {
		if w := outs[len(outs)-1-i]; r.SHA256 != w.SHA256 || r.Size != int64(len(files[len(files)-1-i])) || r.Path != w.Path || r.Title != "Heron" {
			t.Errorf("revision %d = %+v, written %+v", r.Rev, r, w)
		}
	}
	if h.Current != 3 || h.SHA256 != outs[2].SHA256 {
		t.Errorf("current %d (%s), want 3", h.Current, h.SHA256)
	}
	// restore revision 1: the exact bytes of that revision, as a new one
	res, err := restore(t, e, "Heron", 1, outs[2].SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, v, res.Path); got != files[0] || res.SHA256 != outs[0].SHA256 {
		t.Fatalf("after restoring revision 1 the file is\n%s\nwant\n%s", got, files[0])
	}
	if res.Revision != 4 || res.RestoredFrom != 1 || res.Unchanged {
		t.Fatalf("restore result %+v", res)
	}
	if g := getPageOut(t, e, "Heron"); g.SHA256 != outs[0].SHA256 || strings.Contains(g.Content, "Egret") {
		t.Fatalf("the index did not follow the restore: %+v", g)
	}
	h = historyOf(t, e, "Heron")
	if top := h.Revisions[0]; top.Op != history.OpRestore || top.From != 1 || top.Rev != 4 || h.Current != 4 {
		t.Fatalf("newest revision %+v (current %d)", top, h.Current)
	}
	// and undone the same way
	res, err = restore(t, e, "Heron", 3, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, v, res.Path); got != files[2] {
		t.Fatalf("undo of the restore gave\n%s", got)
	}
	// the same bytes again: nothing written, no revision
	res, err = restore(t, e, "Heron", 3, "")
	if err != nil || !res.Unchanged || res.Revision != 0 {
		t.Fatalf("restore of the current bytes: %+v, %v", res, err)
	}
	if log := readFile(t, v, vault.LogPage); strings.Count(log, "| Heron") != 5 {
		t.Errorf("log.md has %d entries for Heron, want 5 (3 writes, 2 restores):\n%s", strings.Count(log, "| Heron"), log)
	}
}

func TestHistory_RestoreRefusals(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	write(t, e, &WritePageIn{Title: "Ibis", Content: "one\n"})
	w2 := write(t, e, &WritePageIn{Title: "Ibis", Content: "two\n"})
	for _, tc := range []struct {
		name    string
		title   string
		rev     int
		ifMatch string
		code    errs.Code
	}{
		{"no such page", "Nothing Here", 1, "", errs.NotFound},
		{"no such revision", "Ibis", 9, "", errs.NotFound},
		{"stale if_match", "Ibis", 1, sha("something else"), errs.Conflict},
		{"malformed if_match", "Ibis", 1, "abc", errs.Invalid},
		{"a reserved file", "index", 1, "", errs.Invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := restore(t, e, tc.title, tc.rev, tc.ifMatch)
			if errs.CodeOf(err) != tc.code {
				t.Fatalf("error %v (%s), want %s", err, errs.CodeOf(err), tc.code)
			}
		})
	}
	if got := getPageOut(t, e, "Ibis"); got.SHA256 != w2.SHA256 {
		t.Fatal("a refused restore changed the page")
	}
}

func TestHistory_DiffShowsTheChange(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	write(t, e, &WritePageIn{Title: "Kite", Content: "# Kite\n\nA raptor.\nIt hovers.\n"})
	write(t, e, &WritePageIn{Title: "Kite", Content: "# Kite\n\nA bird of prey.\nIt hovers.\n"})
	write(t, e, &WritePageIn{Title: "Kite", Content: "# Kite\n\nA bird of prey.\nIt hovers.\nSee [[Hawk]].\n"})
	diff := func(in *PageDiffIn) *PageDiffOut {
		t.Helper()
		return mustCall[PageDiffOut](t, e, opPageDiff, obj{"title": "Kite", "rev": in.Rev, "to": in.To})
	}
	for _, tc := range []struct {
		name      string
		in        PageDiffIn
		from, to  int
		has, lack []string
	}{
		{"the last write", PageDiffIn{}, 2, 3, []string{"+See [[Hawk]].", " It hovers.", "(rev 2)", "(rev 3)"}, []string{"-A raptor."}},
		{"one revision", PageDiffIn{Rev: 2}, 1, 2, []string{"-A raptor.", "+A bird of prey."}, []string{"Hawk"}},
		{"a range", PageDiffIn{Rev: 1, To: 3}, 1, 3, []string{"-A raptor.", "+A bird of prey.", "+See [[Hawk]]."}, nil},
		{"backwards", PageDiffIn{Rev: 3, To: 1}, 3, 1, []string{"+A raptor.", "-See [[Hawk]]."}, nil},
		{"the first revision", PageDiffIn{Rev: 1}, 0, 1, []string{"/dev/null", "+A raptor.", "+title: Kite"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := diff(&tc.in)
			from := 0
			if out.From != nil {
				from = out.From.Rev
			}
			if from != tc.from || out.To.Rev != tc.to {
				t.Fatalf("diff of %d..%d, want %d..%d", from, out.To.Rev, tc.from, tc.to)
			}
			for _, s := range tc.has {
				if !strings.Contains(out.Diff, s) {
					t.Errorf("diff lacks %q:\n%s", s, out.Diff)
				}
			}
			for _, s := range tc.lack {
				if strings.Contains(out.Diff, s) {
					t.Errorf("diff has %q:\n%s", s, out.Diff)
				}
			}
		})
	}
	if _, err := call[PageDiffOut](t, e, opPageDiff, obj{"title": "Kite", "rev": 7}); errs.CodeOf(err) != errs.NotFound {
		t.Errorf("unknown revision: %v", err)
	}
}

func TestHistory_HandEditsAreRevisionsOfOriginFile(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	w := write(t, e, &WritePageIn{Title: "Lark", Content: "# Lark\n\nSings.\n"})
	// an editor saves the page; the next write through synapse records it
	// before replacing it
	hand := strings.Replace(readFile(t, v, w.Path), "Sings.", "Sings at dawn (edited in Obsidian).", 1)
	mtime := testNow.Add(-time.Hour).Truncate(time.Second)
	testvault.Write(t, v, w.Path, hand)
	if err := os.Chtimes(v.Abs(w.Path), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	write(t, e, &WritePageIn{Title: "Lark", Content: "# Lark\n\nSings at dawn.\n"})
	h := historyOf(t, e, "Lark")
	if got, want := strings.Join(revOps(h), " "), "3:write:synapse 2:edit:file 1:create:synapse"; got != want {
		t.Fatalf("history %s, want %s", got, want)
	}
	if r := h.Revisions[1]; r.SHA256 != sha(hand) || !r.Time.Equal(mtime) {
		t.Fatalf("the hand edit's revision: %+v (want sha %s, time %v)", r, sha(hand), mtime)
	}
	res, err := restore(t, e, "Lark", 2, "")
	if err != nil || readFile(t, v, w.Path) != hand || res.SHA256 != sha(hand) {
		t.Fatalf("restore of the hand edit: %+v %v", res, err)
	}
	// a scan (the watcher, rescan, a CLI verb's freshness check) records
	// an edit of a page with a history at once
	hand2 := hand + "\nA second edit.\n"
	testvault.Write(t, v, w.Path, hand2)
	if _, err := e.Index.Scan(context.Background(), index.ScanOptions{Paths: []string{w.Path}}); err != nil {
		t.Fatal(err)
	}
	h = historyOf(t, e, "Lark")
	if top := h.Revisions[0]; top.Op != history.OpEdit || top.Origin != history.OriginFile || top.SHA256 != sha(hand2) || h.Current != top.Rev {
		t.Fatalf("after the scan: %+v (current %d)", top, h.Current)
	}
	// a page synapse never wrote gets no history from a scan
	testvault.Write(t, v, "wiki/notes/plain.md", "# Plain\n")
	rescanT(t, e)
	testvault.Write(t, v, "wiki/notes/plain.md", "# Plain\n\nEdited.\n")
	rescanT(t, e)
	if h := historyOf(t, e, "plain"); h.Total != 0 {
		t.Fatalf("a scan gave an unwritten page a history: %+v", h.Revisions)
	}
	// its first write records the file as it was, then the write
	write(t, e, &WritePageIn{Title: "plain", Content: "# Plain\n\nRewritten.\n"})
	if got := strings.Join(revOps(historyOf(t, e, "plain")), " "); got != "2:write:synapse 1:edit:file" {
		t.Fatalf("history of a page first written by synapse: %s", got)
	}
}

// The version a write replaces is in the history before the file is
// replaced: a crash at the rename (or anywhere after) cannot lose it.
func TestHistory_ReplacedVersionKeptBeforeTheRename(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	w := write(t, e, &WritePageIn{Title: "Merlin", Content: "# Merlin\n\nA falcon.\n"})
	hand := readFile(t, v, w.Path) + "\nEdited by hand, never seen by synapse.\n"
	testvault.Write(t, v, w.Path, hand)
	checked := false
	f := &faultFS{fail: "rename", before: func(step string) {
		if step != "rename" || checked {
			return
		}
		checked = true
		// what is on disk now, as a fresh process would read it
		p, err := history.For(v.Root).Read(w.ID)
		if err != nil {
			t.Fatal(err)
		}
		n := p.Newest()
		if n == nil || n.SHA256 != sha(hand) || n.Origin != history.OriginFile {
			t.Fatalf("at the rename the history's newest is %+v, want the hand edit", n)
		}
		if c, err := p.Content(n.Rev); err != nil || string(c) != hand {
			t.Fatalf("the hand edit's bytes: %q %v", c, err)
		}
	}}
	withFS(e, f)
	if _, err := WritePage(context.Background(), e, &WritePageIn{Title: "Merlin", Content: "# Merlin\n\nReplaced.\n"}); err == nil {
		t.Fatal("the write succeeded through a failing rename")
	}
	if !checked {
		t.Fatal("the write never reached the rename")
	}
	if readFile(t, v, w.Path) != hand {
		t.Fatal("the failed write changed the file")
	}
}

func TestHistory_FailureNeverFailsTheWrite(t *testing.T) {
	v := testvault.New(t)
	// the history's folder is a file: nothing can be recorded
	testvault.Write(t, v, history.Dir, "not a folder\n")
	e, _ := openEnv(t, v)
	out := write(t, e, &WritePageIn{Title: "Osprey", Content: "# Osprey\n"})
	if out.Revision != 0 || len(out.Notes) == 0 || !strings.HasPrefix(out.Notes[0], "history: ") {
		t.Fatalf("result %+v: want the write with a history note", out)
	}
	out = write(t, e, &WritePageIn{Title: "Osprey", Content: "# Osprey\n\nFishes.\n"})
	if len(out.Notes) == 0 || !strings.Contains(readFile(t, v, out.Path), "Fishes.") {
		t.Fatalf("second write %+v", out)
	}
}

func TestHistory_StatusShowsUseAndBounds(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	for i := 0; i < 3; i++ {
		write(t, e, &WritePageIn{Title: "Plover", Content: strings.Repeat("plover ", i+1) + "\n"})
	}
	write(t, e, &WritePageIn{Title: "Quail", Content: "quail\n"})
	st, err := status(context.Background(), e, &StatusIn{})
	if err != nil {
		t.Fatal(err)
	}
	h := st.History
	if h == nil || h.Pages != 2 || h.Revisions != 4 || h.Bytes <= 0 || h.Git != "off" {
		t.Fatalf("status history %+v", h)
	}
	if h.Limits.PageRevisions != history.DefaultPageRevisions || h.Limits.TotalBytes != history.DefaultTotalBytes {
		t.Fatalf("limits %+v", h.Limits)
	}
}

func TestHistory_PruningFromConfig(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, vault.ConfigFile, "history:\n  page_revisions: 5\n")
	e, err := OpenEnv(context.Background(), v, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for i := 0; i < 12; i++ {
		if _, err := WritePage(context.Background(), e, &WritePageIn{Title: "Rail", Content: strings.Repeat("x", i+1) + "\n"}); err != nil {
			t.Fatal(err)
		}
	}
	h := historyOf(t, e, "Rail")
	if h.Total > 5 || h.Revisions[0].Rev != 12 {
		t.Fatalf("kept %d revisions, newest %d", h.Total, h.Revisions[0].Rev)
	}
	st, _ := status(context.Background(), e, &StatusIn{})
	if st.History.PrunedRevisions != 12-h.Total || st.History.Limits.PageRevisions != 5 {
		t.Fatalf("status %+v", st.History)
	}
}

// The page move operation calls historyRewrite once the file is at its
// new path: the history follows the page to its new id.
func TestHistory_MovedPageKeepsItsHistory(t *testing.T) {
	v := testvault.New(t)
	e, _ := openEnv(t, v)
	write(t, e, &WritePageIn{Title: "Shrike", Content: "# Shrike\n\nOne.\n"})
	w := write(t, e, &WritePageIn{Title: "Shrike", Content: "# Shrike\n\nTwo.\n"})
	data := readFile(t, v, w.Path)
	// what a move does to the file, then tells the history
	newPath := "wiki/entities/shrike.md"
	if err := os.MkdirAll(v.Abs("wiki/entities"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(v.Abs(w.Path), v.Abs(newPath)); err != nil {
		t.Fatal(err)
	}
	rescanT(t, e)
	moved := getPageOut(t, e, newPath)
	rev, notes := historyRewrite(e, pageRewrite{ID: moved.ID, FromID: w.ID, Path: newPath, FromPath: w.Path, Title: "Shrike",
		Old: []byte(data), New: []byte(data), Op: history.OpMove, Time: testNow})
	if rev != 3 || len(notes) != 0 {
		t.Fatalf("move recorded as revision %d, notes %v", rev, notes)
	}
	h := historyOf(t, e, newPath)
	if got := strings.Join(revOps(h), " "); got != "3:move:synapse 2:write:synapse 1:create:synapse" {
		t.Fatalf("history after the move: %s", got)
	}
	if top := h.Revisions[0]; top.MovedFrom != w.Path || top.Path != newPath || h.Current != 3 {
		t.Fatalf("move revision %+v (current %d)", top, h.Current)
	}
	if _, err := restore(t, e, newPath, 1, ""); err != nil || !strings.Contains(readFile(t, v, newPath), "One.") {
		t.Fatalf("restore after the move: %v", err)
	}
	// a page whose links a move rewrote, edited by hand before: both kept
	other := write(t, e, &WritePageIn{Title: "Wren", Content: "# Wren\n\n[[Shrike]]\n"})
	hand := readFile(t, v, other.Path) + "by hand\n"
	rewritten := strings.Replace(hand, "[[Shrike]]", "[[Butcherbird]]", 1)
	testvault.Write(t, v, other.Path, rewritten)
	if rev, notes := historyRewrite(e, pageRewrite{ID: other.ID, Path: other.Path, Title: "Wren", Old: []byte(hand), New: []byte(rewritten), Op: history.OpWrite, Time: testNow}); rev != 3 || len(notes) > 0 {
		t.Fatalf("rewrite recorded as %d, %v", rev, notes)
	}
	if got := strings.Join(revOps(historyOf(t, e, "Wren")), " "); got != "3:write:synapse 2:edit:file 1:create:synapse" {
		t.Fatalf("history of a rewritten page: %s", got)
	}
}

// A restore is logged as one (which revision it wrote back), and recent
// lists it as restored, with the revision.
func TestHistory_RestoreIsLoggedAsRestored(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Finch", "content": "One.\n"})
	mustCall[WritePageOut](t, e, opWritePage, obj{"title": "Finch", "content": "Two.\n"})
	before := readFile(t, v, vault.LogPage)
	res, err := restore(t, e, "Finch", 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := logTail(t, v, before), "\n"+(logRecord{kind: LogRestored, title: "Finch"}).text(e.now())+"- from: revision 1\n"; got != want {
		t.Errorf("the restore logged %q, want %q", got, want)
	}
	top := recentT(t, e, &RecentIn{}).Items[0]
	if top.Kind != "page" || top.Action != "restored" || top.Title != "Finch" || top.Rev != res.Revision || top.From != 1 {
		t.Errorf("recent's newest: %+v", top)
	}
}
