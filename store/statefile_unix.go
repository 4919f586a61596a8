//go:build unix

package store

import (
	"os"
	"syscall"
)

// openNoFollow opens p for reading without following a symlink at p and
// without waiting on a named pipe.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
