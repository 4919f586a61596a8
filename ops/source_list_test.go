package ops

import (
	"context"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/internal/wildgen"
	"github.com/synapse-wiki/synapse/vault"
)

// t0 is the base of the pinned file times: mtimes, not the wall clock,
// decide the source states, so every test sets them.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// writeAt writes a vault file and sets its modification time.
func writeAt(t testing.TB, v *vault.Vault, rel, content string, mtime time.Time) {
	t.Helper()
	testvault.Write(t, v, rel, content)
	must(t, os.Chtimes(v.Abs(rel), mtime, mtime))
}

func openTestEnv(t testing.TB, v *vault.Vault) *Env {
	t.Helper()
	e, err := OpenEnv(context.Background(), v, OpenOptions{NoInitialScan: true})
	must(t, err)
	e.Now = func() time.Time { return t0.Add(100 * time.Hour) }
	e.Index.Now = e.Now
	t.Cleanup(func() { e.Close() })
	rescanT(t, e)
	return e
}

func rescanT(t testing.TB, e *Env) {
	t.Helper()
	if _, err := callJSON(t, opRescan, e, nil); err != nil {
		t.Fatal(err)
	}
}

func listT(t testing.TB, e *Env, in map[string]any) *ListSourcesOut {
	t.Helper()
	out, err := callJSON(t, opListSources, e, in)
	must(t, err)
	return out.(*ListSourcesOut)
}

// states returns path → state of a listing.
func states(l *ListSourcesOut) map[string]string {
	m := map[string]string{}
	for _, s := range l.Sources {
		m[s.Path] = s.State
	}
	return m
}

// TestSource_ListLifecycle: a source goes new → ingested → changed →
// ingested → missing, each step seen by source list.
func TestSource_ListLifecycle(t *testing.T) {
	v := testvault.New(t)
	src := "raw/sources/article.md"
	writeAt(t, v, src, "# Article\nfirst version\n", t0)
	e := openTestEnv(t, v)

	step := func(name, wantState string, wantCounts SourceCounts) SourceItem {
		t.Helper()
		l := listT(t, e, nil)
		if l.Counts != wantCounts {
			t.Errorf("%s: counts %+v, want %+v", name, l.Counts, wantCounts)
		}
		if len(l.Sources) != 1 || l.Sources[0].Path != src || l.Sources[0].State != wantState {
			t.Fatalf("%s: got %+v, want %s %s", name, l.Sources, src, wantState)
		}
		// the state filter shows it, and only it
		f := listT(t, e, map[string]any{"state": wantState})
		if f.Total != 1 || f.Sources[0].Path != src {
			t.Errorf("%s: --state %s gave %+v", name, wantState, f.Sources)
		}
		return l.Sources[0]
	}

	s := step("new", StateNew, SourceCounts{New: 1})
	if s.SizeBytes == nil || *s.SizeBytes != 24 || len(s.SHA256) != 64 || s.LastChanged != "2025-03-01T12:00:00Z" ||
		s.CitedByCount != 0 || len(s.CitedBy) != 0 || s.LastCited != "" {
		t.Errorf("new row: %+v", s)
	}

	// a page citing it is written after it
	page := "wiki/sources/article-summary.md"
	writeAt(t, v, page, "---\ntitle: Article summary\nsources:\n  - raw/sources/article.md\n---\nSummary.\n", t0.Add(time.Hour))
	rescanT(t, e)
	s = step("ingested", StateIngested, SourceCounts{Ingested: 1})
	if s.CitedByCount != 1 || s.CitedBy[0].Title != "Article summary" || s.CitedBy[0].Path != page || s.LastCited != "2025-03-01T13:00:00Z" {
		t.Errorf("ingested row: %+v", s)
	}

	// its bytes change after the citing write
	writeAt(t, v, src, "# Article\nsecond version\n", t0.Add(2*time.Hour))
	rescanT(t, e)
	s = step("changed", StateChanged, SourceCounts{Changed: 1})
	// the bytes changed after the previous read (at the pinned "now",
	// t0+100h), whatever the older mtime says
	if s.LastChanged != "2025-03-05T16:00:00Z" {
		t.Errorf("changed row: %+v", s)
	}

	// touching it without changing its bytes is not a change
	writeAt(t, v, page, "---\ntitle: Article summary\nsources: [article.md]\n---\nSummary, recompiled.\n", t0.Add(3*time.Hour))
	rescanT(t, e)
	step("recompiled", StateIngested, SourceCounts{Ingested: 1})
	writeAt(t, v, src, "# Article\nsecond version\n", t0.Add(4*time.Hour))
	rescanT(t, e)
	step("touched", StateIngested, SourceCounts{Ingested: 1})

	// deleted while a page still cites it
	must(t, os.Remove(v.Abs(src)))
	rescanT(t, e)
	s = step("missing", StateMissing, SourceCounts{Missing: 1})
	if s.SizeBytes != nil || s.SHA256 != "" || s.CitedByCount != 1 {
		t.Errorf("missing row: %+v", s)
	}

	// and no longer listed once no page cites it
	must(t, os.Remove(v.Abs(page)))
	rescanT(t, e)
	if l := listT(t, e, nil); l.Total != 0 || len(l.Sources) != 0 || l.Counts != (SourceCounts{}) {
		t.Errorf("after both are gone: %+v", l)
	}
}

func TestSource_ListFilters(t *testing.T) {
	v := testvault.New(t)
	for i, name := range []string{"a-new.md", "b-ingested.md", "C-Mixed.md", "d-changed.md", "e-new.txt", "sub/f-new.md"} {
		writeAt(t, v, "raw/sources/"+name, "source "+name+"\n", t0.Add(time.Duration(i)*time.Minute))
	}
	writeAt(t, v, "wiki/concepts/one.md", `---
title: One
sources:
  - b-ingested.md
  - raw/sources/c-mixed.md
  - raw/sources/Gone.md
  - sources/d-changed.md
  - ../../etc/passwd
---
Body.
`, t0.Add(time.Hour))
	// a wikilink in sources is a link, and the other entries
	// are external citations, free text and a bare name: none is a file
	writeAt(t, v, "wiki/two.md", "---\ntitle: Two\nsources: [\"[[gone.md]]\", \"web:https://x.org/a\", \"kb:gone.md\", \"Smith (2020), Gone\", gone, raw/sources/Gone.md]\n---\nBody.\n", t0.Add(time.Hour))
	writeAt(t, v, "raw/sources/d-changed.md", "changed\n", t0.Add(2*time.Hour))
	e := openTestEnv(t, v)

	all := listT(t, e, nil)
	want := map[string]string{
		"raw/sources/C-Mixed.md":    StateIngested, // cited as c-mixed.md: case-insensitive
		"raw/sources/Gone.md":       StateMissing,  // the spelling of a citing page
		"raw/sources/a-new.md":      StateNew,
		"raw/sources/b-ingested.md": StateIngested,
		"raw/sources/d-changed.md":  StateChanged,
		"raw/sources/e-new.txt":     StateNew,
		"raw/sources/sub/f-new.md":  StateNew,
	}
	if got := states(all); !reflect.DeepEqual(got, want) {
		t.Errorf("states:\n got %v\nwant %v", got, want)
	}
	if all.Counts != (SourceCounts{New: 3, Changed: 1, Missing: 1, Ingested: 2}) || all.Total != 7 {
		t.Errorf("counts %+v total %d", all.Counts, all.Total)
	}
	var paths []string
	for _, s := range all.Sources {
		paths = append(paths, s.Path)
		if s.Path == "raw/sources/Gone.md" && s.CitedByCount != 2 {
			t.Errorf("Gone.md cited by %d pages, want 2", s.CitedByCount)
		}
	}
	if strings.Join(paths, " ") != "raw/sources/C-Mixed.md raw/sources/Gone.md raw/sources/a-new.md raw/sources/b-ingested.md raw/sources/d-changed.md raw/sources/e-new.txt raw/sources/sub/f-new.md" {
		t.Errorf("not in path order: %v", paths)
	}

	work := listT(t, e, map[string]any{"state": "new, Changed"})
	if work.Total != 4 || work.Counts != all.Counts {
		t.Errorf("new,changed: total %d counts %+v", work.Total, work.Counts)
	}
	page := listT(t, e, map[string]any{"state": "new,changed", "limit": 2, "offset": 1})
	if page.Total != 4 || len(page.Sources) != 2 || page.Sources[0].Path != "raw/sources/d-changed.md" {
		t.Errorf("limit/offset: %+v", page)
	}
	if l := listT(t, e, map[string]any{"state": "all", "offset": 100}); l.Total != 7 || len(l.Sources) != 0 {
		t.Errorf("offset past the end: %+v", l)
	}

	for _, bad := range []string{"bogus", "new,old", "pending"} {
		_, err := callJSON(t, opListSources, e, map[string]any{"state": bad})
		if errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), "new, changed, missing, ingested") {
			t.Errorf("state %q: %v, want invalid listing the states", bad, err)
		}
	}
	if _, err := callJSON(t, opListSources, e, map[string]any{"status": "new"}); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("unknown parameter: %v", err)
	}
}

// wildVault generates a wild-conventions vault (internal/wildgen) and
// opens an indexed Env on it.
func wildVault(t testing.TB, o wildgen.Options) (*Env, *wildgen.Manifest) {
	t.Helper()
	v := testvault.New(t)
	m, err := wildgen.Generate(v.Root, o)
	must(t, err)
	e, err := OpenEnv(context.Background(), v, OpenOptions{NoInitialScan: true})
	must(t, err)
	t.Cleanup(func() { e.Close() })
	rescanT(t, e)
	return e, m
}

// TestSource_ListWildCitations: on a vault citing URLs, doi:, web:, kb:
// and guide: ids, free text, bare slugs, links and stray-colon mappings,
// the missing sources are exactly the cited raw/sources/ paths that do
// not exist; no external citation is ever one, and status counts the
// sources as source list does.
func TestSource_ListWildCitations(t *testing.T) {
	e, m := wildVault(t, wildgen.Options{Seed: 3, NoHuge: true})
	all := listT(t, e, map[string]any{"limit": 10000})
	var missing []string
	for _, s := range all.Sources {
		if s.State == StateMissing {
			missing = append(missing, s.Path)
		}
		for _, x := range m.External {
			if strings.Contains(s.Path, x) || strings.Contains(x, strings.TrimPrefix(s.Path, "raw/sources/")) {
				t.Errorf("external citation %q listed as source %s (%s)", x, s.Path, s.State)
			}
		}
	}
	sort.Strings(missing)
	if strings.Join(missing, "\n") != strings.Join(m.Missing, "\n") {
		t.Errorf("missing sources:\n%s\nwant:\n%s", strings.Join(missing, "\n"), strings.Join(m.Missing, "\n"))
	}
	if all.Counts.Missing != len(m.Missing) || all.Total != len(m.Sources)+len(m.Missing) {
		t.Errorf("counts %+v total %d; want %d missing of %d", all.Counts, all.Total, len(m.Missing), len(m.Sources)+len(m.Missing))
	}
	st, err := status(context.Background(), e, &StatusIn{})
	must(t, err)
	if st.Sources != all.Total || st.SourcesMissing != all.Counts.Missing {
		t.Errorf("status counts %d sources (%d missing); source list %d (%d missing)", st.Sources, st.SourcesMissing, all.Total, all.Counts.Missing)
	}
}
