package ops

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/storecheck"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// linkMap lists, for every page, where each of its links leads (a page's
// path, a file, or nothing), in order: with renamed paths mapped to their
// new ones, a move leaves it unchanged.
func linkMap(t *testing.T, e *Env, renamed map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := e.Store.View(func(tx *store.Tx) error {
		return tx.EachPage(func(p *store.PageRec) bool {
			if p.Reserved {
				return true
			}
			var b strings.Builder
			for _, l := range p.Links {
				to := l.File
				if q, _ := tx.Page(l.To); q != nil {
					to = q.Path
				}
				if n, ok := renamed[to]; ok {
					to = n
				}
				fmt.Fprintf(&b, "%d:%s;", l.Line, to)
			}
			path := p.Path
			if n, ok := renamed[path]; ok {
				path = n
			}
			out[path] = b.String()
			return true
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// backlinkCount is the pages and links that reach the page at p.
func backlinkCount(t *testing.T, e *Env, p string) (pages, links int) {
	t.Helper()
	_ = e.Store.View(func(tx *store.Tx) error {
		for _, b := range tx.Backlinks(tx.DocByPath(p)) {
			pages++
			links += b.Count
		}
		return nil
	})
	return pages, links
}

// TestMove_ObsidianHelp moves pages of the Obsidian Help vault with many
// backlinks (Settings: 64 pages, 147 links, by file name, with headings
// and labels): every link of every page leads where it led (the moved
// page's at its new path), the backlink counts are unchanged, and the
// index the move leaves is the one a reindex builds from the files.
func TestMove_ObsidianHelp(t *testing.T) {
	v := testvault.WithCorpus(t)
	e, _ := openEnv(t, v)
	ctx := context.Background()
	for _, c := range []struct {
		in      MovePageIn
		from    string
		to      string
		changed int
	}{
		{MovePageIn{Title: "Settings", To: "Preferences"}, "wiki/User interface/Settings.md", "wiki/User interface/Preferences.md", 64},
		{MovePageIn{Title: "Command palette", Path: "wiki/Reference/Command palette.md"}, "wiki/Plugins/Command palette.md", "wiki/Reference/Command palette.md", 0},
		{MovePageIn{Title: "Introduction to Obsidian Sync", Path: "wiki/Sync/Sync intro.md"}, "wiki/Obsidian Sync/Introduction to Obsidian Sync.md", "wiki/Sync/Sync intro.md", 33},
	} {
		pages, links := backlinkCount(t, e, c.from)
		if pages < 20 {
			t.Fatalf("%s has %d backlinks; the test wants a page with 20 or more", c.from, pages)
		}
		before := linkMap(t, e, map[string]string{c.from: c.to})
		out := move(t, e, &c.in)
		if out.Path != c.to || len(out.Changed) != c.changed {
			t.Errorf("%s: moved to %s, %d pages changed (want %s, %d)", c.from, out.Path, len(out.Changed), c.to, c.changed)
		}
		if p, l := backlinkCount(t, e, c.to); p != pages || l != links {
			t.Errorf("%s: %d pages and %d links reach it after the move, %d and %d before", c.to, p, l, pages, links)
		}
		after := linkMap(t, e, nil)
		for p, want := range before {
			if after[p] != want {
				t.Errorf("%s: links lead elsewhere after the move:\nbefore %s\nafter  %s", p, want, after[p])
			}
		}
		if len(after) != len(before) {
			t.Errorf("%d pages after, %d before", len(after), len(before))
		}
	}
	moved, err := storecheck.Fingerprint(e.Store)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Index.Scan(ctx, index.ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	rebuilt, _ := storecheck.Fingerprint(e.Store)
	if moved != rebuilt {
		d := storecheck.DiffLines(rebuilt, moved)
		t.Fatalf("the index after the moves differs from a reindex (%d lines):\n%s", len(d), strings.Join(d[:min(len(d), 20)], "\n"))
	}
}
