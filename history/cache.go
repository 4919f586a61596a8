package history

import "io/fs"

// lastPack is the pack the last change of the history left, as it was
// parsed and written then (Store.last): the next Edit of the same page
// takes it instead of reading and parsing the file again, when the file
// is still the one it was (packIdent: the same file, size and change
// time; a pack rewritten, replaced, moved or appended to by anyone else
// is another). Its records are never changed, only replaced (an Append
// adds records to a copy of the list).
type lastPack struct {
	id    string
	ident packIdent
	recs  []*record
	size  int64
}

// maxLastPack bounds the pack kept parsed (its records hold its bytes).
const maxLastPack = 1 << 20

// remember keeps p's pack as the last one when it may be taken again
// (see lastPack); otherwise the last one is forgotten. st is the pack as
// the change left it, stat'ed through its open file (nil: stat'ed here
// by its path). The lock is held.
func (s *Store) remember(p *Page, st fs.FileInfo, ok bool) {
	s.last = nil
	if !ok || p.size == 0 || p.size > maxLastPack {
		return
	}
	if st == nil {
		var err error
		if st, err = s.fs.Stat(p.rel); err != nil {
			return
		}
	}
	if st.Size() != p.size {
		return
	}
	if id, known := identOf(st); known {
		s.last = &lastPack{id: p.id, ident: id, recs: p.recs, size: p.size}
	}
}

// same reports whether st is the file the identity was taken of, as it
// was then.
func (i packIdent) same(st fs.FileInfo) bool {
	j, ok := identOf(st)
	return ok && i == j && st.Size() == i.size
}
