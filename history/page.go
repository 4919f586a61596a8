package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/synapse-wiki/synapse/vaultfs"
)

// Page is the history of one page, open for reading (Read) or for changes
// (Edit). A Page open for changes holds the Store's lock until Close.
type Page struct {
	s    *Store
	id   string
	rel  string
	recs []*record // oldest first
	size int64     // bytes of the pack (its valid part)
	edit bool

	start   int64    // size when opened (after repair)
	onDisk  int64    // the pack's length as read (-1: no pack)
	f       *os.File // the pack, open for appending (nil until the first append)
	madeDir bool     // and the pack's folder
	// opened is the revisions the pack held when opened for changes;
	// created says this Page created the pack, synced that Sync ran.
	opened  int
	created bool
	synced  bool
	added   []Revision
	// carried: the totals changed when the page was opened (EditMoved)
	carried bool
	// Problems are what opening the pack found and repaired (a record cut
	// short by a crash, damaged bytes set aside).
	Problems []string
}

// Read opens the history of page id for reading; a page without history
// has no revisions. A record cut short at the end is ignored; damage
// further in ends the readable part (Problems says so).
func (s *Store) Read(id string) (*Page, error) {
	if !validID(id) {
		return nil, badID(id)
	}
	if err := s.ready(false); errors.Is(err, errNoHistory) {
		return &Page{s: s, id: id, rel: packPath(id), onDisk: -1}, nil
	} else if err != nil {
		return nil, err
	}
	return s.read(id, false)
}

// read is Read once the history's folder is found. With cached set (the
// lock is held), the pack the last change left (s.last) is taken as it
// was parsed then when the file is still that one: an agent's edits of a
// page one after another read and parse its pack once.
func (s *Store) read(id string, cached bool) (*Page, error) {
	p := &Page{s: s, id: id, rel: packPath(id), onDisk: -1}
	if cached {
		st, err := s.fs.Stat(p.rel)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil // no pack: nothing to read
		}
		if c := s.last; err == nil && c != nil && c.id == id && c.ident.same(st) {
			p.recs, p.size, p.onDisk = slices.Clone(c.recs), c.size, c.size
			return p, nil
		}
	}
	data, err := s.readPack(p.rel)
	if err != nil {
		return nil, err
	}
	p.onDisk = int64(len(data))
	if data == nil {
		p.onDisk = -1
	}
	recs, valid, tail := parsePack(data)
	p.recs, p.size = recs, valid
	if tail != nil && !errors.Is(tail, errTorn) {
		p.Problems = append(p.Problems, fmt.Sprintf("%s: %v; revisions after %d bytes cannot be read", name(p.rel), tail, valid))
	}
	return p, nil
}

// Edit opens the history of page id for changes, taking the Store's lock
// until Close. A record cut short by a crash is cut off; a pack damaged
// further in is set aside (under orphans/) and its readable revisions kept.
func (s *Store) Edit(id string) (*Page, error) {
	if !validID(id) {
		return nil, badID(id)
	}
	if err := s.ready(true); err != nil {
		return nil, err
	}
	s.mu.Lock()
	// the totals as they are before the change (a recount of a missing
	// summary must not see it)
	if err := s.loadSummary(); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	p, err := s.read(id, true)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	p.edit = true
	if err := p.repair(); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	p.start, p.opened = p.size, len(p.recs)
	return p, nil
}

// readPack reads a pack whole (nil when there is none).
func (s *Store) readPack(rel string) ([]byte, error) {
	data, _, err := s.fs.ReadFile(context.Background(), rel, maxPackRead)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name(rel), err)
	}
	return data, nil
}

// maxPackRead bounds the read of a pack: the per-page bound keeps packs far
// smaller, but a single revision may be a 32 MiB hand-edited page.
const maxPackRead = 1 << 30

// repair makes the pack's file what its valid part says: a torn tail is
// cut off; a damaged pack is set aside and its valid part written anew.
func (p *Page) repair() error {
	if p.onDisk < 0 || p.onDisk == p.size {
		return nil // no pack, or all of it is valid
	}
	if len(p.Problems) == 0 {
		// cut short by a crash: cut it off
		f, err := p.s.fs.OpenAppend(p.rel)
		if err != nil {
			return err
		}
		defer f.Close()
		if p.size == 0 {
			p.recs = nil
		}
		if err := f.Truncate(p.size); err != nil {
			return err
		}
		return f.Sync()
	}
	aside := orphansDir + "/" + p.id + "-damaged-" + strconv.FormatInt(p.s.now().UnixNano(), 10) + ".pack"
	if _, err := p.s.fs.MkdirAll(orphansDir); err != nil {
		return err
	}
	if err := p.s.fs.Rename(p.rel, aside, true); err != nil {
		return err
	}
	p.Problems = append(p.Problems, "the damaged file was set aside as "+name(aside))
	recs := p.recs
	p.recs, p.size = nil, 0
	return p.rewrite(recs)
}

// ID is the page id.
func (p *Page) ID() string { return p.id }

// Revisions lists the revisions, newest first.
func (p *Page) Revisions() []Revision {
	out := make([]Revision, 0, len(p.recs))
	for i := len(p.recs) - 1; i >= 0; i-- {
		out = append(out, p.recs[i].revision())
	}
	return out
}

// Newest is the newest revision (nil for a page without history).
func (p *Page) Newest() *Revision {
	if len(p.recs) == 0 {
		return nil
	}
	r := p.recs[len(p.recs)-1].revision()
	return &r
}

// Get returns revision rev (nil when the page has none of that number).
func (p *Page) Get(rev int) *Revision {
	if r := p.find(rev); r != nil {
		rv := r.revision()
		return &rv
	}
	return nil
}

// Bytes is what the page's history takes on disk.
func (p *Page) Bytes() int64 { return p.size }

func (p *Page) find(rev int) *record {
	i := sort.Search(len(p.recs), func(i int) bool { return p.recs[i].h.Rev >= rev })
	if i < len(p.recs) && p.recs[i].h.Rev == rev {
		return p.recs[i]
	}
	return nil
}

// Content returns the bytes of revision rev, checked against its sha256.
func (p *Page) Content(rev int) ([]byte, error) {
	r := p.find(rev)
	if r == nil {
		return nil, fmt.Errorf("no revision %d", rev)
	}
	data, err := p.content(r)
	return bytes.Clone(data), err // the page keeps its own
}

func (p *Page) content(r *record) ([]byte, error) {
	if r.content != nil {
		return r.content, nil
	}
	data, err := p.decode(r, 0)
	if err != nil {
		return nil, fmt.Errorf("revision %d of page %s: %w", r.h.Rev, p.id, err)
	}
	if shaHex(data) != r.h.SHA256 {
		return nil, fmt.Errorf("revision %d of page %s: its bytes do not match its sha256 (damaged)", r.h.Rev, p.id)
	}
	if r.keyframe() && p.edit {
		// the base of the deltas after it: decoded once (only under the
		// lock: the records of an open page may be the store's, lastPack)
		r.content = data
	}
	return data, nil
}

func (p *Page) decode(r *record, depth int) ([]byte, error) {
	if depth > 2 {
		return nil, errors.New("a chain of bases too long (damaged)")
	}
	switch r.h.Enc {
	case encRaw:
		if int64(len(r.payload)) != r.h.Size {
			return nil, errors.New("stored size differs from its size")
		}
		return r.payload, nil
	case encFlate:
		return inflate(r.payload, r.h.Size, true)
	case encSame, encDelta, encZDelta:
		b := p.find(r.h.Base)
		if b == nil || b.h.Rev >= r.h.Rev {
			return nil, fmt.Errorf("its base revision %d is missing", r.h.Base)
		}
		base, err := b.content, error(nil)
		if base == nil {
			base, err = p.decode(b, depth+1)
		}
		if err != nil || r.h.Enc == encSame {
			return base, err
		}
		d := r.payload
		if r.h.Enc == encZDelta {
			// a delta is at most its inserted bytes and a few per edit
			if d, err = inflate(d, 2*r.h.Size+maxPayloadLen/64, false); err != nil {
				return nil, err
			}
		}
		return applyDelta(base, d, r.h.Size)
	}
	return nil, fmt.Errorf("unknown encoding %q", r.h.Enc)
}

// Append records e as the page's newest revision: its bytes are written
// to the end of the pack (not yet flushed: see Sync) before it returns.
func (p *Page) Append(e Entry) (Revision, error) {
	if !p.edit {
		return Revision{}, errors.New("history: page opened for reading")
	}
	if e.Time.IsZero() {
		e.Time = p.s.now()
	}
	h := packHeader{Rev: 1, Time: e.Time.UTC().Format(time.RFC3339Nano),
		Op: e.Op, Origin: e.Origin, Path: e.Path, Title: e.Title, From: e.From, Moved: e.MovedFrom, MoveOf: e.MoveOf}
	if n := len(p.recs); n > 0 {
		h.Rev = p.recs[n-1].h.Rev + 1
	}
	b, r, err := p.encode(h, e.Content, p.size)
	if err != nil {
		return Revision{}, err
	}
	if err := p.write(b); err != nil {
		return Revision{}, err
	}
	p.recs = append(p.recs, r)
	p.size += int64(len(b))
	rv := r.revision()
	p.added = append(p.added, rv)
	return rv, nil
}

// encode makes the record of content with header h (its sha256, size and
// encoding filled in here) at offset off of the pack.
func (p *Page) encode(h packHeader, content []byte, off int64) ([]byte, *record, error) {
	h.SHA256, h.Size = shaHex(content), int64(len(content))
	b, r, err := p.frame(h, p.encodeContent(&h, content), off)
	if err == nil && r.keyframe() {
		r.content = bytes.Clone(content) // the base of the next deltas
	}
	return b, r, err
}

// frame makes the bytes of the record of h and payload at offset off of
// the pack (at offset 0 they begin with the pack's magic line). The path
// and title, when the page's last record has them too, are left out of
// the stored header (parsePack fills them in).
func (p *Page) frame(h packHeader, payload []byte, off int64) ([]byte, *record, error) {
	var b []byte
	if off == 0 {
		b = append(b, packMagic...)
	}
	start := len(b)
	stored := h
	if n := len(p.recs); n > 0 {
		if prev := p.recs[n-1].h; prev.Path == h.Path && prev.Title == h.Title {
			stored.Path, stored.Title = "", ""
		}
	}
	b, err := appendRecord(b, &stored, payload)
	if err != nil {
		return nil, nil, err
	}
	r := &record{h: h, off: off + int64(start), n: int64(len(b) - start)}
	r.t, _ = time.Parse(time.RFC3339Nano, h.Time)
	r.payload = b[len(b)-len(payload):]
	return b, r, nil
}

// encodeContent chooses h's encoding for content and returns the
// payload: a repeat of a revision the page has is a reference to it;
// otherwise the content is stored as its line edits from the page's
// newest whole revision (a delta) when those are small or at least twice
// as small as the content compressed on its own, else on its own (raw
// when compressing saves nothing). A delta's whole revision is less than
// deltaRun records back: see deltaRun.
func (p *Page) encodeContent(h *packHeader, content []byte) []byte {
	for i := len(p.recs) - 1; i >= 0; i-- {
		if r := p.recs[i]; r.h.SHA256 == h.SHA256 {
			h.Enc, h.Base = encSame, r.h.Rev
			if r.h.Enc == encSame {
				h.Base = r.h.Base
			}
			return nil
		}
	}
	var delta []byte
	denc, base := encDelta, 0
	for i := len(p.recs) - 1; i >= 0; i-- {
		if k := p.recs[i]; k.keyframe() {
			if len(p.recs)-i >= deltaRun {
				break // a whole revision starts the next run
			}
			if kc, err := p.content(k); err == nil {
				delta, base = makeDelta(kc, content), k.h.Rev
				if len(delta) > 128 {
					if z := deflate(delta); len(z) < len(delta) {
						delta, denc = z, encZDelta
					}
				}
			}
			break
		}
	}
	if delta != nil && len(delta) <= len(content)/8 {
		// a small edit: no need to compress the whole to know
		h.Enc, h.Base = denc, base
		return delta
	}
	h.Enc = encFlate
	whole := deflate(content)
	if len(whole) >= len(content) {
		h.Enc, whole = encRaw, content
	}
	if delta != nil && len(delta)*2 <= len(whole) {
		h.Enc, h.Base = denc, base
		return delta
	}
	return whole
}

// syncDir flushes a folder of the history's packs (tests count them).
var syncDir = func(fs *vaultfs.FS, dir string) error { return fs.SyncDir(dir) }

// deltaRun bounds a run of records that refer to one whole revision: the
// whole revision and at most deltaRun-1 records after it. When pruning
// drops a whole revision, the records that referred to it are encoded
// anew (decoded, then diffed against the first one kept), so the run is
// what one prune re-encodes at most; without the bound a page edited all
// day refers to one old revision, and a prune re-encoded every revision
// kept (90 diffs, some milliseconds of CPU). Pruning drops a tenth of the
// revisions at a time, so a tenth is also what a run costs in bytes: one
// whole revision, compressed, per ten.
const deltaRun = 10

// write appends b to the pack, creating it (and its folder) when absent.
// A pack is made in place by its first append: a crash that cuts that
// append short leaves a torn pack (or an empty one), which the next
// change cuts off and begins anew, as it does any append cut short.
func (p *Page) write(b []byte) error {
	if p.f == nil && p.onDisk >= 0 {
		f, err := p.s.fs.OpenAppend(p.rel)
		if err != nil {
			return fmt.Errorf("open %s: %w", name(p.rel), err)
		}
		if p.size == 0 {
			// a pack with nothing valid (cut off by repair): begun anew,
			// its entry in its folder flushed as a new pack's is
			if err := f.Truncate(0); err != nil {
				f.Close()
				return fmt.Errorf("open %s: %w", name(p.rel), err)
			}
			p.created = true
		}
		p.f = f
	}
	if p.f == nil {
		dir := path.Dir(p.rel)
		f, err := p.s.fs.CreateAppend(p.rel)
		if errors.Is(err, fs.ErrNotExist) {
			// the pack's folder is made once (1024 of them at most)
			made, merr := p.s.fs.MkdirAll(dir)
			if merr != nil {
				return fmt.Errorf("create %s: %w", name(dir), merr)
			}
			p.madeDir = p.madeDir || len(made) > 0
			f, err = p.s.fs.CreateAppend(p.rel)
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", name(p.rel), err)
		}
		p.f, p.created, p.onDisk = f, true, 0
	}
	if _, err := p.f.Write(b); err != nil {
		return fmt.Errorf("append to %s: %w", name(p.rel), err)
	}
	return nil
}

// Sync starts flushing the pack to stable storage — what this Page
// appended and whatever earlier appends left unflushed — with its folder
// entries when they may not be on disk yet, and returns a function that
// waits for it (the first error). The flushes run side by side, while the
// caller does other work. The pack stays open for a later Append (which
// may run while the flush does: it need not wait for it), and Close
// closes it. A page without a pack has nothing to flush.
//
// The pack's entry in its folder is flushed when this Page created the
// pack, or found it holding fewer than two revisions: a pack is created
// unflushed by a new page's one revision, and every change that gives a
// pack its second revision flushes the entry (the next write's Sync, or
// Close), as does every change that renames a pack (pruning, repair, a
// move). So a pack of two revisions or more has its entry on disk, and
// an edit of it costs one flush, the pack's.
func (p *Page) Sync() (wait func() error) {
	madeDir := p.madeDir
	p.madeDir, p.synced = false, true
	if p.f == nil && p.size > 0 {
		f, err := p.s.fs.OpenAppend(p.rel)
		if err != nil {
			return func() error { return err }
		}
		p.f = f
	}
	f := p.f
	if f == nil {
		return func() error { return nil }
	}
	// a Close meanwhile is safe: the descriptor is released once the
	// flush returns
	steps := []func() error{f.Sync}
	if p.created || madeDir || p.opened < 2 {
		// the pack's name in its folder (it may be new: a crash must not
		// lose the entry while keeping the bytes)
		steps = append(steps, func() error { return syncDir(p.s.fs, path.Dir(p.rel)) })
	}
	if madeDir {
		steps = append(steps, func() error { return p.s.fs.SyncDir(pagesDir) })
	}
	done := make(chan error, len(steps))
	for _, step := range steps {
		go func() { done <- step() }()
	}
	var once sync.Once
	var res error
	return func() error {
		once.Do(func() {
			for range steps {
				if err := <-done; err != nil && res == nil {
					res = err
				}
			}
		})
		return res
	}
}

// Close ends a change: the page's bounds are applied (its oldest
// revisions pruned, never the newest), the activity feed and the totals
// are brought up to date, and the Store's lock is released. It returns
// the problems met on the way (the appended revisions stand).
func (p *Page) Close() error {
	if !p.edit {
		return nil
	}
	p.edit = false
	defer p.s.mu.Unlock()
	var errs []error
	var st fs.FileInfo // the pack as this change left it, unless pruned
	if p.f != nil {
		st, _ = p.f.Stat()
		if err := p.f.Close(); err != nil {
			errs = append(errs, err)
		}
		p.f = nil
	}
	if !p.synced && p.opened < 2 && len(p.recs) > 1 {
		// a pack created unflushed gets its second revision unflushed
		// (a scan's record of a hand edit): its entry must reach the
		// disk now, as Sync says
		if err := syncDir(p.s.fs, path.Dir(p.rel)); err != nil {
			errs = append(errs, err)
		}
	}
	grown, added := p.size-p.start, len(p.added)
	pruned, freed, err := p.prune(p.s.limits)
	if err != nil {
		errs = append(errs, err)
	}
	if pruned > 0 {
		st = nil // rewritten: another file
	}
	p.s.remember(p, st, len(errs) == 0 && len(p.Problems) == 0)
	if added > 0 || pruned > 0 || p.carried {
		disk := blocks(p.size) - blocks(p.start)
		if err := p.s.account(p.start == 0 && grown > 0, added-pruned, grown-freed, disk, pruned, freed); err != nil {
			errs = append(errs, err)
		}
		if err := p.s.appendRecent(p.id, p.added); err != nil {
			errs = append(errs, err)
		}
	}
	p.added = nil
	return errors.Join(errs...)
}

// Has reports whether page id has a history.
func (s *Store) Has(id string) bool {
	if !validID(id) || s.ready(false) != nil {
		return false
	}
	st, err := s.fs.Stat(packPath(id))
	return err == nil && st.Size() > 0
}

// EditMoved carries the history of page from to page to (a page moved to
// another file has another id) and opens it for changes, as Edit: the
// caller appends the move's revision. A history that page to had (a page
// deleted from that file earlier) is set aside under orphans/.
func (s *Store) EditMoved(from, to string) (*Page, error) {
	if !validID(from) {
		return nil, badID(from)
	}
	if from == to || !s.Has(from) {
		return s.Edit(to)
	}
	if !validID(to) {
		return nil, badID(to)
	}
	s.mu.Lock()
	err := s.carry(from, to)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	p, err := s.Edit(to)
	if p != nil {
		p.carried = true
	}
	return p, err
}

// carry renames the pack of from to the pack of to. The lock is held.
func (s *Store) carry(from, to string) error {
	src, dst := packPath(from), packPath(to)
	if s.Has(to) {
		if err := s.loadSummary(); err != nil {
			return err
		}
		old, err := s.Read(to)
		if err != nil {
			return err
		}
		if _, err := s.fs.MkdirAll(orphansDir); err != nil {
			return err
		}
		aside := orphansDir + "/" + to + "-replaced-" + strconv.FormatInt(s.now().UnixNano(), 10) + ".pack"
		if err := s.fs.Rename(dst, aside, true); err != nil {
			return err
		}
		s.sum.Pages--
		s.sum.Revisions -= len(old.recs)
		s.sum.Bytes -= old.size
		s.sum.DiskBytes -= blocks(old.size)
	}
	made, err := s.fs.MkdirAll(path.Dir(dst))
	if err != nil {
		return err
	}
	if err := s.fs.Rename(src, dst, true); err != nil {
		return err
	}
	// both folders' entries, so that a crash leaves the pack in one place
	for _, d := range []string{path.Dir(src), path.Dir(dst)} {
		if err := s.fs.SyncDir(d); err != nil {
			return err
		}
	}
	if len(made) > 0 {
		return s.fs.SyncDir(pagesDir)
	}
	return nil
}
