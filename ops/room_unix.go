//go:build unix

package ops

import "golang.org/x/sys/unix"

// freeBytes is the space left to an unprivileged writer on the file
// system holding path (ok false when it cannot be told).
func freeBytes(path string) (int64, bool) {
	var st unix.Statfs_t
	if unix.Statfs(path, &st) != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}

// writable reports whether this process may write to path (a folder: may
// create files in it); permission and a read-only mount deny it.
func writable(path string) error { return unix.Access(path, unix.W_OK) }
