package render

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/history"
	"github.com/synapse-wiki/synapse/ops"
)

// revTime shows a revision's time as tables show times: to the minute,
// UTC, on a terminal; in full in a pipe.
func revTime(o *Output, t time.Time) string {
	if o.tty {
		return t.UTC().Format("2006-01-02 15:04") + " UTC"
	}
	return t.UTC().Format(time.RFC3339)
}

// revWhat says what made a revision: "write", "restore of 3", "move from
// wiki/a.md", "edit (file)".
func revWhat(r history.Revision) string {
	what := r.Op
	switch {
	case r.From > 0:
		what += " of " + strconv.Itoa(r.From)
	case r.MovedFrom != "":
		what += " from " + r.MovedFrom
	}
	if r.Origin != history.OriginSynapse {
		what += " (" + r.Origin + ")"
	}
	return what
}

func PageHistory(o *Output, h *ops.PageHistoryOut) error {
	o.Printf("%s  %s\n", o.st.Title.Render(h.Title), o.st.Dim.Render(h.Path+" · id "+h.ID))
	rows := make([][]string, 0, len(h.Revisions))
	for _, r := range h.Revisions {
		mark := ""
		if r.Rev == h.Current {
			mark = "← now"
		}
		rows = append(rows, []string{strconv.Itoa(r.Rev), revTime(o, r.Time), revWhat(r), humanBytes(r.Size), r.SHA256[:12], mark})
	}
	o.table([]col{numCol("REV"), fixedCol("TIME"), flexCol("WHAT"), numCol("SIZE"), fixedCol("SHA256"), fixedCol("")}, rows)
	switch {
	case h.Total == 0:
		o.Note("no history yet: the page has not been written through synapse since it was made")
	case h.Current == 0:
		o.Note("the file has changed since revision %d, outside synapse; the next write or scan records it", h.Revisions[0].Rev)
	}
	if len(h.Revisions) < h.Total {
		o.Note("%d of %s shown (use --limit and --offset for more)", len(h.Revisions), plural(h.Total, "revision", "revisions"))
	}
	for _, p := range h.Problems {
		o.Note("%s", p)
	}
	return nil
}

func PageDiff(o *Output, d *ops.PageDiffOut) error {
	if d.Diff == "" {
		from := 0
		if d.From != nil {
			from = d.From.Rev
		}
		o.Note("revisions %d and %d of %s hold the same bytes", from, d.To.Rev, d.Title)
		return nil
	}
	for _, line := range strings.SplitAfter(d.Diff, "\n") {
		if line == "" {
			continue
		}
		switch {
		case !o.tty:
			o.Printf("%s", line)
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			o.Printf("%s\n", o.st.Title.Render(strings.TrimSuffix(line, "\n")))
		case strings.HasPrefix(line, "@@"):
			o.Printf("%s\n", o.st.Accent.Render(strings.TrimSuffix(line, "\n")))
		case strings.HasPrefix(line, "+"):
			o.Printf("%s\n", o.st.OK.Render(strings.TrimSuffix(line, "\n")))
		case strings.HasPrefix(line, "-"):
			o.Printf("%s\n", o.st.Err.Render(strings.TrimSuffix(line, "\n")))
		default:
			o.Printf("%s", line)
		}
	}
	if d.Truncated {
		o.Note("the diff is cut at %d KiB; compare revisions closer together (--rev, --to)", ops.MaxDiffBytes>>10)
	}
	return nil
}

func PageRestore(o *Output, r *ops.RestorePageOut) error {
	if err := PageWrite(o, &r.WritePageOut); err != nil {
		return err
	}
	if r.Unchanged {
		o.Note("the page already holds revision %d's bytes: nothing written", r.RestoredFrom)
	} else {
		o.Note("revision %d written back as revision %d (synapse page history shows both; restoring the one before undoes it)", r.RestoredFrom, r.Revision)
	}
	return nil
}

func Recent(o *Output, r *ops.RecentOut) error {
	rows := make([][]string, 0, len(r.Items))
	for _, it := range r.Items {
		what := it.Action
		detail := it.Path
		switch {
		case it.Kind == "review":
			what = "review " + it.Action
			detail = it.Type + " · " + it.ID
			switch {
			case it.Action == "filed" && it.Count > 1:
				what = fmt.Sprintf("review filed %d", it.Count)
				detail = strings.TrimPrefix(it.Type+" · by "+it.Origin, " · ")
			case it.Action == "filed":
				detail += " · by " + it.Origin
			case it.Action == "resolved":
				what += " by " + it.DecidedBy // marked resolved by hand
			case it.DecidedBy != "":
				detail += " · by " + it.DecidedBy
			}
		case it.From > 0:
			detail = fmt.Sprintf("%s · rev %d, restoring rev %d", it.Path, it.Rev, it.From)
		case it.MovedFrom != "":
			detail = fmt.Sprintf("%s · rev %d (from %s)", it.Path, it.Rev, it.MovedFrom)
		case it.MoveOf != "":
			detail = fmt.Sprintf("%s · rev %d (move of %s)", it.Path, it.Rev, it.MoveOf)
		case it.Rev > 0:
			detail = fmt.Sprintf("%s · rev %d", it.Path, it.Rev)
		}
		rows = append(rows, []string{revTime(o, it.Time), what, it.Title, detail, it.Note})
	}
	cols := []col{fixedCol("TIME"), fixedCol("WHAT"), flexCol("TITLE"), pathCol("DETAIL")}
	if slices.ContainsFunc(r.Items, func(it ops.RecentItem) bool { return it.Note != "" }) {
		cols = append(cols, flexCol("NOTE")) // the writers' notes, when there are any
	} else {
		for i := range rows {
			rows[i] = rows[i][:4]
		}
	}
	o.table(cols, rows)
	switch {
	case r.Note != "":
		o.Note("%s", r.Note)
	case len(r.Items) == 0 && r.Since != "":
		o.Note("nothing since %s", r.Since)
	case len(r.Items) == 0:
		o.Note("nothing recorded yet: pages written through synapse and review decisions show here")
	case r.More:
		o.Note("older activity left out (--since, --limit)")
	}
	return nil
}

// historyLine is status's line for the page history.
func historyLine(h *ops.HistoryStatus) string {
	if h == nil {
		return "-"
	}
	if h.Problem != "" {
		return "unreadable: " + h.Problem
	}
	s := fmt.Sprintf("%s of %s, %s on disk (bound %s)", plural(h.Revisions, "revision", "revisions"),
		plural(h.Pages, "page", "pages"), humanBytes(h.DiskBytes), humanBytes(h.Limits.TotalBytes))
	if h.PrunedRevisions > 0 {
		s += fmt.Sprintf("; %d pruned (%s), last %s", h.PrunedRevisions, humanBytes(h.PrunedBytes), shortTime(h.LastPruned))
	}
	return s
}

// gitLine is status's line for the git mode.
func gitLine(h *ops.HistoryStatus) string {
	if h == nil || h.Git != "on" {
		return "off (history.git in .synapse/config.yaml commits each write)"
	}
	if h.GitNote != "" {
		return "on, but " + h.GitNote
	}
	return "on: each write commits the files it changed"
}
