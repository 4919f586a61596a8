//go:build !unix

package vaultfs

import (
	"io/fs"
	"os"
)

func lstatAt(_ *os.File, r *Reader, p, _ string) (fs.FileInfo, error) {
	_, in, err := r.inRoot(p)
	if err != nil {
		return nil, err
	}
	return r.root.Lstat(in)
}

func openSub(_ *os.File, r *Reader, p, _ string) (*os.File, error) {
	_, in, err := r.inRoot(p)
	if err != nil {
		return nil, err
	}
	if st, err := r.root.Lstat(in); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return nil, refuse(p, Symlink, "a symlink")
	}
	return r.root.Open(in)
}

// seen is the set of folders a walk entered.
type seen struct{ list []fs.FileInfo }

func newSeen() *seen { return &seen{} }

func (s *seen) add(fi fs.FileInfo) { s.list = append(s.list, fi) }

func (s *seen) has(fi fs.FileInfo) bool {
	for _, x := range s.list {
		if os.SameFile(x, fi) {
			return true
		}
	}
	return false
}

func sameFile(a, b fs.FileInfo) bool { return os.SameFile(a, b) }
