package index

import (
	"context"
	"errors"
	"io/fs"
	"sort"
	"time"

	"github.com/synapse-wiki/synapse/store"
)

// mappedLimit is the resident set a bulk scan keeps to, as far as the
// store's mapped pages make it up (store.GovernMapped): the Go heap runs
// up to its 200 MiB limit, the pages of the store fill the rest, and a
// reindex of 100,000 pages peaks under 400 MB.
const mappedLimit = 300 << 20

// scanRun is one Scan in progress: what it found on disk, what it must
// read and remove, and how far it got.
type scanRun struct {
	ix    *Indexer
	ctx   context.Context
	opts  ScanOptions
	kept  map[string]string // Indexer.KeptIDs, once read
	rep   *Report
	rp    *reparse // records parsed by another parser version (reparse.go)
	bulk  bool     // the index is built as a whole (begin)
	fresh bool     // the store held no pages when the scan began
	rd    *readers

	disk  []diskFile // what the walk found, sorted by path
	roots []string
	todo  []diskFile               // new and changed files, to read
	gone  []string                 // recorded files no longer on disk
	known map[string]store.FileRec // the records of the files in todo
	total int                      // len(todo) + len(gone)
	done  int                      // files applied so far
	then  bool                     // opts.Then ran in a batch's transaction
}

// Scan brings the store in step with the files (docs/vault.md#keeping-the-index-current): unchanged files
// (same size and mtime) are not read; changed ones are read once, hashed,
// and re-indexed only if the hash changed; vanished ones are removed.
func (ix *Indexer) Scan(ctx context.Context, opts ScanOptions) (*Report, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	start := time.Now()
	s := &scanRun{ix: ix, ctx: ctx, opts: opts, known: map[string]store.FileRec{},
		rep: &Report{New: []string{}, Changed: []string{}, Deleted: []string{}, Refused: []Refused{}}}
	if !opts.Full {
		// records parsed by another version of the parser are re-parsed
		// in place, once, by a scan of the whole vault (reparse.go)
		var err error
		if s.rp, err = ix.startReparse(); err != nil {
			return nil, err
		} else if s.rp != nil {
			s.opts.Paths = nil
		}
		// a search index built by other rules is rebuilt alone (fillPages)
		if err := ix.resetStalePages(); err != nil {
			return nil, err
		}
	}
	ix.act.Store(&Activity{Phase: "scan", Since: start})
	defer ix.act.Store(nil)
	if opts.Full {
		// dropping the old index reads all of it
		defer ix.Store.GovernMapped(mappedLimit)()
	}
	var err error
	if s.bulk, s.fresh, err = ix.begin(s.opts); err != nil {
		return nil, err
	}
	if s.bulk {
		ix.act.Store(&Activity{Phase: "scan", Rebuild: true, Since: start})
		if !opts.Full {
			defer ix.Store.GovernMapped(mappedLimit)()
		}
		// the index is built as a whole: its postings are staged
		defer ix.Store.StageSearch()()
	}
	// postings a killed bulk left staged go into place before anything
	// else changes the index
	if err := ix.flushStage(ctx); err != nil {
		return nil, err
	}
	if s.rd, err = ix.openReaders(); err != nil {
		return nil, err
	}
	defer s.rd.close()
	if err := s.run(); err != nil {
		return nil, err
	}
	s.rep.DurationMS = time.Since(start).Milliseconds()
	return s.rep, nil
}

// run is the scan's steps once its readers are open.
func (s *scanRun) run() error {
	var err error
	if s.disk, s.roots, err = s.ix.walk(s.ctx, s.rd, s.rep, s.opts.Paths); err != nil {
		return err
	}
	if err := s.ix.Store.View(s.compare); err != nil {
		return err
	}
	sort.Strings(s.gone)
	s.gone = dedupeSorted(s.gone)
	s.total = len(s.todo) + len(s.gone)
	if err := s.removeGone(); err != nil {
		return err
	}
	if err := s.applyChanged(); err != nil {
		return err
	}
	return s.finish()
}

// compare sets the scan's todo, gone and known from the store's file
// records (one read transaction, no file contents). disk is sorted by
// path, as are the records under each root: one ordered pass over those
// records finds the gone, the unchanged and the changed without a lookup
// per file; known holds only the records of files that will be read.
func (s *scanRun) compare(tx *store.Tx) error {
	var err error
	if s.disk, err = s.ix.dropTwins(tx, s.disk, s.rep); err != nil {
		return err
	}
	s.rep.Scanned = len(s.disk)
	disk := s.disk
	checked := make([]bool, len(disk))
	find := func(p string) int {
		i := sort.Search(len(disk), func(i int) bool { return disk[i].path >= p })
		if i < len(disk) && disk[i].path == p {
			return i
		}
		return -1
	}
	compare := func(i int, f store.FileRec) {
		checked[i] = true
		d := disk[i]
		if s.rp.wants(d.path, f) {
			disk[i].reparse = true // read again, whatever its stat says
		} else if f.Size == d.size && f.MtimeNS == d.mtimeNS && (!f.Racy() || f.Kind == store.KindAsset) {
			s.rep.Unchanged++
			return
		}
		s.known[d.path] = f
	}
	visit := func(p string, f store.FileRec) {
		if i := find(p); i < 0 {
			s.gone = append(s.gone, p)
		} else if !checked[i] {
			compare(i, f)
		}
	}
	for _, root := range s.roots {
		// the root itself when it was a file, and everything under it
		if f, ok, err := tx.File(root); err != nil {
			return err
		} else if ok {
			visit(root, f)
		}
		if err := tx.EachFile(root+"/", func(p string, f store.FileRec) bool {
			visit(p, f)
			return true
		}); err != nil {
			return err
		}
	}
	for i, d := range disk {
		if !checked[i] {
			// no record under a root as spelled: look it up
			f, ok, err := tx.File(d.path)
			if err != nil {
				return err
			}
			if !ok {
				s.todo = append(s.todo, d) // new
				continue
			}
			compare(i, f)
		}
		if _, ok := s.known[d.path]; ok {
			s.todo = append(s.todo, disk[i]) // size or mtime changed, or re-parsed
		}
	}
	return nil
}

// removeGone removes the records of vanished files first, in bounded
// transactions.
func (s *scanRun) removeGone() error {
	ix, rep := s.ix, s.rep
	for i := 0; i < len(s.gone); i += batchFiles {
		chunk := s.gone[i:min(i+batchFiles, len(s.gone))]
		err := ix.Store.Update(func(tx *store.Tx) error {
			u := s.ix.newUpdater(tx)
			for _, p := range chunk {
				if err := u.removePage(p); err != nil {
					return err
				}
				rep.add(&rep.Deleted, &rep.DeletedCount, p)
			}
			return u.finish(ix.Pages)
		})
		if err != nil {
			return err
		}
		s.done += len(chunk)
		ix.progress("index", s.done, s.total)
	}
	return nil
}

// preparedBatch is one batch of files read and parsed, and how many files
// of todo it covers.
type preparedBatch struct {
	items []prepared
	n     int
}

// applyChanged applies the changed and new files in batches: each is read
// and parsed outside any transaction, then applied in one write
// transaction; the next batch is read and parsed while the current one is
// applied.
func (s *scanRun) applyChanged() error {
	phase := "index"
	if s.rp != nil {
		phase = "reparse"
	}
	// a scan that returns early (an error, a cancellation) stops the
	// reader goroutine and waits for it: its reads go through rd, which
	// is closed when Scan returns
	stop := make(chan struct{})
	pctx, pcancel := context.WithCancel(s.ctx)
	readerDone := make(chan struct{})
	defer func() {
		close(stop)
		pcancel()
		<-readerDone
	}()
	// unbuffered: the reader parses one batch ahead of the one applied,
	// never two (a parsed batch is tens of megabytes at 1000 pages, and a
	// reindex of 100,000 pages runs with its heap near the memory limit,
	// where every megabyte held makes the collector run more often)
	batches := make(chan preparedBatch)
	go func() {
		defer close(readerDone)
		defer close(batches)
		s.readAhead(pctx, batches, stop)
	}()
	for pb := range batches {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		var changed []ChangedPage
		err := s.ix.Store.Update(func(tx *store.Tx) error {
			var err error
			changed, err = s.applyBatch(tx, pb)
			return err
		})
		if err != nil {
			return err
		}
		if len(changed) > 0 {
			s.ix.OnChanged(changed)
		}
		s.done += pb.n
		if s.bulk {
			s.ix.Store.ReleaseMapped()
		}
		s.ix.progress(phase, s.done, s.total)
	}
	return nil
}

// readAhead reads and parses todo in batches bounded by file count and
// bytes, and sends each on batches until done or stopped.
func (s *scanRun) readAhead(ctx context.Context, batches chan<- preparedBatch, stop <-chan struct{}) {
	limit := batchFiles
	if s.rp != nil {
		limit = or(s.ix.tune.reparseBatch, batchFiles)
	}
	todo := s.todo
	for i := 0; i < len(todo); {
		j, bytes := i, int64(0)
		for j < len(todo) && j-i < limit && bytes < batchBytes {
			bytes += todo[j].size
			j++
		}
		items := s.ix.prepare(ctx, s.rd, todo[i:j], s.known)
		if s.bulk {
			s.ix.preparePages(items)
		}
		select {
		case batches <- preparedBatch{items, j - i}:
		case <-stop:
			return
		}
		i = j
	}
}

// applyBatch applies one prepared batch in tx and returns the pages that
// changed on disk (for Indexer.OnChanged).
func (s *scanRun) applyBatch(tx *store.Tx, pb preparedBatch) ([]ChangedPage, error) {
	var changed []ChangedPage
	u := s.ix.newUpdater(tx)
	u.bulk = s.bulk
	u.keepID = s.keepID
	u.track = !s.bulk && len(pb.items) <= smallSettle
	for _, it := range pb.items {
		c, err := s.applyItem(tx, u, it)
		if err != nil {
			return nil, err
		}
		if c != nil {
			changed = append(changed, *c)
		}
	}
	if !s.bulk {
		// a small change settles in the same transaction: one
		// commit for a page write or an editor's save
		if err := u.settleSmall(); err != nil {
			return nil, err
		}
	}
	if err := s.rp.committed(tx, pb.items); err != nil {
		return nil, err
	}
	if err := u.finish(s.ix.Pages); err != nil {
		return nil, err
	}
	if s.opts.Then != nil && !s.bulk && s.rp == nil && s.done+pb.n == s.total && tx.LinksDirtyCount() == 0 && tx.Meta(metaGraphStale) == nil {
		s.then = true
		return changed, s.opts.Then(tx)
	}
	return changed, nil
}

// applyItem applies one read file: a refusal, a touch (same bytes), a
// change or a new file. It returns the page when its bytes changed on disk
// and the caller did not write it.
func (s *scanRun) applyItem(tx *store.Tx, u *updater, it prepared) (*ChangedPage, error) {
	rep := s.rep
	if it.err != nil {
		// vanished or unreadable since the walk (a file swapped
		// for a named pipe is refused): the next scan sees it
		if !errors.Is(it.err, fs.ErrNotExist) && s.ctx.Err() == nil {
			rep.refuse(it.d.path, it.err)
		}
		return nil, nil
	}
	var changed *ChangedPage
	old, had := s.known[it.d.path]
	switch {
	case had && old.SHA256 == it.file.SHA256 && old.Kind == it.file.Kind:
		// touched, not changed: remember the new size and mtime
		it.file.FirstSeen, it.file.LastChanged, it.file.Doc = old.FirstSeen, old.LastChanged, old.Doc
		if it.parsed == nil {
			rep.Unchanged++
			return nil, tx.PutFile(it.d.path, it.file)
		}
		rep.Reparsed++ // the same bytes, parsed again (reparse.go)
	case had:
		it.file.FirstSeen = old.FirstSeen
		// the bytes changed after the previous read, whatever
		// the mtime says (cp -p and rsync -a keep old mtimes)
		it.file.LastChanged = max(it.file.LastChanged, old.HashedNS)
		rep.add(&rep.Changed, &rep.ChangedCount, it.d.path)
		if it.data != nil && !s.opts.OwnWrite {
			changed = &ChangedPage{Path: it.d.path, Data: it.data, MtimeNS: it.d.mtimeNS}
		}
	default:
		rep.add(&rep.New, &rep.NewCount, it.d.path)
	}
	if it.parsed != nil {
		return changed, u.applyPage(pageChange{path: it.d.path, file: it.file, parsed: it.parsed, pre: it.pre})
	}
	return changed, u.putFile(it.d.path, it.file)
}

// finish settles what the batches left pending, finishes a re-parse and
// the pages' search data, records the scan and runs opts.Then if no batch
// ran it.
func (s *scanRun) finish() error {
	ix := s.ix
	if err := ix.flushStage(s.ctx); err != nil {
		return err
	}
	if err := ix.settle(s.ctx, s.fresh); err != nil {
		return err
	}
	if err := ix.finishReparse(s.rp); err != nil {
		return err
	}
	if err := ix.fillPages(s.ctx, s.rd); err != nil {
		return err
	}
	// the refused list and the scan mark; a scan of a few paths that
	// found nothing refused, where none was refused before, has nothing
	// to record (an empty write transaction still costs two fdatasyncs)
	record := len(s.opts.Paths) == 0 || len(s.rep.refused) > 0
	if !record {
		_ = ix.Store.View(func(tx *store.Tx) error {
			old := RefusedFiles(tx)
			record = len(old.Files) > 0 || old.Count > 0
			return nil
		})
	}
	if record {
		if err := ix.recordScan(s.roots, s.rep, len(s.opts.Paths) == 0); err != nil {
			return err
		}
	}
	if s.opts.Then != nil && !s.then {
		return ix.Store.Update(s.opts.Then)
	}
	return nil
}

// keepID is the id a page new at path keeps (ScanOptions.KeepIDs, then
// Indexer.KeptIDs, read once), "" for none.
func (s *scanRun) keepID(path string) string {
	if id := s.opts.KeepIDs[path]; id != "" {
		return id
	}
	if s.kept == nil {
		s.kept = map[string]string{}
		if s.ix.KeptIDs != nil {
			if m := s.ix.KeptIDs(); m != nil {
				s.kept = m
			}
		}
	}
	return s.kept[path]
}
