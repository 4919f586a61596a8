package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

// logTail returns what was appended to log.md since before.
func logTail(t *testing.T, v *vault.Vault, before string) string {
	t.Helper()
	got := readFile(t, v, vault.LogPage)
	if !strings.HasPrefix(got, before) {
		t.Fatalf("log.md was not appended to:\n%s", got)
	}
	return got[len(before):]
}

// TestLog_EntriesSayWhatHappened: each entry names the kind of change
// (created, updated, or the kind the writing operation gives), the sources
// the write cites (those the page gains, and those named explicitly), and
// the writer's note; review decisions are logged, one entry per decision
// and one per bulk decision.
func TestLog_EntriesSayWhatHappened(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "raw/sources/a.md", "a\n")
	testvault.Write(t, v, "raw/sources/b.md", "b\n")
	e, _ := openEnv(t, v)
	steps := []struct {
		name string
		in   *WritePageIn
		want string
	}{
		{"create with a source and a note", &WritePageIn{Title: "Finch", Content: "One.\n", Sources: []string{"a.md", "kb:note-1"}, Log: "compiled from the field notes"},
			"\n## [2026-05-01] created | Finch\n- sources: raw/sources/a.md, kb:note-1\n- note: compiled from the field notes\n"},
		{"an edit cites nothing new", &WritePageIn{Title: "Finch", Content: "Two.\n"},
			"\n## [2026-05-01] updated | Finch\n"},
		{"an edit adding a source lists that one", &WritePageIn{Title: "Finch", Content: "Three.\n", Frontmatter: map[string]any{"sources": []any{"raw/sources/a.md", "kb:note-1", "b.md"}}},
			"\n## [2026-05-01] updated | Finch\n- sources: raw/sources/b.md\n"},
		{"a source named again explicitly is cited", &WritePageIn{Title: "Finch", Content: "Four.\n", Sources: []string{"a.md"}},
			"\n## [2026-05-01] updated | Finch\n- sources: raw/sources/a.md\n"},
		{"the writing operation's kind", &WritePageIn{Title: "Finch", Content: "Three.\n", Kind: LogRestored},
			"\n## [2026-05-01] restored | Finch\n"},
	}
	for _, s := range steps {
		before := readFile(t, v, vault.LogPage)
		write(t, e, s.in)
		if got := logTail(t, v, before); got != s.want {
			t.Errorf("%s: appended %q, want %q", s.name, got, s.want)
		}
	}
	// an unchanged write logs nothing
	before := readFile(t, v, vault.LogPage)
	if out := write(t, e, &WritePageIn{Title: "Finch", Content: "Three.\n", Log: "again"}); !out.Unchanged {
		t.Fatal("the write changed the page")
	}
	if got := logTail(t, v, before); got != "" {
		t.Errorf("an unchanged write logged %q", got)
	}
	// the note is one line
	_, err := WritePage(context.Background(), e, &WritePageIn{Title: "Finch", Content: "Five.\n", Log: "a\nb"})
	wantCode(t, err, errs.Invalid, "one line")

	// review decisions
	a := add(t, e, "suggestion", "Split the page")
	b := add(t, e, "suggestion", "Merge the pages")
	c := add(t, e, "confirm", "Check the dates")
	before = readFile(t, v, vault.LogPage)
	mustCall[ResolveReviewOut](t, e, opResolveReview, obj{"id": a.ID, "action": "dismiss"})
	if got, want := logTail(t, v, before), "\n## [2026-05-01] review dismissed | Split the page\n- item: "+a.ID+" (suggestion)\n- resolution: dismissed\n"; got != want {
		t.Errorf("a decision logged %q, want %q", got, want)
	}
	before = readFile(t, v, vault.LogPage)
	mustCall[BulkResolveOut](t, e, opBulkResolve, obj{"ids": []string{b.ID, c.ID, a.ID}, "action": "skip"})
	if got, want := logTail(t, v, before), "\n## [2026-05-01] review skipped | 2 items\n- items: Merge the pages ("+b.ID+"), Check the dates ("+c.ID+")\n"; got != want {
		t.Errorf("a bulk decision logged %q, want %q", got, want)
	}
}
