package ops

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/markdown"
)

// write_page is the one validated write path (docs/operations.md#the-write-path): the CLI, MCP,
// REST and a review's create action all call WritePage. It runs in five
// stages, one file each, so every rule lives in exactly one place:
//
//	write_input.go   1. decode: check what the caller gave (title, content,
//	                    frontmatter map, fields, caps) and turn it into edits
//	write_locate.go  2. locate: the existing page and its bytes, or the
//	                    folder and file name of a new one
//	write_merge.go   3. merge: apply the edits that change something to the
//	                    page's frontmatter (validating only what changes),
//	                    then the honest dates (created, updated)
//	write_render.go  4. render: the file's bytes (BOM, fences, line endings
//	                    and unchanged frontmatter lines kept), the size cap,
//	                    "unchanged"
//	write_commit.go  5. commit: the atomic write, log.md, re-index, review
//	                    queue, index.md
//
// write_check.go holds the field rules shared by the stages (titles,
// aliases, tags, dates, sources).

// WritePageIn is the input of write_page. MCP callers give type, tags,
// sources and aliases inside frontmatter; the CLI gives them as flags.
//
// How the inputs of one call combine: content may start with its own
// frontmatter block (a whole markdown file piped to `synapse page write`,
// as `page get` prints it); its keys, the frontmatter map and the fields
// Type, Tags, Sources and Aliases are merged. The list keys (tags,
// sources, aliases) are the union of every place that gives them; type
// must not be given two different ways (invalid); for any other key the
// map wins over the block. A key whose value equals the page's is left
// exactly as the file has it (writing back what get_page returned changes
// nothing and reports unchanged); a key that changes replaces the file's
// value; keys the call does not mention are kept as they are, in order. A
// map value of null removes the key. A call without a body (no content,
// or a frontmatter block alone) but with keys changes only those keys:
// an existing page keeps its body; a new page needs one. `created` is set only when synapse
// creates the file; `updated` is set by synapse when the page changes, in
// the format the page already uses.
type WritePageIn struct {
	Title       string         `json:"title" arg:"0" words:"true" required:"true" desc:"Page title (≤ 200 characters), or the path or id of an existing page; an existing page is updated in place"`
	Content     string         `json:"content,omitempty" cli:"stdin" raw:"true" desc:"Markdown body (the page as written ≤ 1 MiB, UTF-8); a frontmatter block at its top is merged into the page's frontmatter. Leave it out (or send a frontmatter block alone) to change only the frontmatter keys given and keep an existing page's body"`
	Frontmatter map[string]any `json:"frontmatter,omitempty" cli:"-" desc:"Frontmatter keys: type, aliases, tags, sources and any others (a null value removes a key); keys not given, and keys given with their current value, are kept as they are"`
	Type        string         `json:"type,omitempty" mcp:"-" desc:"Page type: a lower-case word (entity, concept, source, synthesis, comparison, query, note, or the vault's own such as topic or question); default: the page's current type, else concept"`
	Tags        []string       `json:"tags,omitempty" flag:"tag" mcp:"-" desc:"A tag (trimmed, lowercased, one word), added to the tags the page has; to remove one, give the whole tags list in the content's frontmatter"`
	Sources     []string       `json:"sources,omitempty" flag:"source" mcp:"-" desc:"A source the page draws on, added to the sources it has (no need to repeat them; to remove one, give the whole sources list in the content's frontmatter): a file under raw/sources/ (x.md or raw/sources/x.md, must exist), a URL or id (https://…, doi:…, web:…), or a [[wikilink]]"`
	Aliases     []string       `json:"aliases,omitempty" flag:"alias" mcp:"-" desc:"Another name of the page, added to the aliases it has; to remove one, give the whole aliases list in the content's frontmatter"`
	IfMatch     string         `json:"if_match,omitempty" nonempty:"true" desc:"sha256 of the current file (from get_page); the write is refused as a conflict if the page changed. Leave it out to write without the check: an empty value is refused"`
	Path        string         `json:"path,omitempty" desc:"Where a new page goes: a vault path inside wiki/ ending in .md (wiki/topics/x.md), instead of its type's folder and a file name made from the title; its type defaults to the folder's. For an existing page it must be the page's own path (move_page moves a page)"`
	Section     string         `json:"section,omitempty" desc:"Write only this section: content replaces the text under the heading (up to the next heading of the same or a higher level), or becomes a new section at the end when the page has no such heading (at the level given, else ##). \"Heading\", \"## Heading\" (that level) or \"Parent#Heading\"; the rest of the page is kept byte for byte"`
	Append      bool           `json:"append,omitempty" desc:"Add content instead of replacing: to the end of the section's own text (before its subsections) with section, else to the end of the body; a section the page lacks is added at the end as with section. A blank line goes before it, except a list item after a list item or a table row after a table row. No if_match needed (it is still checked when given); content must not be empty. The same append twice adds the text twice"`
	Log         string         `json:"log,omitempty" desc:"One line for wiki/log.md saying what this write did (≤ 500 characters); the entry already says created or updated, the title and the sources the write cites"`
	DryRun      bool           `json:"dry_run,omitempty" desc:"Check the write without making it: the answer says where the page would go and which of its links would be dangling (and filed), ambiguous or reach a file, and nothing is written, logged or filed"`
	// Kind names the operation writing, for the log entry (moved,
	// restored); "" lets the write say created or updated. Not a parameter
	// on any surface: the operations that write through write_page set it.
	Kind LogKind `json:"-"`
}

// FileTarget is a link target and the file that is no page it reached.
type FileTarget struct {
	Target string `json:"target"`
	Path   string `json:"path"`
}

// WritePageOut is the result of write_page: what a caller needs to verify
// the write.
type WritePageOut struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Type     string   `json:"type"`
	Path     string   `json:"path"`
	SHA256   string   `json:"sha256"`
	Created  bool     `json:"created"`  // true when the page is new
	Dangling []string `json:"dangling"` // link targets in the content that match no page
	// DanglingAdded are those of Dangling that the page did not link to
	// before the write: an edit's own, told from those the page had.
	DanglingAdded []string `json:"dangling_added" desc:"The dangling targets this write added (the page did not link to them before); the others in dangling the page had already"`
	// Filed are the dangling targets this write added (the previous
	// version did not link to them) and filed as new missing-page review
	// items; the others were in the queue already (pending or decided).
	Filed []string `json:"filed,omitempty" desc:"Dangling targets this write added and filed as new missing-page review items (links the page already had, and targets already in the queue, file nothing)"`
	// NotFiled counts the dangling targets this write added beyond the
	// first MaxFiledPerWrite, which it does not file.
	AutoResolved []string `json:"auto_resolved,omitempty" desc:"Pending missing-page review items (ids) this page answers, or whose last link this write removed, closed as auto_resolved (decided_by rule) and logged in wiki/log.md"`
	NotFiled     int      `json:"not_filed,omitempty" desc:"Dangling targets this write added beyond the first 50, not filed as review items; lint --page TITLE --to-review files them"`
	// LinksToFiles are the [[links]] written as page links (a bare name)
	// that no page answers and a file that is no page does, by its file
	// name: a clipped source raw/sources/X.md takes [[X]], as in Obsidian.
	// Such a link is not dangling and files no missing-page item; a page
	// of that title, once written, takes the link over.
	LinksToFiles []FileTarget `json:"links_to_files,omitempty" desc:"Links by name that reached a file that is no page (a raw source, an attachment) because no page has that name: not dangling, no missing-page item; write a page of that title if a page was meant"`
	// Ambiguous are the page's links whose target matches several pages
	// where no rule of where the link is written decided (the shortest
	// path or name order chose): the link may reach a page not meant.
	// The first MaxWriteAmbiguous; AmbiguousTotal counts them all.
	Ambiguous      []AmbiguousLink `json:"ambiguous,omitempty" desc:"The page's links whose target matches several pages, so that the shortest path or name order chose one (as lint's ambiguous_links): each with the page chosen and the others (the first 5); at most 20 targets. Link by path to reach another"`
	AmbiguousTotal int             `json:"ambiguous_total,omitempty" desc:"How many of the page's link targets are ambiguous, when more than the 20 listed"`
	// AliasShared are the aliases the write added that other pages have
	// as a name too.
	AliasShared []SharedAlias `json:"alias_shared,omitempty" desc:"Aliases this write added that other pages have as a name too: a [[link]] by such a name may reach another page (a title or file name wins over an alias); choose another alias, or link this page by path"`
	// Frontmatter is, in a dry run, the page's frontmatter as it would be
	// written (the merge of the call's keys into the page's).
	Frontmatter *markdown.Frontmatter `json:"frontmatter,omitempty" desc:"With dry_run: the page's frontmatter as the write would leave it"`
	// DryRun is true when nothing was written: the answer is what the
	// write would do (its sha256, path, links and the items it would file).
	DryRun bool `json:"dry_run,omitempty" desc:"Nothing was written: the answer says what the write would do (path, sha256, links; filed lists the items it would file)"`
	// Unchanged is true when the file already held exactly these bytes, so
	// nothing was written or logged (a retried write, or a page written
	// back as get_page returned it).
	Unchanged bool `json:"unchanged,omitempty"`
	// NewType is true when the write brings in a type no other page has (a
	// new page, or a page given another type), other than the built-in
	// ones: a new convention, or a typo (--type entitiy). Types then lists the vault's other types, closest
	// to this one first.
	NewType bool        `json:"new_type,omitempty"`
	Types   []TypeCount `json:"types,omitempty"`
	// Revision is the number of the page's history revision this write
	// made (page history); 0 when the write changed nothing or the
	// history could not record it (Notes says why).
	Revision int `json:"revision,omitempty" desc:"The page's history revision this write made (page history, page diff, page restore)"`
	// Commit is the git commit this write made (history.git in the
	// vault's config).
	Commit string `json:"commit,omitempty" desc:"The git commit this write made, when the vault commits writes to git"`
	// Notes are problems beside the write that did not fail it: the
	// history could not record a version, git did not commit, or, after
	// the page was written, wiki/log.md was not appended to or
	// wiki/index.md not regenerated (a disk that filled meanwhile: the
	// page is written, indexed and its review items filed; index.md is
	// regenerated by the next write or source rescan).
	Notes []string `json:"notes,omitempty" desc:"Problems beside the write that did not fail it: the page history, git, or wiki/log.md not appended to or wiki/index.md not regenerated after the page was written (e.g. a full disk; the next write or source rescan regenerates index.md)"`
}

// WasCreated reports a new page (REST: 201 Created).
func (o *WritePageOut) WasCreated() bool { return o.Created }

// Limits of write_page: caps on what one call may carry. A write that exceeds one is
// refused before anything changes.
const (
	MaxTitleChars = 200
	// MaxContentBytes caps the page as written: frontmatter, fences and
	// body. Writing back a larger page unchanged is not a write and is
	// allowed (it reports unchanged).
	MaxContentBytes = index.MaxWriteBytes
	// MaxInputBytes caps the content a call may carry at all: a page
	// larger than MaxContentBytes can still be written back unchanged,
	// which needs its bytes.
	MaxInputBytes = 16 << 20
	MaxAliases    = 100
	MaxTags       = 100
	MaxSources    = 500
	// MaxFrontmatterKeys caps the keys of the frontmatter map and of a
	// frontmatter block in content.
	MaxFrontmatterKeys = 200
	MaxTagChars        = 100
	MaxSourceChars     = 2048
)

var opWritePage = register(Op{
	Name: "page.write", Summary: "Write a page: validated, atomic, re-indexed, logged and catalogued",
	CLI: "page write", MCP: "write_page",
	REST:   []Route{{Method: "PUT", Path: "/pages/{title}", Body: "*"}},
	Access: Write, Limits: "title ≤ 200 characters; the page as written ≤ 1 MiB (frontmatter included); ≤ 100 aliases, ≤ 100 tags, ≤ 500 sources, ≤ 200 frontmatter keys (refused past them)",
	// not idempotent: the same call again finds the same bytes (unchanged,
	// nothing written), except an append, which adds its text again
	Idempotent: false,
	Title:      "Write a wiki page",
	Examples: []Example{
		{`synapse page write "Spaced repetition" --type concept --source notes/srs.md --file draft.md`, "a new page from a file, citing a raw source"},
		{`echo "Body text with a [[Link]]." | synapse page write "Spaced repetition" --tag memory`, "the body on standard input (--file - says so too)"},
		{`synapse page write "Spaced repetition" --if-match SHA256 --file - < draft.md`, "an edit that fails (exit 4) if the page changed since you read its sha256"},
		{`synapse page write "Automated market maker" --path wiki/finance/amm.md --file draft.md`, "a new page at the file you choose"},
		{`echo "- [[Leitner system]]" | synapse page write "Spaced repetition" --section "See also" --log "linked the Leitner page"`, "one section only (added when absent), with a line for log.md"},
		{`echo "- [[Anki]]" | synapse page write "Spaced repetition" --append --section "See also"`, "add a line to the end of one section (no --if-match needed)"},
		{`synapse page write "Spaced repetition" --tag memory --tag learning --alias SRS`, "frontmatter only: nothing piped, the body is kept (the lists given replace the page's)"},
	},
	Exits: map[int]string{
		2: "invalid input: a rule of write_page is broken (the message names the field), the content is over 1 MiB, the title looks like a path (use --path), or --append without content",
		3: "not found: --file FILE does not exist",
		4: "conflict: --if-match is stale, the title is ambiguous, the existing file's frontmatter is not valid YAML, or --path is taken or is not the page's own",
		5: "forbidden or unavailable: a read-only server, the store held by another process, or --file FILE unreadable",
	},
}, WritePage)

// writeMu serializes writes within a process (serve answers requests
// concurrently); the store's file lock keeps other processes out.
var writeMu sync.Mutex

// WritePage validates and writes a page atomically, re-indexes it, logs it,
// files missing-page reviews for its dangling links and regenerates
// wiki/index.md. Every writer (CLI, MCP, REST, a review's create action)
// calls it.
//
// Errors: invalid (a field breaks a rule of the write path or a cap; the
// message names it), too_large (the page as written over 1 MiB), conflict
// (stale if_match, a title several pages share, an existing file whose
// frontmatter is not valid YAML and a call that would change its keys, a
// file changed while it was written), internal (I/O). Nothing is changed
// by a refused write. A failure after the page file was written says so
// and names the file.
func WritePage(ctx context.Context, e *Env, in *WritePageIn) (*WritePageOut, error) {
	if in == nil {
		return nil, errs.E(errs.Invalid, "write_page needs a title and content")
	}
	c, err := decodeWrite(in) // stage 1, before the lock
	if err != nil {
		return nil, err
	}
	writeMu.Lock()
	defer writeMu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// a write of this process that failed after its page was written
	// left its bookkeeping undone (intent.go)
	if err := e.finishInterruptedWrite(ctx); err != nil {
		return nil, err
	}
	w := &pageWrite{e: e, c: c, now: e.now()}
	return w.run(ctx)
}

// pageWrite is one write in progress.
type pageWrite struct {
	e   *Env
	c   *writeCall
	now time.Time
	t   time.Time // start of the current stage (stageHook)
	// cited holds the source files this write adds (checked to exist):
	// the commit scans them with the page, so one added to raw/sources/
	// since the last scan is tracked at once, not reported missing
	cited []string
	// resolved holds the review items the write answered (fileMissing),
	// logged after it
	resolved []ReviewItem
	// folders are the folders this write changes (commit)
	folders *index.FolderMark
	// hist is the history's share of the write (history_write.go); op,
	// restoreFrom and movedFrom describe the revision it records (op ""
	// is write, or create for a new page)
	hist        histWrite
	op          string
	restoreFrom int
	movedFrom   string
	// exact, when set, is the file to write byte for byte instead of a
	// merge of the call (a restore)
	exact []byte
}

func (w *pageWrite) mark(stage string) {
	if hook := w.e.observe.stage; hook != nil {
		now := time.Now()
		hook(stage, now.Sub(w.t))
		w.t = now
	}
}

// errUnknownFile asks run to scan a file the store does not know yet (an
// unscanned page at a new page's path) and to try again.
type errUnknownFile struct{ path string }

func (e *errUnknownFile) Error() string { return e.path + " is not indexed yet" }

// run runs stages 2 to 5, retrying when a new page's path holds a file the
// index has not seen yet (it is scanned first).
func (w *pageWrite) run(ctx context.Context) (*WritePageOut, error) {
	var scanned []string
	for attempt := 0; ; attempt++ {
		out, err := w.attempt(ctx)
		var uf *errUnknownFile
		if errors.As(err, &uf) && attempt < 3 && !contains(scanned, uf.path) {
			scanned = append(scanned, uf.path)
			if _, err := w.e.Index.Scan(ctx, index.ScanOptions{Paths: []string{uf.path}}); err != nil {
				return nil, err
			}
			continue
		}
		return out, err
	}
}

func (w *pageWrite) attempt(ctx context.Context) (*WritePageOut, error) {
	w.t = time.Now()
	w.cited = nil
	// log.md and index.md are written after the page: refuse up front when
	// they cannot be (a named pipe or a symlink there)
	if err := checkReservedWritable(w.e.files()); err != nil {
		return nil, err
	}
	t, err := w.locate() // stage 2
	if err != nil {
		return nil, err
	}
	var r *rendered
	if w.exact != nil {
		r, err = w.exactRender(t) // a restore: the bytes as they were
	} else {
		var page *merged
		if page, err = w.merge(t); err == nil { // stage 3
			r, err = w.render(t, page) // stage 4
		}
	}
	if err != nil {
		return nil, err
	}
	if w.c.dryRun {
		return w.preview(t, r)
	}
	if !r.unchanged {
		// what is written after the page must fit too (room.go)
		if err := checkRoom(w.e.Vault, int64(len(r.data)), int64(len(t.old))); err != nil {
			return nil, err
		}
	}
	w.mark("prepare")
	return w.commit(ctx, t, r) // stage 5
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
