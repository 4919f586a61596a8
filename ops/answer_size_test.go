package ops

import (
	"fmt"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestAnswerSize_DefaultsFit: the default answers of the list verbs an
// agent calls during an ingest stay within 16 KiB on a vault where every
// source is cited by many pages and every dangling link has many linking
// pages; a limit asked for is served whole; totals count everything.
func TestAnswerSize_DefaultsFit(t *testing.T) {
	v := testvault.New(t)
	long := strings.Repeat("a rather long title word ", 4)
	for s := range 40 {
		testvault.Write(t, v, fmt.Sprintf("raw/sources/source-%02d.md", s), "text\n")
	}
	for p := range 60 {
		var cites, links []string
		for s := range 40 {
			cites = append(cites, fmt.Sprintf("raw/sources/source-%02d.md", s))
			links = append(links, fmt.Sprintf("[[nowhere %d]]", s))
		}
		testvault.Write(t, v, fmt.Sprintf("wiki/page-%02d.md", p), fmt.Sprintf("---\ntitle: %s %d\nsources: [%s]\n---\n%s\n", long, p, strings.Join(cites, ", "), strings.Join(links, " ")))
	}
	e := newTestEnv(t, v)
	size := func(v any) int {
		b, err := MarshalJSON(v)
		must(t, err)
		return len(b)
	}
	src := mustCall[ListSourcesOut](t, e, opListSources, obj{})
	if n := size(src); n > MaxListBytes || !src.Cut || src.Total != 40 || len(src.Sources) == 0 {
		t.Errorf("source list: %d bytes, cut %v, %d of %d", n, src.Cut, len(src.Sources), src.Total)
	}
	if all := mustCall[ListSourcesOut](t, e, opListSources, obj{"limit": 40}); len(all.Sources) != 40 || all.Cut {
		t.Errorf("source list --limit 40: %d sources, cut %v", len(all.Sources), all.Cut)
	}
	miss := mustCall[MissingOut](t, e, opMissing, obj{})
	if n := size(miss); n > MaxListBytes || miss.Total != 40 || !miss.Cut || len(miss.Targets) == 0 ||
		len(miss.Targets[0].Pages) != MaxMissingPages || miss.Targets[0].PagesTotal != 60 {
		t.Errorf("graph missing: %d bytes, %d of %d targets, first with %d of %d pages", n, len(miss.Targets), miss.Total, len(miss.Targets[0].Pages), miss.Targets[0].PagesTotal)
	}
	for _, params := range []obj{{}, {"category": LintBrokenLinks}} {
		l := mustCall[LintOut](t, e, opLint, params)
		if n := size(l); n > MaxListBytes || l.Counts.BrokenLinks != 40 || l.BrokenLinks[0].PagesTotal != 60 {
			t.Errorf("lint %v: %d bytes, %d broken, first linked from %d pages", params, n, l.Counts.BrokenLinks, l.BrokenLinks[0].PagesTotal)
		}
	}
	if all := mustCall[MissingOut](t, e, opMissing, obj{"limit": 40}); len(all.Targets) != 40 || all.Cut {
		t.Errorf("graph missing --limit 40: %d targets, cut %v", len(all.Targets), all.Cut)
	}
	if full := mustCall[LintOut](t, e, opLint, obj{"full": true}); len(full.BrokenLinks) != 40 || full.Cut {
		t.Errorf("lint --full: %d broken links listed, cut %v", len(full.BrokenLinks), full.Cut)
	}
}
