package vaultfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"sort"
)

// Entry is one file or folder a walk meets.
type Entry struct {
	// Path is vault-relative, with forward slashes.
	Path string
	// Info describes the file or folder (for a symlink that stays inside
	// the reader's root: what it leads to). Nil when Refused is set.
	Info fs.FileInfo
	// Link is true when the entry was reached through a symlink (itself,
	// or a folder on the way): readable, but never written through.
	Link bool
	// Refused is set for what the walk skips and reports: special files,
	// symlinks that lead out or loop, folders and files that cannot be
	// read.
	Refused *Refusal
}

// Walk calls fn for every folder, file and refused entry under the given
// paths (vault-relative; a path may name a file, and one that does not
// exist is skipped), each folder's entries in name order. fn returning
// fs.SkipDir for a folder skips it; another error stops the walk.
//
// Folders are walked without following symlinks; then the symlinked
// folders met (those that stay inside the reader's root) are walked under
// their link's path, unless the folder they lead to was walked already —
// so a folder is walked once, under its real path when it has one, and a
// symlink loop ends. The vault root and .synapse/ are never entered
// through a link. ctx cancels the walk between entries.
func (r *Reader) Walk(ctx context.Context, paths []string, fn func(Entry) error) error {
	w := &walker{r: r, ctx: ctx, fn: fn, seen: newSeen()}
	for _, p := range []string{"", stateDir} {
		if st, err := os.Stat(r.fs.Abs(p)); err == nil {
			w.seen.add(st)
		}
	}
	for _, p := range paths {
		if err := w.start(p); err != nil {
			return err
		}
	}
	for len(w.links) > 0 {
		p := w.links[0]
		w.links = w.links[1:]
		if err := w.follow(p); err != nil {
			return err
		}
	}
	return nil
}

type walker struct {
	r     *Reader
	ctx   context.Context
	fn    func(Entry) error
	seen  *seen
	links []string // symlinked folders, walked after the real ones
}

// start walks one of the given paths.
func (w *walker) start(p string) error {
	c, in, err := w.r.inRoot(p)
	if err != nil {
		if rf, ok := AsRefusal(err); ok {
			return w.emit(Entry{Path: c, Refused: rf})
		}
		return err
	}
	st, err := w.r.root.Lstat(in)
	if err != nil {
		return w.problem(c, openError(c, w.r.where(), err))
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return w.link(c)
	}
	if !st.IsDir() {
		return w.file(c, st, false)
	}
	d, err := w.r.root.Open(in)
	if err != nil {
		return w.problem(c, openError(c, w.r.where(), err))
	}
	defer d.Close()
	ds, err := d.Stat()
	if err != nil || !ds.IsDir() {
		return nil // swapped meanwhile: the next scan sees it
	}
	if w.seen.has(ds) {
		return nil
	}
	w.seen.add(ds)
	return w.dir(c, d, false)
}

// follow walks a symlinked folder (queued by link) unless what it leads to
// was walked already.
func (w *walker) follow(p string) error {
	_, in, err := w.r.inRoot(p)
	if err != nil {
		return nil
	}
	d, err := w.r.root.Open(in)
	if err != nil {
		return w.problem(p, openError(p, w.r.where(), err))
	}
	defer d.Close()
	ds, err := d.Stat()
	if err != nil || !ds.IsDir() || w.seen.has(ds) {
		return nil
	}
	w.seen.add(ds)
	return w.dir(p, d, true)
}

// emit calls fn, turning its SkipDir for a non-folder into nil.
func (w *walker) emit(e Entry) error {
	err := w.fn(e)
	if errors.Is(err, fs.SkipDir) {
		return nil
	}
	return err
}

// problem reports an entry that cannot be walked: a refusal as such, a
// missing one not at all, anything else as unreadable.
func (w *walker) problem(p string, err error) error {
	if rf, ok := AsRefusal(err); ok {
		return w.emit(Entry{Path: p, Refused: rf})
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	why := "unreadable: " + ErrText(err)
	return w.emit(Entry{Path: p, Refused: refuse(p, Unreadable, "%s", why)})
}

// file reports a file met by its own name (not a folder).
func (w *walker) file(p string, st fs.FileInfo, link bool) error {
	switch {
	case st.Mode().IsRegular():
		return w.emit(Entry{Path: p, Info: st, Link: link})
	case st.Mode()&fs.ModeSymlink != 0:
		return w.link(p)
	}
	return w.emit(Entry{Path: p, Refused: notRegular(p, st.Mode())})
}

// link resolves a symlink inside the reader's root: a file is reported as
// a linked entry, a folder queued for the second pass, one that leads out
// or loops refused, a dangling one skipped.
func (w *walker) link(p string) error {
	_, in, err := w.r.inRoot(p)
	if err != nil {
		return w.problem(p, err)
	}
	st, err := w.r.root.Stat(in)
	if err != nil {
		return w.problem(p, openError(p, w.r.where(), err))
	}
	switch {
	case st.IsDir():
		err := w.fn(Entry{Path: p, Info: st, Link: true})
		if errors.Is(err, fs.SkipDir) {
			return nil
		}
		if err != nil {
			return err
		}
		w.links = append(w.links, p)
		return nil
	case st.Mode().IsRegular():
		return w.emit(Entry{Path: p, Info: st, Link: true})
	}
	return w.emit(Entry{Path: p, Refused: notRegular(p, st.Mode())})
}

// dir walks the open folder d at vault path p.
func (w *walker) dir(p string, d *os.File, link bool) error {
	names, err := d.Readdirnames(-1)
	if err != nil {
		return w.problem(p, err)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		cp := path.Join(p, name)
		st, err := lstatAt(d, w.r, cp, name)
		if err != nil {
			if err := w.problem(cp, err); err != nil {
				return err
			}
			continue
		}
		if !st.IsDir() {
			if err := w.file(cp, st, link); err != nil {
				return err
			}
			continue
		}
		err = w.fn(Entry{Path: cp, Info: st, Link: link})
		if errors.Is(err, fs.SkipDir) {
			continue
		}
		if err != nil {
			return err
		}
		sub, err := openSub(d, w.r, cp, name)
		if err != nil {
			if err := w.problem(cp, err); err != nil {
				return err
			}
			continue
		}
		ss, err := sub.Stat()
		if err == nil && ss.IsDir() && !w.seen.has(ss) {
			w.seen.add(ss)
			err = w.dir(cp, sub, link)
		}
		sub.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// ErrText is a path error's cause alone ("permission denied"), the error
// itself otherwise.
func ErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
