//go:build unix

package sock

import (
	"os"
	"syscall"
)

// fileOwner is the uid owning the file st describes.
func fileOwner(st os.FileInfo) (int, bool) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid), true
	}
	return 0, false
}
