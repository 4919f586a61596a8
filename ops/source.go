package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
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

// ReadSourceIn is the input of read_source_file.
type ReadSourceIn struct {
	Path string `json:"path" arg:"0" required:"true" desc:"A file under raw/sources/: x.md, raw/sources/x.md or an absolute path inside raw/sources/"`
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
	// Truncated is true when the file is larger than MaxSourceRead and
	// Content holds only its first 2 MiB (cut back to a whole UTF-8
	// character).
	Truncated bool `json:"truncated"`
	// Content is the text. Bytes that are not valid UTF-8 after the sniffed
	// first 8 KiB are replaced by U+FFFD.
	Content string `json:"content"`
}

var opReadSource = register(Op{
	Name: "source.read", Summary: "Read a text file under raw/sources/ (confined: never a file outside it)",
	CLI: "source read", MCP: "read_source_file", REST: []Route{{Method: "GET", Path: "/sources/file"}},
	Access: Read, Limits: "text files only; content capped at 2 MiB (truncated: true), and nothing past the cap is read",
	Title: "Read a raw source file",
	Examples: []Example{
		{`synapse source read notes/srs.md`, "the text (in a pipe, byte for byte)"},
		{`synapse source read raw/sources/notes/srs.md --json`, "with size, sha256 and truncated"},
	},
	Exits: map[int]string{
		2: "invalid: not a text file, or a path that is not under raw/sources/",
		3: "not found: no such file under raw/sources/",
		5: "forbidden: the path leads outside raw/sources/ (no bytes are read)",
	},
}, readSource)

// readSource serves one source file, reading at most MaxSourceRead bytes
// of it (and stopping when ctx is cancelled). Refusals (see confine.go):
// invalid (bad spelling, folder, not text), forbidden (escapes
// raw/sources/, hidden, special file, private file), not_found. No refusal
// carries a byte of any file.
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
	head := make([]byte, 0, min(max(info.Size(), 0), MaxSourceRead)+1)
	head, err = vaultfs.ReadUpTo(ctx, f, head, MaxSourceRead+1)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "read %s: %v", display, err)
	}
	out := &ReadSourceOut{Path: display, Name: path.Base(rel), SizeBytes: max(info.Size(), int64(len(head))), SHA256Of: "file"}
	if len(head) > MaxSourceRead {
		out.Truncated, head = true, head[:MaxSourceRead]
	}
	if !sniffText(head) {
		return nil, errs.E(errs.Invalid, "%s is not a text file (binary content: NUL bytes or invalid UTF-8 in its first 8 KiB); only text files are served", display)
	}
	if out.Truncated {
		head = cutPartialRune(head)
	}
	out.Content = strings.ToValidUTF8(string(head), "\uFFFD")
	switch {
	case !out.Truncated:
		sum := sha256.Sum256(head)
		out.SHA256 = hex.EncodeToString(sum[:])
	case scannedSum(e, display, info, &out.SHA256):
	default:
		sum := sha256.Sum256([]byte(out.Content))
		out.SHA256, out.SHA256Of = hex.EncodeToString(sum[:]), "content"
	}
	return out, nil
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
	Limit  int    `json:"limit,omitempty" default:"1000" min:"1" max:"10000" desc:"Maximum sources to return (1..10000, default 1000)"`
	Offset int    `json:"offset,omitempty" min:"0" desc:"Sources to skip"`
}

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
	// Total is the number of sources matching the state filter.
	Total  int          `json:"total"`
	Counts SourceCounts `json:"counts"`
	// LastScan is when the last full scan completed (RFC 3339, UTC).
	LastScan string       `json:"last_scan"`
	Sources  []SourceItem `json:"sources"`
}

var opListSources = register(Op{
	Name: "source.list", Summary: "List raw sources with their state (new, changed, missing, ingested), raw/sources/ rescanned first",
	CLI: "source list", REST: []Route{{Method: "GET", Path: "/sources"}},
	Access: Read, Rescans: true, Limits: "rescans raw/sources/ first (incremental: unchanged files are not read); limit 1..10000 (default 1000)",
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
		// one pass over the cites bucket: folded source key → citing docs
		cites := map[string][]uint32{}
		tx.EachCite(func(k string, doc uint32) bool {
			cites[k] = append(cites[k], doc)
			return true
		})
		pages := map[uint32]*citer{}
		var perr error
		page := func(doc uint32) *citer {
			if c, ok := pages[doc]; ok {
				return c
			}
			p, err := tx.Page(doc)
			if err != nil && perr == nil {
				perr = err
			}
			var c *citer
			if p != nil {
				c = &citer{ref: refOf(p), changed: p.ChangedNS, keys: p.SourceKeys}
			}
			pages[doc] = c
			return c
		}
		lastCited := func(docs []uint32) (int64, []uint32) {
			var last int64
			live := docs[:0:0]
			for _, d := range docs {
				if c := page(d); c != nil {
					live = append(live, d)
					last = max(last, c.changed)
				}
			}
			return last, live
		}
		keep := func(en sourceEntry) bool {
			switch en.state {
			case StateNew:
				out.Counts.New++
			case StateChanged:
				out.Counts.Changed++
			case StateMissing:
				out.Counts.Missing++
			case StateIngested:
				out.Counts.Ingested++
			}
			return want == nil || want[en.state]
		}
		var entries []sourceEntry
		matched := map[string]bool{}
		if err := tx.EachFile(vault.SourcesDir+"/", func(p string, f store.FileRec) bool {
			en := sourceEntry{path: p, state: StateNew}
			k := store.Fold(p)
			if docs := cites[k]; len(docs) > 0 {
				matched[k] = true
				en.last, en.docs = lastCited(docs)
			}
			if len(en.docs) > 0 {
				en.state = StateIngested
				if f.LastChanged > en.last {
					en.state = StateChanged
				}
			}
			if keep(en) {
				en.file = &f
				entries = append(entries, en)
			}
			return true
		}); err != nil {
			return err
		}
		sorted := true
		for k, docs := range cites {
			if matched[k] {
				continue
			}
			en := sourceEntry{state: StateMissing}
			en.last, en.docs = lastCited(docs)
			if len(en.docs) == 0 {
				continue
			}
			en.path = citedSpelling(pages[en.docs[0]], k)
			if keep(en) {
				entries = append(entries, en)
				sorted = false
			}
		}
		if perr != nil {
			return perr
		}
		if !sorted {
			sort.Slice(entries, func(i, j int) bool { return entries[i].path < entries[j].path })
		}
		out.Total = len(entries)
		lo := min(in.Offset, len(entries))
		hi := min(lo+in.Limit, len(entries))
		for _, en := range entries[lo:hi] {
			out.Sources = append(out.Sources, sourceItem(en, pages))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
