package ops

import (
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/internal/wildgen"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
)

// wildEnv is a generated wild-conventions vault, indexed.
func wildEnv(t *testing.T) (*Env, *wildgen.Manifest) {
	t.Helper()
	v := testvault.New(t)
	m, err := wildgen.Generate(v.Root, wildgen.Options{Pages: 400, Seed: 12, NoHuge: true})
	if err != nil {
		t.Fatal(err)
	}
	return newTestEnv(t, v), m
}

// TestWild_LintMissingSources: on the wild-conventions vault lint reports
// no external citation as missing, and its missing cited files are those
// of source list --state missing, which are the generator's missing paths
// (plus those links into raw/sources/ cite).
func TestWild_LintMissingSources(t *testing.T) {
	e, m := wildEnv(t)
	l := mustCall[LintOut](t, e, opLint, obj{"category": "missing_sources", "limit": 1000})
	s := mustCall[ListSourcesOut](t, e, opListSources, obj{"state": "missing", "limit": 10000})
	if l.Counts.MissingSources != s.Total || l.Counts.MissingSources != len(l.MissingSources) {
		t.Fatalf("lint counts %d missing files, lists %d; source list --state missing %d", l.Counts.MissingSources, len(l.MissingSources), s.Total)
	}
	var got []string
	for _, x := range l.MissingSources {
		got = append(got, x.Source)
		if !strings.HasPrefix(x.Source, "raw/sources/") || strings.Contains(x.Source, "://") || slices.Contains(m.External, x.Source) {
			t.Errorf("lint reports %q as a missing file", x.Source)
		}
	}
	for i, x := range s.Sources {
		if got[i] != x.Path {
			t.Errorf("lint %q, source list %q", got[i], x.Path)
		}
	}
	for _, want := range m.Missing {
		if !slices.Contains(got, want) {
			t.Errorf("the generator's missing citation %s is not reported", want)
		}
	}
	t.Logf("%d missing cited files; %d external citations never reported", len(got), len(m.External))
}

// TestWild_Twins: in the wild vault's en/ and ru/ twins every link by
// name stays in its own folder.
func TestWild_Twins(t *testing.T) {
	e, m := wildEnv(t)
	n := 0
	err := e.Store.View(func(tx *store.Tx) error {
		for _, pg := range m.Pages {
			if !pg.Has(wildgen.Twin) {
				continue
			}
			p, err := tx.Page(tx.DocByPath(pg.Path))
			if err != nil || p == nil {
				t.Fatalf("%s: %v", pg.Path, err)
			}
			for _, l := range p.Links {
				if l.To == 0 || strings.Contains(l.Target, "/") {
					continue
				}
				q, _ := tx.Page(l.To)
				if l.Ambiguous > 1 && path.Dir(q.Path) != path.Dir(p.Path) {
					// a twin name must resolve in the page's folder when
					// one is there
					for _, other := range tx.LookupName(store.NameFile, store.Stem(q.Path)) {
						if path.Dir(other.Path) == path.Dir(p.Path) {
							t.Errorf("%s: [[%s]] → %s, but %s is in its folder", p.Path, l.Target, q.Path, other.Path)
						}
					}
				}
				if l.Ambiguous > 1 {
					n++
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no twin link was ambiguous: the test proves nothing")
	}
	t.Logf("%d ambiguous twin links checked", n)
}

// TestWild_PageScope: lint --page and graph missing --page return only
// what concerns the page, on every page of the wild vault.
func TestWild_PageScope(t *testing.T) {
	e, m := wildEnv(t)
	checked := 0
	for i, pg := range m.Pages {
		if i%7 != 0 {
			continue
		}
		data, err := os.ReadFile(e.Vault.Abs(pg.Path))
		if err != nil {
			t.Fatal(err)
		}
		parsed := markdown.Parse(pg.Path, data)
		l := mustCall[LintOut](t, e, opLint, obj{"full": true, "page": []string{pg.Path}, "limit": 1000})
		if l.Page == nil || l.Page.Path != pg.Path {
			t.Fatalf("%s: page %+v", pg.Path, l.Page)
		}
		for _, b := range l.BrokenLinks {
			if len(b.Pages) != 1 || b.Pages[0].Path != pg.Path {
				t.Errorf("%s: broken link %q from %+v", pg.Path, b.Target, b.Pages)
			}
		}
		for _, r := range append(append([]PageRef{}, l.Orphans...), l.NoOutlinks...) {
			if r.Path != pg.Path {
				t.Errorf("%s: finding on %s", pg.Path, r.Path)
			}
		}
		for _, d := range l.DuplicateTitles {
			if !slices.ContainsFunc(d.Pages, func(r PageRef) bool { return r.Path == pg.Path }) {
				t.Errorf("%s: duplicate %q without it", pg.Path, d.Title)
			}
		}
		for _, f := range l.FrontmatterErrors {
			if f.Path != pg.Path {
				t.Errorf("%s: frontmatter error of %s", pg.Path, f.Path)
			}
		}
		if (parsed.FMError != "") != (l.Counts.FrontmatterErrors == 1) {
			t.Errorf("%s: FMError %q, lint counts %d", pg.Path, parsed.FMError, l.Counts.FrontmatterErrors)
		}
		gm := mustCall[MissingOut](t, e, opMissing, obj{"page": pg.Path, "limit": 1000})
		if gm.Total != l.Counts.BrokenLinks {
			t.Errorf("%s: graph missing %d, lint broken %d", pg.Path, gm.Total, l.Counts.BrokenLinks)
		}
		checked++
	}
	t.Logf("%d pages checked", checked)
}

// TestWild_NoFileLinkDangles: links into raw/ are never missing pages on
// the wild vault; the dangling targets are the generator's unwritten ones.
func TestWild_NoFileLinkDangles(t *testing.T) {
	e, _ := wildEnv(t)
	gm := mustCall[MissingOut](t, e, opMissing, obj{"limit": 1000})
	for _, x := range gm.Targets {
		if strings.Contains(x.Target, "raw/") {
			t.Errorf("dangling %q (%d links from %s)", x.Target, x.Links, x.Pages[0].Path)
		}
	}
	t.Logf("%d dangling targets", gm.Total)
}
