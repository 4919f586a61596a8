//go:build linux

package index

import (
	"io/fs"
	"syscall"
)

// fileIdent is fi's device, inode and ctime (Unix nanoseconds).
func fileIdent(fi fs.FileInfo) (dev, ino uint64, ctimeNS int64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), st.Ctim.Nano(), true
}
