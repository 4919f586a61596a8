package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/ops"
)

func init() {
	renderers["status"] = func(o *output, v any) error {
		s := v.(*ops.StatusOut)
		pairs := [][2]string{
			{"vault", s.Vault},
			{"pages", strconv.Itoa(s.Pages)},
			{"sources", sourcesLine(s.Sources, s.SourcesMissing)},
			{"links", fmt.Sprintf("%d (%d dangling)", s.Links, s.Dangling)},
			{"orphans", strconv.Itoa(s.Orphans)},
			{"store", fmt.Sprintf("%s, schema %d", humanBytes(s.StoreBytes), s.Schema)},
			{"last scan", orDash(s.LastScan)},
		}
		if len(s.Reviews) > 0 {
			var parts []string
			keys := make([]string, 0, len(s.Reviews))
			for k := range s.Reviews {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				parts = append(parts, fmt.Sprintf("%s %d", k, s.Reviews[k]))
			}
			pairs = append(pairs, [2]string{"reviews", strings.Join(parts, ", ")})
		}
		if s.PendingLinks+s.PendingGraph > 0 {
			pairs = append(pairs, [2]string{"pending", fmt.Sprintf("%d link resolutions, %d graph updates", s.PendingLinks, s.PendingGraph)})
		}
		if a := s.Indexing; a != nil {
			what := "updating the index"
			if a.Rebuild {
				what = "building the index"
			}
			where := a.Phase
			if a.Total > 0 {
				where = fmt.Sprintf("%s %d/%d %s", a.Phase, a.Done, a.Total, index.PhaseUnit(a.Phase))
			}
			pairs = append(pairs, [2]string{"indexing", fmt.Sprintf("%s: %s", what, where)})
		}
		pairs = append(pairs, [2]string{"version", s.Version})
		o.kv(pairs)
		return nil
	}
	renderers["reindex"] = renderReport
	renderers["source.rescan"] = renderReport
}

func renderReport(o *output, v any) error {
	r := v.(*index.Report)
	hidden := false
	o.printf("scanned %d files in %d ms: %d new, %d changed, %d deleted, %d unchanged\n",
		r.Scanned, r.DurationMS, r.NewCount, r.ChangedCount, r.DeletedCount, r.Unchanged)
	for _, l := range []struct {
		label string
		paths []string
		n     int
	}{{"new", r.New, r.NewCount}, {"changed", r.Changed, r.ChangedCount}, {"deleted", r.Deleted, r.DeletedCount}} {
		if l.n == 0 || l.n > 20 {
			hidden = hidden || l.n > 20
			continue
		}
		for _, p := range l.paths {
			o.printf("  %-8s %s\n", l.label, p)
		}
	}
	if hidden {
		o.note("lists of more than 20 paths are not printed; --json gives the first %d of each", index.ReportCap)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// sourcesLine counts sources as `source list` does: files, and cited files
// that are missing.
func sourcesLine(n, missing int) string {
	if missing == 0 {
		return strconv.Itoa(n)
	}
	return fmt.Sprintf("%d (%d cited but missing)", n, missing)
}
