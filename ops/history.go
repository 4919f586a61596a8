package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/history"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
)

// Page history, diff and restore (docs/history.md): the read side of the
// history the write path records (history_write.go), and restore, which
// writes a revision back through that write path.

// PageHistoryIn is the input of page history.
type PageHistoryIn struct {
	Title  string `json:"title" arg:"0" words:"true" required:"true" desc:"Page title, alias, file name, path or id; resolved like a [[link]]"`
	Limit  int    `json:"limit,omitempty" default:"20" min:"1" max:"100" desc:"Revisions to list, newest first"`
	Offset int    `json:"offset,omitempty" min:"0" desc:"Revisions to skip (newest first)"`
}

// PageHistoryOut is a page's history, newest revision first.
type PageHistoryOut struct {
	PageRef
	// SHA256 is the sha256 of the page's file now; Current is the
	// revision it is (0 when the file changed outside synapse after the
	// newest revision and that change is not recorded yet: the next write
	// or scan records it).
	SHA256  string `json:"sha256"`
	Current int    `json:"current"`
	// Total counts the revisions kept; Revisions holds those of this page
	// of results.
	Total     int                `json:"total"`
	Revisions []history.Revision `json:"revisions"`
	// Bytes is what the page's history takes on disk.
	Bytes int64 `json:"bytes"`
	// Problems are what could not be read of the history (damage).
	Problems []string `json:"problems,omitempty"`
}

var opPageHistory = register(Op{
	Name: "page.history", Summary: "List a page's revisions, newest first: every version synapse wrote and the edits it saw made outside it",
	CLI: "page history", MCP: "get_page_history", REST: []Route{{Method: "GET", Path: "/pages/{title}/history"}},
	Access: Read, Limits: "limit 1..100 (default 20)",
	Title: "List a page's revisions",
	Examples: []Example{
		{`synapse page history "Spaced repetition"`, "the newest 20 revisions: number, time, what made it, size"},
		{`synapse page history "Spaced repetition" --json`, "with each revision's sha256 and which one the file is now (current)"},
	},
	Exits: map[int]string{3: "not found: no page answers to TITLE"},
}, pageHistory)

var opPageDiff = register(Op{
	Name: "page.diff", Summary: "Show what a revision of a page changed, as a unified diff (default: the last write)",
	CLI: "page diff", MCP: "get_page_diff", REST: []Route{{Method: "GET", Path: "/pages/{title}/diff"}},
	Access: Read, Limits: "the diff is at most 64 KiB (truncated says so)",
	Title: "Show what a page revision changed",
	Examples: []Example{
		{`synapse page diff "Spaced repetition"`, "what the newest revision changed from the one before it"},
		{`synapse page diff "Spaced repetition" --rev 3`, "what revision 3 changed"},
		{`synapse page diff "Spaced repetition" --rev 3 --to 7`, "everything between revisions 3 and 7"},
	},
	Exits: map[int]string{3: "not found: no page answers to TITLE, or it has no such revision (or no history yet)"},
}, pageDiff)

var opPageRestore = register(Op{
	Name: "page.restore", Summary: "Write an earlier revision of a page back, byte for byte, as a new revision (undone the same way)",
	CLI: "page restore", MCP: "restore_page", REST: []Route{{Method: "POST", Path: "/pages/{title}/restore", Body: "*"}},
	Access: Write, Idempotent: true, // the same revision again: unchanged
	Title: "Restore a page revision",
	Examples: []Example{
		{`synapse page restore "Spaced repetition" --rev 3`, "put revision 3 back (page history lists the revisions)"},
		{`synapse page restore "Spaced repetition" --rev 3 --if-match SHA256`, "only if the page is still what you read (exit 4 otherwise)"},
	},
	Exits: map[int]string{
		3: "not found: no page answers to TITLE, or it has no such revision",
		4: "conflict: --if-match is stale, or the file changed while it was written",
	},
}, restorePage)

// historyPage resolves title to a page and reads its file's sha256 and
// its history.
func historyPage(ctx context.Context, e *Env, title string) (*store.PageRec, string, *history.Page, error) {
	var rec *store.PageRec
	err := e.Store.View(func(tx *store.Tx) error {
		var err error
		rec, err = resolvePage(tx, title)
		return err
	})
	if err != nil {
		return nil, "", nil, err
	}
	if rec.Reserved {
		return nil, "", nil, errs.E(errs.Invalid, "%q names %s, which has no page history (synapse keeps the history of pages it writes)", title, rec.Path)
	}
	sum := ""
	data, _, err := e.files().ReadFile(ctx, rec.Path, index.MaxPageBytes)
	switch {
	case err == nil:
		s := sha256.Sum256(data)
		sum = hex.EncodeToString(s[:])
	case errors.Is(err, fs.ErrNotExist):
	default:
		return nil, "", nil, fileError(err, "page %q cannot be read: %v", rec.Title, err)
	}
	p, err := e.History.Read(rec.ID)
	if err != nil {
		return nil, "", nil, errs.Wrap(errs.Internal, err, "read the history of %q: %v", rec.Title, err)
	}
	return rec, sum, p, nil
}

func pageHistory(ctx context.Context, e *Env, in *PageHistoryIn) (*PageHistoryOut, error) {
	rec, sum, p, err := historyPage(ctx, e, in.Title)
	if err != nil {
		return nil, err
	}
	revs := p.Revisions()
	out := &PageHistoryOut{PageRef: refOf(rec), SHA256: sum, Total: len(revs), Bytes: p.Bytes(),
		Revisions: []history.Revision{}, Problems: p.Problems}
	for _, r := range revs {
		if r.SHA256 == sum {
			out.Current = r.Rev
			break
		}
	}
	if in.Offset < len(revs) {
		out.Revisions = revs[in.Offset:min(len(revs), in.Offset+max(in.Limit, 1))]
	}
	return out, nil
}

// PageDiffIn is the input of page diff.
type PageDiffIn struct {
	Title string `json:"title" arg:"0" words:"true" required:"true" desc:"Page title, alias, file name, path or id; resolved like a [[link]]"`
	Rev   int    `json:"rev,omitempty" min:"0" desc:"The revision to show (default: the newest), compared with the one before it"`
	To    int    `json:"to,omitempty" min:"0" desc:"Compare rev with this revision instead (the diff goes from rev to this one)"`
}

// PageDiffOut is a unified diff between two revisions of a page.
type PageDiffOut struct {
	PageRef
	// From is the older side (nil when To is the page's first revision:
	// the diff adds the whole page), To the newer.
	From *history.Revision `json:"from"`
	To   history.Revision  `json:"to"`
	// Diff is the unified diff (3 lines of context), empty when the two
	// revisions hold the same bytes; at most MaxDiffBytes (Truncated).
	Diff      string `json:"diff"`
	Truncated bool   `json:"truncated,omitempty"`
}

// MaxDiffBytes bounds the diff page diff returns.
const MaxDiffBytes = 64 << 10

func pageDiff(ctx context.Context, e *Env, in *PageDiffIn) (*PageDiffOut, error) {
	rec, _, p, err := historyPage(ctx, e, in.Title)
	if err != nil {
		return nil, err
	}
	revs := p.Revisions()
	if len(revs) == 0 {
		return nil, errs.E(errs.NotFound, "page %q has no history yet (it has not been written through synapse)", rec.Title)
	}
	to := revs[0]
	if in.Rev > 0 {
		r := p.Get(in.Rev)
		if r == nil {
			return nil, noRevision(rec.Title, in.Rev, revs)
		}
		to = *r
	}
	var from *history.Revision
	if in.To > 0 {
		r := p.Get(in.To)
		if r == nil {
			return nil, noRevision(rec.Title, in.To, revs)
		}
		prev := to
		from, to = &prev, *r
	} else {
		for i := range revs {
			if revs[i].Rev < to.Rev {
				from = &revs[i]
				break
			}
		}
	}
	out := &PageDiffOut{PageRef: refOf(rec), From: from, To: to}
	var a, b []byte
	if from != nil {
		if a, err = p.Content(from.Rev); err != nil {
			return nil, errs.Wrap(errs.Internal, err, "%v", err)
		}
	}
	if b, err = p.Content(to.Rev); err != nil {
		return nil, errs.Wrap(errs.Internal, err, "%v", err)
	}
	out.Diff, out.Truncated = unifiedDiff(revLabel(from), revLabel(&to), a, b)
	return out, nil
}

func revLabel(r *history.Revision) string {
	if r == nil {
		return "/dev/null"
	}
	return fmt.Sprintf("%s (rev %d)", r.Path, r.Rev)
}

func noRevision(title string, rev int, revs []history.Revision) error {
	if len(revs) == 0 {
		return errs.E(errs.NotFound, "page %q has no history yet", title)
	}
	return errs.E(errs.NotFound, "page %q has no revision %d (it keeps revisions %d to %d; %s lists them)", title, rev, revs[len(revs)-1].Rev, revs[0].Rev, errs.Cmd("page.history"))
}

// unifiedDiff is the unified diff of a and b by lines, cut at
// MaxDiffBytes on a line boundary. Each side's last line gets a newline
// if it lacks one, marked as git marks it.
func unifiedDiff(labelA, labelB string, a, b []byte) (string, bool) {
	sa, sb := string(a), string(b)
	if sa == sb {
		return "", false
	}
	d, err := udiff.ToUnified(labelA, labelB, sa, udiff.Lines(sa, sb), udiff.DefaultContextLines)
	if err != nil {
		// the edits come from the same strings: cannot happen
		return "", false
	}
	if len(d) <= MaxDiffBytes {
		return d, false
	}
	cut := strings.LastIndexByte(d[:MaxDiffBytes], '\n')
	return d[:cut+1], true
}

// RestorePageIn is the input of page restore.
type RestorePageIn struct {
	Title   string `json:"title" arg:"0" words:"true" required:"true" desc:"Page title, alias, file name, path or id; resolved like a [[link]]"`
	Rev     int    `json:"rev" required:"true" desc:"The revision to write back (page history lists them)"`
	IfMatch string `json:"if_match,omitempty" nonempty:"true" desc:"sha256 of the current file (from get_page); the restore is refused as a conflict if the page changed. Leave it out to restore without the check: an empty value is refused"`
}

// RestorePageOut is the result of page restore: the write it made (a new
// revision holding the bytes of RestoredFrom).
type RestorePageOut struct {
	WritePageOut
	RestoredFrom int `json:"restored_from"`
}

// restorePage writes revision in.Rev of a page back, byte for byte,
// through the one write path: it is logged, re-indexed and recorded as a
// new revision (op restore), so it can be undone the same way.
//
// Errors: not_found (no such page or revision), conflict (stale if_match,
// the file changed meanwhile), too_large (a revision over the write cap,
// recorded from a hand edit), internal.
func restorePage(ctx context.Context, e *Env, in *RestorePageIn) (*RestorePageOut, error) {
	ifMatch, err := parseIfMatch(in.IfMatch)
	if err != nil {
		return nil, err
	}
	if in.Rev < 1 {
		return nil, errs.E(errs.Invalid, "%s must be a revision number (1 or more; %s lists them), not %d", errs.Param("rev"), errs.Cmd("page.history"), in.Rev)
	}
	rec, _, p, err := historyPage(ctx, e, in.Title)
	if err != nil {
		return nil, err
	}
	if p.Get(in.Rev) == nil {
		return nil, noRevision(rec.Title, in.Rev, p.Revisions())
	}
	data, err := p.Content(in.Rev)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "%v", err)
	}
	writeMu.Lock()
	defer writeMu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// the page by its path: the one just resolved, wherever its title
	// now points
	w := &pageWrite{e: e, c: &writeCall{title: rec.Path, ifMatch: ifMatch, kind: LogRestored}, now: e.now(),
		op: history.OpRestore, restoreFrom: in.Rev, exact: data}
	out, err := w.run(ctx)
	if err != nil {
		return nil, err
	}
	return &RestorePageOut{WritePageOut: *out, RestoredFrom: in.Rev}, nil
}

// exactRender is stage 4 of a restore: the file is the revision's bytes,
// unmerged. The page must exist.
func (w *pageWrite) exactRender(t *target) (*rendered, error) {
	if t.rec == nil {
		return nil, errs.E(errs.NotFound, "%s is gone; a restore writes back a page that exists", w.c.title)
	}
	r := &rendered{data: w.exact, unchanged: string(w.exact) == string(t.old)}
	sum := sha256.Sum256(w.exact)
	r.sha256 = hex.EncodeToString(sum[:])
	fm := markdown.Parse(t.path, w.exact).Frontmatter
	if fm == nil {
		fm = &markdown.Frontmatter{}
	}
	r.m = &merged{fm: fm, title: t.rec.Title, typ: t.rec.Type}
	if !r.unchanged && len(r.data) > MaxContentBytes {
		return nil, errs.E(errs.TooLarge, "revision is %d bytes; a write is at most 1 MiB (%d bytes)", len(r.data), MaxContentBytes)
	}
	return r, nil
}
