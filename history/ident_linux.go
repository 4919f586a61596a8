//go:build linux

package history

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// packIdent is a pack file's identity and state: any change of its bytes
// through the file system changes its size or its change time, and a
// file put in its place is another inode.
type packIdent struct {
	dev, ino  uint64
	size      int64
	ctime     int64
	ctimeNsec int64
}

// identOf is the identity of a stat'ed file (known false when the stat
// does not carry one).
func identOf(st fs.FileInfo) (packIdent, bool) {
	switch s := st.Sys().(type) {
	case *unix.Stat_t:
		return packIdent{uint64(s.Dev), uint64(s.Ino), int64(s.Size), int64(s.Ctim.Sec), int64(s.Ctim.Nsec)}, true
	case *syscall.Stat_t:
		return packIdent{uint64(s.Dev), uint64(s.Ino), int64(s.Size), int64(s.Ctim.Sec), int64(s.Ctim.Nsec)}, true
	}
	return packIdent{}, false
}
