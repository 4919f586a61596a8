//go:build unix

package vaultfs

import (
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// statInfo is an fs.FileInfo from a stat taken relative to a folder
// descriptor.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return int64(s.st.Size) }
func (s *statInfo) Mode() fs.FileMode  { return fileMode(uint32(s.st.Mode)) }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return &s.st }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }

// lstatAt stats name in the open folder d without following it: one
// fstatat, never a path lookup that could wander through a swapped-in
// symlink.
func lstatAt(d *os.File, _ *Reader, _ string, name string) (fs.FileInfo, error) {
	si := &statInfo{name: name}
	for {
		err := unix.Fstatat(int(d.Fd()), name, &si.st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
		}
		return si, nil
	}
}

// openSub opens the sub-folder name of d, never following a symlink.
func openSub(d *os.File, _ *Reader, p, name string) (*os.File, error) {
	fd, err := openat(int(d.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

type devIno struct{ dev, ino uint64 }

// seen is the set of folders a walk entered, by device and inode.
type seen struct{ m map[devIno]bool }

func newSeen() *seen { return &seen{m: map[devIno]bool{}} }

func idOf(fi fs.FileInfo) (devIno, bool) {
	st, ok := fi.Sys().(*unix.Stat_t)
	if ok {
		return devIno{uint64(st.Dev), uint64(st.Ino)}, true
	}
	if st, ok := fi.Sys().(*syscallStat); ok {
		return devIno{uint64(st.Dev), uint64(st.Ino)}, true
	}
	return devIno{}, false
}

func (s *seen) add(fi fs.FileInfo) {
	if id, ok := idOf(fi); ok {
		s.m[id] = true
	}
}

func (s *seen) has(fi fs.FileInfo) bool {
	id, ok := idOf(fi)
	return ok && s.m[id]
}

// sameFile is os.SameFile for any of the stats taken here.
func sameFile(a, b fs.FileInfo) bool {
	x, ok1 := idOf(a)
	y, ok2 := idOf(b)
	return ok1 && ok2 && x == y
}
