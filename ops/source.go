package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// MaxSourceRead caps the content read_source_file returns.
const MaxSourceRead = 2 << 20

// sniffBytes is how much of a file is checked for NUL bytes and invalid
// UTF-8 before it is served as text.
const sniffBytes = 8 << 10

// DefaultSourceRead is how much of a source one read returns unless asked
// for more: a part that fits an agent's context, with next_offset for the
// rest.
const DefaultSourceRead = 12 << 10

// ReadSourceIn is the input of read_source_file.
type ReadSourceIn struct {
	Path   string `json:"path" arg:"0" required:"true" desc:"A file under raw/sources/: x.md, raw/sources/x.md or an absolute path inside raw/sources/"`
	Offset int    `json:"offset,omitempty" min:"0" desc:"Byte offset to start at (the next_offset of the previous read); an offset inside a UTF-8 character starts at the next whole one"`
	Limit  int    `json:"limit,omitempty" default:"12288" min:"1" max:"2097152" desc:"Bytes to return at most (1..2097152, default 12288 = 12 KiB); the part ends on a whole UTF-8 character, and next_offset says where the rest starts"`
}

// ReadSourceOut is the result of read_source_file.
type ReadSourceOut struct {
	// Path is the vault-relative path, "raw/sources/…".
	Path string `json:"path"`
	// Name is the file name.
	Name string `json:"name"`
	// SizeBytes is the size of the whole file.
	SizeBytes int64 `json:"size_bytes"`
	// SHA256 is a hex SHA-256; SHA256Of says of what. A read never goes
	// past the 2 MiB cap, hashing included, so:
	//   - "file": of the whole file — it fits under the cap, or the
	//     scanner hashed it at its current size and mtime. It equals the
	//     sha256 `source list` shows while the file is unchanged.
	//   - "content": of the returned content (its UTF-8 bytes), for a
	//     truncated file the scanner has not hashed as it is now (run
	//     `synapse source rescan` to get the whole file's).
	SHA256   string `json:"sha256"`
	SHA256Of string `json:"sha256_of" enum:"file,content"`
	// Offset is where Content starts in the file (bytes): the offset asked
	// for, moved to the start of a UTF-8 character.
	Offset int64 `json:"offset"`
	// Truncated is true when Content stops before the end of the file
	// (the limit, at most 2 MiB, cut back to a whole UTF-8 character);
	// NextOffset is then where the rest starts, to pass as offset.
	Truncated  bool  `json:"truncated"`
	NextOffset int64 `json:"next_offset,omitempty"`
	// Content is the text. Bytes that are not valid UTF-8 after the sniffed
	// first 8 KiB are replaced by U+FFFD.
	Content string `json:"content"`
}

var opReadSource = register(Op{
	Name: "source.read", Summary: "Read a text file under raw/sources/ (confined: never a file outside it)",
	CLI: "source read", MCP: "read_source_file", REST: []Route{{Method: "GET", Path: "/sources/file"}},
	Access: Read, Limits: "text files only; 12 KiB per read by default, --limit up to 2 MiB; truncated: true and next_offset when there is more (read on with --offset); nothing past the part returned is read",
	Title: "Read a raw source file",
	Examples: []Example{
		{`synapse source read notes/srs.md`, "the text (in a pipe, byte for byte)"},
		{`synapse source read raw/sources/notes/srs.md --json`, "with size, sha256, truncated and next_offset"},
		{`synapse source read long.md --offset 12288 --json`, "the next part of a long source"},
	},
	Exits: map[int]string{
		2: "invalid: not a text file, or a path that is not under raw/sources/",
		3: "not found: no such file under raw/sources/",
		5: "forbidden: the path leads outside raw/sources/ (no bytes are read)",
	},
}, readSource)

// readSource serves a part of one source file: Limit bytes from Offset,
// cut to whole UTF-8 characters, reading no more of the file than its
// first 8 KiB (to tell text from binary) and the part (stopping when ctx
// is cancelled). Refusals (see confine.go): invalid (bad spelling,
// folder, not text), forbidden (escapes raw/sources/, hidden, special
// file, private file), not_found. No refusal carries a byte of any file.
func readSource(ctx context.Context, e *Env, in *ReadSourceIn) (*ReadSourceOut, error) {
	rel, err := sourceRel(e.Vault, in.Path)
	if err != nil {
		return nil, err
	}
	f, info, err := openSource(e.Vault, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	display := vault.SourcesDir + "/" + rel
	limit := int64(in.Limit)
	if limit <= 0 {
		limit = DefaultSourceRead
	}
	limit = min(limit, MaxSourceRead)
	// the head tells text from binary, whatever part is asked for; when
	// the part starts at 0 it is read with it
	want := int64(sniffBytes + utf8.UTFMax)
	if in.Offset == 0 {
		want = max(want, limit+utf8.UTFMax)
	}
	head := make([]byte, 0, min(max(info.Size(), 0), want)+1)
	head, err = vaultfs.ReadUpTo(ctx, f, head, want)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "read %s: %v", display, err)
	}
	if !sniffText(head) {
		return nil, errs.E(errs.Invalid, "%s is not a text file (binary content: NUL bytes or invalid UTF-8 in its first 8 KiB); only text files are served", display)
	}
	out := &ReadSourceOut{Path: display, Name: path.Base(rel), SizeBytes: max(info.Size(), int64(len(head))), SHA256Of: "file"}
	part, whole := head, in.Offset == 0 && int64(len(head)) <= limit
	if in.Offset > 0 {
		if part, err = readPart(ctx, f, int64(in.Offset), limit); err != nil {
			return nil, errs.Wrap(errs.Internal, err, "read %s: %v", display, err)
		}
	}
	start, body, more := runeWindow(part, limit)
	out.Offset = int64(in.Offset + start)
	if more {
		out.Truncated, out.NextOffset = true, out.Offset+int64(len(body))
	}
	out.Content = strings.ToValidUTF8(string(body), "\uFFFD")
	switch {
	case whole:
		sum := sha256.Sum256(head)
		out.SHA256 = hex.EncodeToString(sum[:])
	case scannedSum(e, display, info, &out.SHA256):
	default:
		sum := sha256.Sum256([]byte(out.Content))
		out.SHA256, out.SHA256Of = hex.EncodeToString(sum[:]), "content"
	}
	return out, nil
}

// readPart reads up to limit bytes at offset, and the few bytes after
// them that finish a UTF-8 character or tell that more follows.
func readPart(ctx context.Context, f *os.File, offset, limit int64) ([]byte, error) {
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	n := limit + utf8.UTFMax
	return vaultfs.ReadUpTo(ctx, f, make([]byte, 0, min(n, MaxSourceRead+utf8.UTFMax)), n)
}

// runeWindow cuts data (read at some offset, possibly inside a UTF-8
// character, and a few bytes past the limit) to the part served: it skips
// the continuation bytes of a character begun before the offset, keeps at
// most limit bytes ending on a whole character (at least one character
// when the limit is smaller than it), and reports whether any byte
// follows.
func runeWindow(data []byte, limit int64) (start int, body []byte, more bool) {
	for start < len(data) && start < utf8.UTFMax && !utf8.RuneStart(data[start]) {
		start++
	}
	rest := data[start:]
	if int64(len(rest)) <= limit {
		return start, rest, false
	}
	body = cutPartialRune(rest[:limit])
	if len(body) == 0 {
		// a limit smaller than the character: the character, whole
		_, size := utf8.DecodeRune(rest)
		body = rest[:size]
	}
	return start, body, len(rest) > len(body)
}

// scannedSum sets *sum to the whole-file hash the scanner stored for p
// when its record still vouches for the file (same size and mtime, not
// racy).
func scannedSum(e *Env, p string, info fs.FileInfo, sum *string) bool {
	ok := false
	if e.Store == nil {
		return false
	}
	_ = e.Store.View(func(tx *store.Tx) error {
		f, found, err := tx.File(p)
		if err == nil && found && f.Size == info.Size() && f.MtimeNS == info.ModTime().UnixNano() && !f.Racy() {
			*sum, ok = hex.EncodeToString(f.SHA256[:]), true
		}
		return nil
	})
	return ok
}

// sniffText reports whether data (the start of a file) looks like UTF-8
// text: no NUL byte and valid UTF-8 in its first sniffBytes (a character
// cut by the end of that window does not count against it).
func sniffText(data []byte) bool {
	s, more := data, false
	if len(s) > sniffBytes {
		s, more = s[:sniffBytes], true
	}
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return false
		}
	}
	if more {
		s = cutPartialRune(s)
	}
	return utf8.Valid(s)
}

// cutPartialRune drops an incomplete UTF-8 sequence at the end of b.
func cutPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

// Source states (docs/vault.md#sources).
const (
	StateNew      = "new"      // no page cites it
	StateIngested = "ingested" // cited, and unchanged since the last citing write
	StateChanged  = "changed"  // its bytes changed after the last citing write
	StateMissing  = "missing"  // cited by a page, but the file is gone
)

// SourceStates lists the valid states in worklist order.
var SourceStates = []string{StateNew, StateChanged, StateMissing, StateIngested}

// MaxCitedBy caps the citing pages listed per source (CitedByCount has
// the full count).
const MaxCitedBy = 20

// ListSourcesIn is the input of source list. State takes a comma-separated
// list, so it carries no enum tag (a schema enum would refuse "new,changed").
type ListSourcesIn struct {
	State  string `json:"state,omitempty" desc:"Only sources in these states, comma-separated: new, changed, missing, ingested (new,changed is the compile worklist); default all"`
	Path   string `json:"path,omitempty" desc:"Only sources whose path holds this text (case-insensitive), or matches it as a glob when it has * ? or [ (* crosses folders; matched against the path, the path under raw/sources/ and the file name): crystal, raw/sources/2024/*, *.pdf"`
	Limit  int    `json:"limit,omitempty" default:"25" min:"1" max:"10000" desc:"Maximum sources to return (1..10000, default 25, and then at most 16 KiB of JSON); total counts them all"`
	Offset int    `json:"offset,omitempty" min:"0" desc:"Sources to skip"`
}

// defaultSourceList is source list's default limit, under which the
// answer is also bounded in size (MaxListBytes).
const defaultSourceList = 25

// SourceItem is one source of source list.
type SourceItem struct {
	// Path is the vault-relative path (for a missing source, as cited).
	Path  string `json:"path"`
	State string `json:"state"`
	// SizeBytes and SHA256 describe the file as last scanned; absent for a
	// missing source.
	SizeBytes *int64 `json:"size_bytes,omitempty"`
	SHA256    string `json:"sha256,omitempty"`
	// FirstSeen is when a scan first saw the file; LastChanged the file's
	// modification time when its bytes last changed (RFC 3339, UTC).
	FirstSeen   string `json:"first_seen,omitempty"`
	LastChanged string `json:"last_changed,omitempty"`
	// LastCited is the latest content change of a citing page: the source
	// is "changed" when LastChanged is after it.
	LastCited    string    `json:"last_cited,omitempty"`
	CitedBy      []PageRef `json:"cited_by"`
	CitedByCount int       `json:"cited_by_count"`
}

// SourceCounts counts every tracked or cited source by state, whatever
// the filter.
type SourceCounts struct {
	New      int `json:"new"`
	Changed  int `json:"changed"`
	Missing  int `json:"missing"`
	Ingested int `json:"ingested"`
}

// ListSourcesOut is the result of source list. States are computed from
// the store after a scan of raw/sources/ (files added, edited or deleted
// since the last scan are in); a page edited outside synapse since then
// counts once `synapse source rescan` (or serve's watcher) has read it.
type ListSourcesOut struct {
	// Total is the number of sources matching the state and path filters.
	Total  int          `json:"total"`
	Counts SourceCounts `json:"counts"`
	// LastScan is when the last full scan completed (RFC 3339, UTC).
	LastScan string       `json:"last_scan"`
	Sources  []SourceItem `json:"sources"`
	// NextOffset is the offset of the next part while more remain.
	NextOffset int `json:"next_offset,omitempty" desc:"Where the next part starts (the offset to ask for) while more remain; absent on the last part"`
	// Cut is set when the size bound of the default answer (16 KiB of
	// JSON) left out sources the limit allowed; read on with offset.
	Cut bool `json:"cut,omitempty"`
}

var opListSources = register(Op{
	Name: "source.list", Summary: "List raw sources with their state (new, changed, missing, ingested), raw/sources/ rescanned first",
	CLI: "source list", REST: []Route{{Method: "GET", Path: "/sources"}},
	Access: Read, Rescans: true, Limits: "rescans raw/sources/ first (incremental: unchanged files are not read); limit 1..10000 (default 25, and then at most 16 KiB: cut: true says sources were left out); total counts all",
	Examples: []Example{
		{`synapse source list --state new,changed`, "the compile worklist: sources no page cites yet, or changed since"},
		{`synapse source list --json`, "every source with its state, size, times and citing pages"},
	},
}, listSources)

// parseStates turns a comma-separated state filter into a set (nil = all).
func parseStates(s string) (map[string]bool, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" || s == "all" {
		return nil, nil
	}
	set := map[string]bool{}
	for _, x := range strings.Split(s, ",") {
		x = strings.TrimSpace(x)
		if x == "" {
			continue
		}
		ok := false
		for _, v := range SourceStates {
			ok = ok || v == x
		}
		if !ok {
			return nil, errs.E(errs.Invalid, "unknown source state %q; valid states: %s (comma-separate several, or all)", x, strings.Join(SourceStates, ", "))
		}
		set[x] = true
	}
	if len(set) == 0 {
		return nil, nil
	}
	return set, nil
}

// citer is what source list needs of a citing page.
type citer struct {
	ref     PageRef
	changed int64
	keys    []string // its source keys as written (for missing sources)
}

// sourceEntry is a matching source before its row is built.
type sourceEntry struct {
	path  string
	state string
	file  *store.FileRec
	docs  []uint32
	last  int64
}

func listSources(ctx context.Context, e *Env, in *ListSourcesIn) (*ListSourcesOut, error) {
	want, err := parseStates(in.State)
	if err != nil {
		return nil, err
	}
	match, err := sourcePathMatcher(in.Path)
	if err != nil {
		return nil, err
	}
	// the incremental scanner over raw/sources/ (cheap: unchanged files are
	// skipped by size and mtime), so new files are listed without a
	// rescan; a store opened read-only is listed as it is
	if !e.Store.ReadOnly() {
		if _, err := e.Index.Scan(ctx, index.ScanOptions{Paths: []string{vault.SourcesDir}}); err != nil {
			return nil, err
		}
	}
	out := &ListSourcesOut{Sources: []SourceItem{}}
	err = e.Store.View(func(tx *store.Tx) error {
		if t, ok := tx.LastScan(); ok {
			out.LastScan = t.UTC().Format(time.RFC3339)
		}
		l := &sourceLister{tx: tx, want: want, match: match, out: out, pages: map[uint32]*citer{}}
		entries, err := l.entries()
		if err != nil {
			return err
		}
		out.Total = len(entries)
		lo := min(in.Offset, len(entries))
		hi := min(lo+in.Limit, len(entries))
		for _, en := range entries[lo:hi] {
			out.Sources = append(out.Sources, sourceItem(en, l.pages))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if in.Limit == defaultSourceList {
		// the default answer fits an agent's context; a limit asked for
		// is served whole
		out.Cut = fitList(out, &out.Sources)
	}
	out.NextOffset = nextOffset(in.Offset, len(out.Sources), out.Total)
	return out, nil
}

// sourceLister is one listSources in its read transaction: the states
// asked for, the counts so far and the citing pages read once each.
type sourceLister struct {
	tx    *store.Tx
	want  map[string]bool   // nil: every state
	match func(string) bool // nil: every path
	out   *ListSourcesOut
	pages map[uint32]*citer // nil for a doc that is no page
	perr  error             // the first error reading a page
}

// page is a citing doc's page, read once.
func (l *sourceLister) page(doc uint32) *citer {
	if c, ok := l.pages[doc]; ok {
		return c
	}
	p, err := l.tx.Page(doc)
	if err != nil && l.perr == nil {
		l.perr = err
	}
	var c *citer
	if p != nil {
		c = &citer{ref: refOf(p), changed: p.ChangedNS, keys: p.SourceKeys}
	}
	l.pages[doc] = c
	return c
}

// lastCited is when the latest of docs changed, and those docs that are
// pages.
func (l *sourceLister) lastCited(docs []uint32) (int64, []uint32) {
	var last int64
	live := docs[:0:0]
	for _, d := range docs {
		if c := l.page(d); c != nil {
			live = append(live, d)
			last = max(last, c.changed)
		}
	}
	return last, live
}

// keep counts an entry's state and says whether it is listed.
func (l *sourceLister) keep(en sourceEntry) bool {
	c := &l.out.Counts
	switch en.state {
	case StateNew:
		c.New++
	case StateChanged:
		c.Changed++
	case StateMissing:
		c.Missing++
	case StateIngested:
		c.Ingested++
	}
	return (l.want == nil || l.want[en.state]) && (l.match == nil || l.match(en.path))
}

// entries are the sources in the states asked for, by path: the files
// under raw/sources/ and the cited files no file matches.
func (l *sourceLister) entries() ([]sourceEntry, error) {
	// one pass over the cites bucket: folded source key → citing docs
	cites := map[string][]uint32{}
	l.tx.EachCite(func(k string, doc uint32) bool {
		cites[k] = append(cites[k], doc)
		return true
	})
	var entries []sourceEntry
	matched := map[string]bool{}
	if err := l.tx.EachFile(vault.SourcesDir+"/", func(p string, f store.FileRec) bool {
		en := sourceEntry{path: p, state: StateNew}
		k := store.Fold(p)
		if docs := cites[k]; len(docs) > 0 {
			matched[k] = true
			en.last, en.docs = l.lastCited(docs)
		}
		if len(en.docs) > 0 {
			en.state = StateIngested
			if f.LastChanged > en.last {
				en.state = StateChanged
			}
		}
		if l.keep(en) {
			en.file = &f
			entries = append(entries, en)
		}
		return true
	}); err != nil {
		return nil, err
	}
	sorted := true
	for k, docs := range cites {
		if matched[k] {
			continue
		}
		en := sourceEntry{state: StateMissing}
		en.last, en.docs = l.lastCited(docs)
		if len(en.docs) == 0 {
			continue
		}
		en.path = citedSpelling(l.pages[en.docs[0]], k)
		if l.keep(en) {
			entries = append(entries, en)
			sorted = false
		}
	}
	if l.perr != nil {
		return nil, l.perr
	}
	if !sorted {
		sort.Slice(entries, func(i, j int) bool { return entries[i].path < entries[j].path })
	}
	return entries, nil
}

// sourceTotals counts the sources `source list` lists, without computing
// their states: the files under raw/sources/ and the cited files that are
// missing (a cited key no file matches). status uses it, so both count
// sources the same way.
func sourceTotals(tx *store.Tx) (files, missing int) {
	have := map[string]bool{}
	_ = tx.EachFile(vault.SourcesDir+"/", func(p string, _ store.FileRec) bool {
		files++
		have[store.Fold(p)] = true
		return true
	})
	last := ""
	tx.EachCite(func(k string, _ uint32) bool {
		if k != last {
			last = k
			if !have[k] {
				missing++
			}
		}
		return true
	})
	return files, missing
}

// citedSpelling returns the source path as the citing page wrote it
// (its key before folding), else the folded key.
func citedSpelling(c *citer, key string) string {
	if c != nil {
		for _, s := range c.keys {
			if store.Fold(s) == key {
				return s
			}
		}
	}
	return key
}

func sourceItem(en sourceEntry, pages map[uint32]*citer) SourceItem {
	it := SourceItem{Path: en.path, State: en.state, CitedBy: []PageRef{}, CitedByCount: len(en.docs)}
	if f := en.file; f != nil {
		size := f.Size
		it.SizeBytes = &size
		it.SHA256 = hex.EncodeToString(f.SHA256[:])
		it.FirstSeen = rfc3339(f.FirstSeen)
		it.LastChanged = rfc3339(f.LastChanged)
	}
	if len(en.docs) > 0 {
		it.LastCited = rfc3339(en.last)
	}
	for _, d := range en.docs {
		if c := pages[d]; c != nil {
			it.CitedBy = append(it.CitedBy, c.ref)
		}
	}
	sortRefs(it.CitedBy)
	if len(it.CitedBy) > MaxCitedBy {
		it.CitedBy = it.CitedBy[:MaxCitedBy]
	}
	return it
}

func rfc3339(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339)
}
