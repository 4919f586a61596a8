//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// processAlive reports whether a process with pid exists.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// unlock drops bbolt's lock on a file whose open panicked: the file's
// mapping keeps its open file description, and with it the lock, alive
// after the descriptor is closed.
func unlock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// readOnlyFS reports an error of writing to a read-only file system.
func readOnlyFS(err error) bool { return errors.Is(err, syscall.EROFS) }

// allocatedBytes returns the bytes allocated to a file (its 512-byte
// blocks, as stat(2) counts them).
func allocatedBytes(fi os.FileInfo) (int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int64(st.Blocks) * 512, true
}
