package render

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/search"
)

var update = flag.Bool("update", false, "rewrite the golden renderings in testdata/")

// renderVault is the corpus with what tables must cope with: a long
// title, a deep source path, review items of the longest type, and every
// time pinned so the renderings are the same on every run.
func renderVault(t *testing.T) *ops.Env {
	t.Helper()
	v := testvault.WithCorpus(t)
	testvault.Write(t, v, "wiki/concepts/long.md", "---\ntitle: A page with a rather long title that does not fit in eighty columns at all\nupdated: 2026-05-04\n---\nSee [[Home]], [[Daily notes]] and [[A missing page with a long name]] and [[Another missing one]].\n")
	testvault.Write(t, v, "raw/sources/notes/meeting.md", "# Meeting\n")
	testvault.Write(t, v, "raw/sources/deeply/nested/folders/of/clippings/an article about spaced repetition and memory.md", "text\n")
	pinned := time.Date(2026, 3, 2, 10, 30, 0, 0, time.UTC)
	if err := filepath.WalkDir(v.Root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			err = os.Chtimes(p, pinned, pinned)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	e, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{Holder: "render test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	e.Now = func() time.Time { return pinned }
	call := func(name string, args map[string]any) {
		raw, _ := json.Marshal(args)
		if _, err := ops.Lookup(name).Call(context.Background(), e, raw); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	call("source.rescan", nil)
	call("page.write", map[string]any{"title": "Cited source", "content": "Draws on a note.\n", "sources": []string{"notes/meeting.md"}})
	call("review.add", map[string]any{"type": "purpose-suggestion", "title": "Say who the wiki is for, in one sentence that is longer than a column", "origin": "user"})
	return e
}

// renderings are the verbs with golden renderings, each called once.
var renderings = []struct {
	name, op string
	args     map[string]any
	render   Binding
}{
	{"page-list", "page.list", map[string]any{"limit": 12}, Of(PageList)},
	{"graph-backlinks", "graph.backlinks", map[string]any{"title": "Home"}, Of(GraphBacklinks)},
	{"review-list", "review.list", map[string]any{"status": "all"}, Of(ReviewList)},
	{"source-list", "source.list", map[string]any{}, Of(SourceList)},
	// search by its result, not a live query: the layout is pinned here,
	// the ranking by package search's own tests
	{"search", "search", nil, Of(Search)},
}

// readable are what renderings must show at a width.
var readable = map[string][]string{
	"source-list-80":     {"…repetition and memory.md", " notes/meeting.md ", " SOURCE "},
	"review-list-80":     {"Say who the wiki is"},
	"review-list-160":    {" ORIGIN "},
	"page-list-80":       {"…r authentication.md"},
	"graph-backlinks-80": {"…interface/Settings.md"},
}

// TestRender_StatusFits: status fits 80 columns with every review status
// in use (its reviews line wrapped), counts only the statuses that have
// items, pending first, and shows the last scan as tables show times.
func TestRender_StatusFits(t *testing.T) {
	s := &ops.StatusOut{Vault: "/home/me/wiki", Pages: 173, Version: "0.1.0", LastScan: "2026-12-01T11:20:46Z",
		Reviews: map[string]int{"auto_resolved": 120, "created": 35, "deep_researched": 12, "dismissed": 8, "pending": 1402, "skipped": 230},
		Types: []ops.TypeCount{{Type: "question", Pages: 106, Folder: "wiki/questions"}, {Type: "entity", Pages: 87, Folder: "wiki/entities"},
			{Type: "topic", Pages: 67, Folder: "wiki/topics"}, {Type: "note", Pages: 65, Folder: "wiki"}, {Type: "concept", Pages: 3, Folder: "wiki/concepts"}}}
	var buf bytes.Buffer
	o := New(&buf, io.Discard)
	o.tty, o.width = true, 80
	if err := Status(o, s); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		if w := runewidth.StringWidth(l); w > 80 {
			t.Errorf("line %q is %d columns wide", l, w)
		}
	}
	if !strings.Contains(got, "reviews:     1402 pending, 230 skipped, 120 auto_resolved, 35 created,\n             12 deep_researched, 8 dismissed\n") {
		t.Errorf("reviews line:\n%s", got)
	}
	if !strings.Contains(got, "types:       question 106 in wiki/questions, entity 87 in wiki/entities,\n") ||
		!strings.Contains(got, "1 more (status --json)\n") {
		t.Errorf("types line:\n%s", got)
	}
	if !strings.Contains(got, "last scan:   2026-12-01 11:20 UTC\n") {
		t.Errorf("last scan as tables show times:\n%s", got)
	}
	s.Reviews = map[string]int{"pending": 0, "skipped": 2, "created": 2, "dismissed": 0}
	buf.Reset()
	Status(o, s)
	if !strings.Contains(buf.String(), "reviews:     2 created, 2 skipped\n") {
		t.Errorf("reviews line:\n%s", buf.String())
	}
}

// searchResult is a search result as the renderer gets it: a long title,
// a long path, snippets of several lines.
var searchResult = &ops.SearchOut{Query: "sync notes across devices", Hits: []search.Hit{
	{ID: "tdbygv2p", Title: "Sync your notes across devices", Type: "note", Path: "wiki/Getting started/Sync your notes across devices.md", Score: 17.71,
		Snippet: "…The most straightforward and officially supported sync method is our first-party solution: Obsidian Sync. Obsidian Sync keeps your vaults synced across all devices by using an off-site remote vault to make copies of…"},
	{ID: "x2c4m9qa", Title: "Troubleshoot Obsidian Sync when notes across several devices do not agree", Type: "question", Path: "wiki/Obsidian Sync/Troubleshooting/Troubleshoot Obsidian Sync when notes across several devices do not agree.md", Score: 9.8,
		Snippet: "…Sync deleted a note I just created on two devices Obsidian Sync typically tries to resolve conflicts by merging conflicting notes across devices."},
	{ID: "bqac0tpk", Title: "Introduction to Obsidian Sync", Type: "note", Path: "wiki/Obsidian Sync/Introduction to Obsidian Sync.md", Score: 9,
		Snippet: "Obsidian Sync is an add-on service that allows you to privately sync your notes across devices."},
}}

// TestRender_Golden pins how the table verbs look on a terminal 80 and 160
// columns wide (at 80 columns ids once wrapped, columns vanished and
// types broke into "que/sti/on"), and checks what makes them readable:
// no line wider than the terminal, ids and counts whole. Refresh with
// go test ./internal/render -run TestRender_Golden -update
func TestRender_Golden(t *testing.T) {
	e := renderVault(t)
	for _, r := range renderings {
		var out any = searchResult
		if r.args != nil {
			raw, _ := json.Marshal(r.args)
			var err error
			if out, err = ops.Lookup(r.op).Call(context.Background(), e, raw); err != nil {
				t.Fatalf("%s: %v", r.name, err)
			}
		}
		data, _ := json.Marshal(out)
		var ids []string
		collectIDs(data, &ids)
		for _, width := range []int{80, 160} {
			var buf bytes.Buffer
			o := New(&buf, io.Discard)   // not a terminal: no colour
			o.tty, o.width = true, width // but laid out as on one
			if err := r.render.Render(o, out); err != nil {
				t.Fatal(err)
			}
			got := buf.String()
			for i, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				if w := runewidth.StringWidth(l); w > width {
					t.Errorf("%s at %d columns: line %d is %d columns wide:\n%s", r.name, width, i+1, w, l)
				}
			}
			if r.op != "search" {
				for _, id := range ids {
					if !strings.Contains(got, " "+id+" ") {
						t.Errorf("%s at %d columns: id %s is not shown whole", r.name, width, id)
					}
				}
			}
			if !strings.HasSuffix(got, "\n") {
				t.Errorf("%s at %d columns does not end with a newline", r.name, width)
			}
			// what tells rows apart survives 80 columns: a source's file
			// name (its path is cut on the left), a review's title (at
			// least 20 columns of it)
			for _, want := range readable[r.name+"-"+itoa(width)] {
				if !strings.Contains(got, want) {
					t.Errorf("%s at %d columns lacks %q:\n%s", r.name, width, want, got)
				}
			}
			path := filepath.Join("testdata", r.name+"-"+itoa(width)+".txt")
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./internal/render -run TestRender_Golden -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s at %d columns changed; review and refresh with go test ./internal/render -run TestRender_Golden -update\n--- want\n%s--- got\n%s", r.name, width, want, got)
			}
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// collectIDs gathers the ids of the rows of a JSON result: the "id" of
// each object in a top-level list.
func collectIDs(data []byte, ids *[]string) {
	var v map[string]any
	json.Unmarshal(data, &v)
	for _, val := range v {
		list, _ := val.([]any)
		for _, it := range list {
			if m, ok := it.(map[string]any); ok {
				if id, ok := m["id"].(string); ok {
					*ids = append(*ids, id)
				}
			}
		}
	}
}

// TestRender_EmptyTable: a list with nothing in it shows its summary line
// on a terminal, not a box of headings around no rows (a new vault's
// review list and source list); a pipe still gets the header line.
func TestRender_EmptyTable(t *testing.T) {
	e := renderVault(t)
	for _, r := range []struct {
		op, summary string
		args        map[string]any
		render      Binding
	}{
		{"review.list", "no review items", map[string]any{"status": "deep_researched"}, Of(ReviewList)},
		{"source.list", "sources", map[string]any{"state": "missing"}, Of(SourceList)},
		{"graph.missing", "", map[string]any{"page": "Home"}, Of(GraphMissing)},
	} {
		raw, _ := json.Marshal(r.args)
		out, err := ops.Lookup(r.op).Call(context.Background(), e, raw)
		if err != nil {
			t.Fatalf("%s: %v", r.op, err)
		}
		var buf, notes bytes.Buffer
		o := New(&buf, &notes)
		o.tty, o.width = true, 80
		if err := r.render.Render(o, out); err != nil {
			t.Fatal(err)
		}
		got := buf.String() + notes.String()
		if strings.ContainsAny(got, "╭│╰") {
			t.Errorf("%s with no rows draws a table:\n%s", r.op, got)
		}
		if !strings.Contains(got, r.summary) {
			t.Errorf("%s with no rows: no %q in\n%s", r.op, r.summary, got)
		}
		buf.Reset()
		o.tty = false
		if err := r.render.Render(o, out); err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(buf.String(), "\n"); !strings.Contains(first, "\t") {
			t.Errorf("%s with no rows in a pipe: the header line is gone: %q", r.op, buf.String())
		}
	}
}
