package render

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// reportListed is how many paths of each list a scan report prints.
const reportListed = 20

// scanReport prints a scan's counts and up to reportListed paths of each
// list; a note says so only when a list is cut.
func scanReport(o *Output, r *index.Report) {
	o.Printf("scanned %s in %d ms: %d new, %d changed, %d deleted, %d unchanged\n",
		plural(r.Scanned, "file", "files"), r.DurationMS, r.NewCount, r.ChangedCount, r.DeletedCount, r.Unchanged)
	if r.Reparsed > 0 {
		o.Printf("re-read %s parsed by an older synapse (once, after an upgrade)\n", plural(r.Reparsed, "unchanged page", "unchanged pages"))
	}
	for _, l := range []struct {
		label string
		paths []string
		n     int
	}{{"new", r.New, r.NewCount}, {"changed", r.Changed, r.ChangedCount}, {"deleted", r.Deleted, r.DeletedCount}} {
		shown := min(len(l.paths), reportListed)
		for _, p := range l.paths[:shown] {
			o.Printf("  %-8s %s\n", l.label, p)
		}
		if shown < l.n {
			o.Note("%d of %d %s paths listed; --json gives the first %d", shown, l.n, l.label, min(l.n, index.ReportCap))
		}
	}
	for _, rf := range r.Refused {
		o.Printf("  refused  %s\n", rf.Message)
	}
}

// freshLine says what the command found of the files changed since the
// last scan (ops.Freshness) and what it did.
func freshLine(f *ops.Freshness) string {
	checked := fmt.Sprintf("%s and %s by size and mtime", plural(f.Files, "file", "files"), plural(f.Folders, "folder", "folders"))
	switch f.Mode {
	case index.CheckFolders:
		checked = fmt.Sprintf("%s by mtime, the %s modified most lately by size and mtime; above freshness.max_files, other files edited in place are not seen",
			plural(f.Folders, "folder", "folders"), plural(f.Files, "file", "files"))
	case index.CheckMonitor:
		checked = fmt.Sprintf("what the file monitor (pid %d) saw change: %s and %s", f.MonitorPID,
			plural(f.Files, "file", "files"), plural(f.Folders, "folder", "folders"))
	}
	checked = fmt.Sprintf("checked in %.1f ms: %s", float64(f.DurationUS)/1000, checked)
	if f.Monitor != "" {
		checked += "; file monitor: " + f.Monitor
	}
	if f.AnsweredBy == "monitor" {
		checked += fmt.Sprintf("; answered by the file monitor, %s so far", plural(f.MonitorAnswers, "verb", "verbs"))
	}
	n := f.New + f.Changed + f.Deleted
	what := ops.ChangeSummary(f.New, f.Changed, f.Deleted)
	switch {
	case n == 0:
		return fmt.Sprintf("none: the index matches the files (%s)", checked)
	case f.Indexed:
		return fmt.Sprintf("%s changed since the index was last updated (%s), indexed now (%s)", plural(n, "file", "files"), what, checked)
	}
	return fmt.Sprintf("%s changed since the index was last updated (%s), NOT indexed: %s (%s)", plural(n, "file", "files"), what, f.NotIndexed, checked)
}

// reviewsLine counts the review queue by status, pending first, then the
// decided ones by number, each with who decided them ("3 auto_resolved
// (2 rule, 1 user)"); statuses with no item are left out (--json has them
// all).
func reviewsLine(counts map[string]int, by map[string]map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k, n := range counts {
		if n > 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if (a == ops.StatusPending) != (b == ops.StatusPending) {
			return a == ops.StatusPending
		}
		if counts[a] != counts[b] {
			return counts[a] > counts[b]
		}
		return a < b
	})
	if len(keys) == 0 {
		return "none"
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
		if who := deciders(by[k]); who != "" {
			parts[i] += " (" + who + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// deciders counts who decided, most first ("2 rule, 1 user"); items
// decided before deciders were recorded are left out.
func deciders(by map[string]int) string {
	var names []string
	for k, n := range by {
		if k != "" && n > 0 {
			names = append(names, k)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		if by[names[i]] != by[names[j]] {
			return by[names[i]] > by[names[j]]
		}
		return names[i] < names[j]
	})
	for i, k := range names {
		names[i] = fmt.Sprintf("%d %s", by[k], k)
	}
	return strings.Join(names, ", ")
}

// journalLine describes the review journal: its size, whether the queue
// is in step with it, its last compaction and what the last replay found.
func journalLine(o *Output, j *ops.JournalStatus) string {
	line := fmt.Sprintf("%s, %s, %s", j.Path, plural(int(j.Lines), "line", "lines"), humanBytes(j.Bytes))
	if j.CompactedAt != "" {
		line += ", compacted " + lastScan(o, j.CompactedAt)
	}
	switch {
	case j.Error != "":
		line += "; NOT READ: " + j.Error
	case !j.InStep:
		line += "; changed since the queue was replayed (the next command that can write replays it)"
	}
	if p := j.Problems; p != nil {
		if p.BadLines > 0 {
			line += fmt.Sprintf("; %s skipped (not journal lines: line %s)", plural(p.BadLines, "line", "lines"), joinInts(p.BadLineNumbers))
		}
		if p.Conflicts > 0 {
			line += fmt.Sprintf("; %s decided twice, differently (the earlier stands):", plural(p.Conflicts, "item", "items"))
			for _, c := range p.ConflictList {
				line += fmt.Sprintf(" %s %s by %s, not %s by %s;", c.ID, c.Kept.Status, orDash(c.Kept.DecidedBy), c.Other.Status, orDash(c.Other.DecidedBy))
			}
			line = strings.TrimSuffix(line, ";")
		}
		if p.TornBytes > 0 {
			line += fmt.Sprintf("; an unfinished last line (%d bytes) was cut off", p.TornBytes)
		}
	}
	return line
}

// joinInts joins numbers with commas.
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// lastScan shows the time of the last scan as tables show times on a
// terminal (to the minute, UTC), in full in a pipe.
func lastScan(o *Output, ts string) string {
	if o.tty && ts != "" {
		return shortTime(ts)
	}
	return orDash(ts)
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

// storeLine is the store's size on disk, its file's length when that is
// more (bbolt grows its file sparsely), and its schema.
func storeLine(s *ops.StatusOut) string {
	size := humanBytes(s.StoreDiskBytes)
	if file := humanBytes(s.StoreBytes); file != size && s.StoreBytes > s.StoreDiskBytes {
		size += " on disk (a " + file + " sparse file)"
	}
	return fmt.Sprintf("%s, schema %d", size, s.Schema)
}

// sourcesLine counts sources as `source list` does: files, and cited files
// that are missing.
func sourcesLine(n, missing int) string {
	if missing == 0 {
		return strconv.Itoa(n)
	}
	return fmt.Sprintf("%d (%d cited but missing)", n, missing)
}

// typesLine is the most used page types, each with its count and the
// folder a new page of it goes to: "entity 87 in wiki/entities, …".
func typesLine(types []ops.TypeCount) string {
	const shown = 4
	var parts []string
	for _, t := range types[:min(len(types), shown)] {
		parts = append(parts, fmt.Sprintf("%s %d in %s", t.Type, t.Pages, t.Folder))
	}
	if len(types) > shown {
		parts = append(parts, fmt.Sprintf("%d more (status --json)", len(types)-shown))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Status renders status as key/value lines, then the files it lists.
func Status(o *Output, s *ops.StatusOut) error {
	pairs := [][2]string{
		{"vault", s.Vault},
		{"pages", strconv.Itoa(s.Pages)},
		{"sources", sourcesLine(s.Sources, s.SourcesMissing)},
		{"links", fmt.Sprintf("%d (%d dangling)", s.Links, s.Dangling)},
		{"orphans", strconv.Itoa(s.Orphans)},
		{"types", typesLine(s.Types)},
		{"store", storeLine(s)},
		{"last scan", lastScan(o, s.LastScan)},
	}
	if f := s.Freshness; f != nil {
		pairs = append(pairs, [2]string{"changes", freshLine(f)})
	}
	pairs = append(pairs, [2]string{"embeddings", embedSummary(s.Embeddings)})
	if c := s.Config; c != nil {
		pairs = append(pairs, [2]string{"config", c.Note})
	}
	if len(s.Reviews) > 0 {
		pairs = append(pairs, [2]string{"reviews", reviewsLine(s.Reviews, s.ReviewsDecidedBy)})
	}
	if j := s.ReviewJournal; j != nil {
		pairs = append(pairs, [2]string{"review journal", journalLine(o, j)})
	}
	pairs = append(pairs, [2]string{"history", historyLine(s.History)}, [2]string{"git", gitLine(s.History)})
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
	if n := len(s.ReservedFiles); n > 0 {
		pairs = append(pairs, [2]string{"left alone", plural(n, "top file synapse maintains", "top files synapse maintains") + " (below)"})
	}
	if s.RefusedCount > 0 {
		pairs = append(pairs, [2]string{"refused", fmt.Sprintf("%d files not read (named pipes, symlinks out of the vault, …)", s.RefusedCount)})
	}
	if h := s.StoreHealed; h != nil {
		pairs = append(pairs, [2]string{"store rebuilt", healLine(h)})
	}
	if s.OverCapCount > 0 {
		pairs = append(pairs, [2]string{"over cap", fmt.Sprintf("%s over a limit (indexed in part, or too big to write whole)", plural(s.OverCapCount, "page", "pages"))})
	}
	pairs = append(pairs, [2]string{"version", s.Version})
	o.kv(pairs)
	for _, r := range s.Refused {
		o.Printf("  refused  %s\n", r.Message)
	}
	for _, c := range s.OverCap {
		o.Printf("  over cap  %s\n", c.Message)
	}
	for _, r := range s.ReservedFiles {
		o.Printf("  left alone  %s: %s\n              fix: %s\n", r.Path, r.Problem, r.Fix)
	}
	return nil
}

func Reindex(o *Output, r *ops.ReindexOut) error {
	queue := "the review queue is kept"
	if q := r.Reviews; q != nil {
		queue = fmt.Sprintf("the review queue replayed from %s (%s)", vault.ReviewJournal, plural(q.Items, "item", "items"))
	}
	o.Printf("rebuilt the index from %s in %d ms: %s and %s indexed; %s\n",
		plural(r.Scanned, "file", "files"), r.DurationMS, plural(r.Pages, "page", "pages"), plural(r.Sources, "source", "sources"), queue)
	if q := r.Reviews; q != nil && q.Problems != nil && (q.Problems.BadLines > 0 || q.Problems.Conflicts > 0) {
		o.Note("%s", q.String())
	}
	for _, rf := range r.Refused {
		o.Printf("  refused  %s\n", rf.Message)
	}
	return nil
}

func SourceRescan(o *Output, r *index.Report) error {
	scanReport(o, r)
	return nil
}

// healLine says when the store was rebuilt after damage and what became
// of the review queue.
func healLine(h *store.HealRecord) string {
	line := fmt.Sprintf("%s, its file was damaged (%s); the damaged file is %s", h.At.Local().Format("2006-01-02 15:04"), h.Reason, h.MovedTo)
	if h.QueueLost {
		return line + fmt.Sprintf("; REVIEW ITEMS LOST: %d restored (%s)", h.ReviewsRestored, h.QueueProblem)
	}
	if h.FromJournal {
		return line + fmt.Sprintf("; review queue replayed from %s (%d items)", vault.ReviewJournal, h.ReviewsRestored)
	}
	return line + fmt.Sprintf("; review queue kept (%d items)", h.ReviewsRestored)
}
