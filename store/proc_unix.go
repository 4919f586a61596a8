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
