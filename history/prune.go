package history

import (
	"fmt"
	"path"
)

// Pruning keeps a page's history within its bounds by dropping its oldest
// revisions, never its newest. A page over a bound is brought to 90% of it,
// so that the pack is not rewritten on every write once it is full.

// prune applies the per-page bounds l. It returns the revisions dropped
// and the bytes they took.
func (p *Page) prune(l Limits) (n int, freed int64, err error) {
	for try := 0; try < 4; try++ {
		count := len(p.recs)
		if count <= 1 || (count <= l.PageRevisions && p.size <= l.PageBytes) {
			return n, freed, nil
		}
		keep := count
		if count > l.PageRevisions {
			keep = max(1, l.PageRevisions-l.PageRevisions/10)
		}
		if p.size > l.PageBytes {
			// the newest records whose stored bytes fit in 90% (the
			// rewrite may store a kept delta whole, hence the loop)
			var b int64
			k := 0
			for i := count - 1; i >= 0 && k < keep; i-- {
				b += p.recs[i].n
				if k > 0 && b > l.PageBytes*9/10 {
					break
				}
				k++
			}
			keep = k
		}
		before := p.size
		if err := p.rewrite(p.recs[count-keep:]); err != nil {
			return n, freed, err
		}
		n += count - keep
		freed += before - p.size
	}
	return n, freed, nil
}

// rewrite replaces the pack with one holding recs (records of this page,
// oldest first, their numbers kept): written to a temporary file, flushed,
// then renamed over the pack. A record keeps its stored bytes unless it
// refers to a revision that is not kept (a delta or repeat of a dropped
// revision): that one is encoded anew from its content.
func (p *Page) rewrite(recs []*record) error {
	q := &Page{s: p.s, id: p.id, rel: p.rel}
	kept := map[int]bool{}
	var b []byte
	for _, r := range recs {
		var rb []byte
		var nr *record
		var err error
		if r.keyframe() || kept[r.h.Base] {
			rb, nr, err = q.frame(r.h, r.payload, int64(len(b)))
		} else {
			var content []byte
			if content, err = p.content(r); err != nil {
				return fmt.Errorf("prune the history of page %s: %w", p.id, err)
			}
			rb, nr, err = q.encode(r.h, content, int64(len(b)))
		}
		if err != nil {
			return err
		}
		b = append(b, rb...)
		q.recs = append(q.recs, nr)
		kept[r.h.Rev] = true
	}
	if err := p.s.writeFile(p.rel, b, true); err != nil {
		return err
	}
	p.recs, p.size = q.recs, int64(len(b))
	return nil
}

// writeFile writes data to rel atomically (a temporary file renamed over
// it), flushed to disk when durable is set.
func (s *Store) writeFile(rel string, data []byte, durable bool) error {
	dir := path.Dir(rel)
	if _, err := s.fs.MkdirAll(dir); err != nil {
		return fmt.Errorf("create %s: %w", name(dir), err)
	}
	f, err := s.fs.CreateTemp(dir, "."+path.Base(rel)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", name(rel), err)
	}
	tmp := dir + "/" + path.Base(f.Name())
	_, err = f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.fs.Rename(tmp, rel, false)
	}
	if err != nil {
		_ = s.fs.Remove(tmp)
		return fmt.Errorf("write %s: %w", name(rel), err)
	}
	if durable {
		return s.fs.SyncDir(dir)
	}
	return nil
}
