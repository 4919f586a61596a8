package ops

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// TestReparse_ReadersKeepAnswering: the one-time re-parse after an upgrade
// (a store parsed by an older ParseVersion) never leaves a reader with a
// half-empty index. Between its batches (more than one: 1,000 pages a
// batch), search finds every page it found before, get_page and backlinks
// answer as before, and list_pages counts them all; the only word of it is
// the one notice.
func TestReparse_ReadersKeepAnswering(t *testing.T) {
	t.Run("parser", func(t *testing.T) { testReparseReaders(t, false) })
	// an upgrade that changes the search analyzer too: search answers
	// unavailable, saying how far the rebuild got (announced), while
	// everything else answers as before
	t.Run("parser and analyzer", func(t *testing.T) { testReparseReaders(t, true) })
}

func testReparseReaders(t *testing.T, analyzer bool) {
	v := testvault.New(t)
	const n = 2300
	for i := 0; i < n; i++ {
		testvault.Write(t, v, fmt.Sprintf("wiki/p%04d.md", i),
			fmt.Sprintf("---\ntitle: P%d\n---\nzephyrine body %d, see [[P%d]]\n", i, i, (i+1)%n))
	}
	ctx := context.Background()
	e, err := OpenEnv(ctx, v, OpenOptions{})
	must(t, err)
	t.Cleanup(func() { e.Close() })
	midway := false
	lastDocs := -1
	check := func(when string) []string {
		var problems []string
		if analyzer && midway {
			_, err := searchWiki(ctx, e, &SearchIn{Query: "zephyrine", K: 50})
			var docs, of int
			if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "being rebuilt") {
				problems = append(problems, fmt.Sprintf("%s: search: %v, want unavailable: being rebuilt", when, err))
			} else if _, e := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "(")+1:], "%d of %d", &docs, &of); e != nil || of != n || docs <= lastDocs {
				problems = append(problems, fmt.Sprintf("%s: search: %v: progress does not move on from %d", when, err, lastDocs))
			} else {
				lastDocs = docs
			}
		} else {
			s, err := searchWiki(ctx, e, &SearchIn{Query: "zephyrine", K: 50})
			if err != nil || len(s.Hits) != 50 {
				problems = append(problems, fmt.Sprintf("%s: search: %+v, %v", when, s, err))
			}
			if s, err := searchWiki(ctx, e, &SearchIn{Query: "p1234", K: 5}); err != nil || len(s.Hits) == 0 || s.Hits[0].Title != "P1234" {
				problems = append(problems, fmt.Sprintf("%s: search p1234: %+v, %v", when, s, err))
			}
		}
		l, err := listPages(ctx, e, &ListPagesIn{Limit: 1})
		if err != nil || l.Total != n {
			problems = append(problems, fmt.Sprintf("%s: list_pages total %v, %v", when, l, err))
		}
		g, err := getPage(ctx, e, &GetPageIn{Title: "P2000"})
		if err != nil || len(g.Backlinks) != 1 || len(g.Links) != 1 {
			problems = append(problems, fmt.Sprintf("%s: get_page P2000: %v", when, err))
		}
		return problems
	}
	if p := check("before"); len(p) > 0 {
		t.Fatal(p)
	}
	must(t, e.Store.Update(func(tx *store.Tx) error {
		if analyzer {
			if err := tx.SetSearchVersion("0"); err != nil {
				return err
			}
		}
		return tx.SetMeta("parse_version", []byte("1"))
	}))
	midway = true

	var mu sync.Mutex
	var problems, notes []string
	batches := 0
	e.Index.Progress = func(phase string, done, total int) {
		if phase != "reparse" || done == 0 || done == total {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		batches++
		problems = append(problems, check(fmt.Sprintf("after %d of %d re-read", done, total))...)
	}
	e.Index.Notify = func(msg string) { notes = append(notes, msg) }
	rep, err := e.Index.Scan(ctx, index.ScanOptions{})
	must(t, err)
	e.Index.Progress, e.Index.Notify = nil, nil
	midway = false
	if batches < 2 || rep.Reparsed < n {
		t.Fatalf("the re-parse was not seen midway: %d batches observed, %d re-parsed", batches, rep.Reparsed)
	}
	if len(problems) > 0 {
		t.Errorf("readers during the re-parse:\n%s", strings.Join(problems[:min(len(problems), 8)], "\n"))
	}
	if want := map[bool]int{false: 1, true: 2}[analyzer]; len(notes) != want {
		t.Errorf("notes %q, want %d (the re-parse; the search rebuild)", notes, want)
	}
	if p := check("after"); len(p) > 0 {
		t.Error(p)
	}
}
