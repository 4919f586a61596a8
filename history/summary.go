package history

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/vaultfs"
)

// Summary is the history's totals. They travel with the activity feed:
// each line of recent.jsonl carries the totals after its change, so the
// last line is the summary and a change costs one append. A crash between
// a change and its line leaves them off by that change until the next
// recount (a feed that is missing or holds no totals, and every pass of
// the total bound, count again).
type Summary struct {
	Pages     int   `json:"pages"`     // pages with a history
	Revisions int   `json:"revisions"` // revisions kept
	Bytes     int64 `json:"bytes"`     // bytes of the packs
	// DiskBytes is what the packs take on disk, counted in 4 KiB blocks
	// (a small pack takes a whole block): the total bound applies to it.
	DiskBytes int64 `json:"disk_bytes"`
	// PrunedRevisions and PrunedBytes count what the bounds have dropped
	// since the history began; LastPruned is when they last did (RFC 3339).
	PrunedRevisions int    `json:"pruned_revisions"`
	PrunedBytes     int64  `json:"pruned_bytes"`
	LastPruned      string `json:"last_pruned,omitempty"`
	// Recounted is when the totals were last counted from the packs.
	Recounted string `json:"recounted,omitempty"`
}

// Summary returns the history's totals.
func (s *Store) Summary() (Summary, error) {
	if err := s.ready(false); errors.Is(err, errNoHistory) {
		return Summary{}, nil
	} else if err != nil {
		return Summary{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropStaleSummary()
	if s.sum != nil {
		return *s.sum, nil
	}
	// a reader counts without recording what it counted (a writer may
	// be appending to the feed meanwhile)
	sum, ok, err := s.lastTotals()
	if err != nil || ok {
		return sum, err
	}
	old := s.sum
	defer func() { s.sum = old }()
	if _, err := s.recount(nil); err != nil {
		return Summary{}, err
	}
	return *s.sum, nil
}

// loadSummary reads the totals once: the newest line of the feed that
// carries them, else a count of the packs, recorded in the feed. The
// lock is held by a writer (Edit).
func (s *Store) loadSummary() error {
	s.dropStaleSummary()
	if s.sum != nil {
		return nil
	}
	sum, ok, err := s.lastTotals()
	if err != nil {
		return err
	}
	if ok {
		s.sum = &sum
		return nil
	}
	if _, err := s.recount(nil); err != nil {
		return err
	}
	return s.appendRecent("", nil)
}

// account adds a change to the totals and applies the total bound. The
// lock is held.
func (s *Store) account(newPage bool, revs int, bytes, disk int64, pruned int, freed int64) error {
	if err := s.loadSummary(); err != nil {
		return err
	}
	if newPage {
		s.sum.Pages++
	}
	s.sum.Revisions += revs
	s.sum.Bytes += bytes
	s.sum.DiskBytes += disk
	s.notePruned(pruned, freed)
	if s.sum.DiskBytes > s.limits.TotalBytes {
		return s.pruneTotal()
	}
	return nil
}

func (s *Store) notePruned(n int, freed int64) {
	if n > 0 {
		s.sum.PrunedRevisions += n
		s.sum.PrunedBytes += freed
		s.sum.LastPruned = s.now().UTC().Format(time.RFC3339)
	}
}

// packInfo is what a recount keeps of one pack.
type packInfo struct {
	id   string
	revs []revInfo // oldest first
}

type revInfo struct {
	t      time.Time
	stored int64
}

// recount counts the packs anew into s.sum (keeping its pruning counts);
// with keep set it also returns each pack's revisions. The lock is held.
func (s *Store) recount(keep func(packInfo)) (int, error) {
	old := s.sum
	sum := Summary{Recounted: s.now().UTC().Format(time.RFC3339)}
	if old != nil {
		sum.PrunedRevisions, sum.PrunedBytes, sum.LastPruned = old.PrunedRevisions, old.PrunedBytes, old.LastPruned
	}
	n := 0
	err := s.eachPack(func(id string) error {
		data, err := s.readPack(packPath(id))
		if err != nil {
			return err
		}
		recs, valid, _ := parsePack(data)
		if len(recs) == 0 {
			return nil
		}
		n++
		sum.Pages++
		sum.Revisions += len(recs)
		sum.Bytes += valid
		sum.DiskBytes += blocks(valid)
		if keep != nil {
			pi := packInfo{id: id, revs: make([]revInfo, len(recs))}
			for i, r := range recs {
				pi.revs[i] = revInfo{t: r.t, stored: r.n}
			}
			keep(pi)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.sum = &sum
	return n, nil
}

// eachPack calls fn with the id of every pack, in path order.
func (s *Store) eachPack(fn func(id string) error) error {
	if st, err := s.fs.Stat(pagesDir); err != nil || !st.IsDir() {
		return nil // no history yet
	}
	rd, err := s.fs.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	return rd.Walk(context.Background(), []string{pagesDir}, func(e vaultfs.Entry) error {
		if e.Refused != nil || e.Info == nil || e.Info.IsDir() || e.Link {
			return nil
		}
		name := e.Path[strings.LastIndexByte(e.Path, '/')+1:]
		id, ok := strings.CutSuffix(name, ".pack")
		if !ok || !validID(id) || e.Path != packPath(id) {
			return nil
		}
		return fn(id)
	})
}

// pruneTotal brings the whole history under 90% of its total bound by
// dropping the oldest revisions of every page (never a page's newest),
// then counts again. The lock is held.
func (s *Store) pruneTotal() error {
	type cand struct {
		pack int
		idx  int
		t    time.Time
		n    int64
	}
	for pass := 0; pass < 3 && s.sum.DiskBytes > s.limits.TotalBytes; pass++ {
		var packs []packInfo
		var cands []cand
		if _, err := s.recount(func(pi packInfo) {
			for i := 0; i < len(pi.revs)-1; i++ {
				cands = append(cands, cand{len(packs), i, pi.revs[i].t, pi.revs[i].stored})
			}
			packs = append(packs, pi)
		}); err != nil {
			return err
		}
		over := s.sum.DiskBytes - s.limits.TotalBytes*9/10
		if over <= 0 || len(cands) == 0 {
			return nil
		}
		sort.Slice(cands, func(i, j int) bool { return cands[i].t.Before(cands[j].t) })
		drop := map[int]int{} // pack → how many of its oldest revisions go
		for _, c := range cands {
			if over <= 0 {
				break
			}
			// a page's revisions go oldest first: c is its next one
			if drop[c.pack] == c.idx {
				drop[c.pack]++
				over -= c.n
			}
		}
		for pi, k := range drop {
			if err := s.dropOldest(packs[pi].id, k); err != nil {
				return err
			}
		}
		if _, err := s.recount(nil); err != nil {
			return err
		}
	}
	return nil
}

// dropOldest rewrites the pack of page id without its k oldest revisions
// (never the newest) and counts them as pruned. The lock is held.
func (s *Store) dropOldest(id string, k int) error {
	p, err := s.Read(id)
	if err != nil {
		return err
	}
	k = min(k, len(p.recs)-1)
	if k <= 0 || len(p.Problems) > 0 {
		return nil
	}
	before := p.size
	if err := p.rewrite(p.recs[k:]); err != nil {
		return err
	}
	s.notePruned(k, before-p.size)
	return nil
}

// blocks is what a file of n bytes takes on a file system of 4 KiB blocks.
func blocks(n int64) int64 { return (n + 4095) / 4096 * 4096 }

// dropStaleSummary forgets the totals of a history folder that was
// replaced since they were counted. The lock is held.
func (s *Store) dropStaleSummary() {
	if s.sumStale.Swap(false) {
		s.sum = nil
	}
}
