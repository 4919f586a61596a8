//go:build !linux

package index

import (
	"os"
	"path/filepath"
)

// statter stats vault paths (see fresh_linux.go; this portable one
// allocates per call).
type statter struct{ root string }

func openStatter(root string) (*statter, error) { return &statter{root: root}, nil }

func (s *statter) clone() *statter { return s }

func (s *statter) close() {}

func (s *statter) closeDir() {}

func (s *statter) statFile(p []byte) (fileStat, error) { return s.stat(p) }

func (s *statter) isLink(p []byte) bool {
	fi, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(string(p))))
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

func (s *statter) stat(p []byte) (st fileStat, err error) {
	fi, err := os.Stat(filepath.Join(s.root, filepath.FromSlash(string(p))))
	if err != nil {
		return st, err
	}
	st.size, st.mtimeNS = fi.Size(), fi.ModTime().UnixNano()
	switch {
	case fi.Mode().IsRegular():
		st.kind = kindFile
	case fi.IsDir():
		st.kind = kindDir
	default:
		st.kind = kindOther
	}
	return st, nil
}
