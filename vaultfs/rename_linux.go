package vaultfs

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameat renames within folder descriptors; with noReplace an existing
// target fails with EEXIST atomically (renameat2 RENAME_NOREPLACE), or,
// on file systems without it, after a check.
func renameat(ofd int, oname string, nfd int, nname string, noReplace bool) error {
	if !noReplace {
		return unix.Renameat(ofd, oname, nfd, nname)
	}
	err := unix.Renameat2(ofd, oname, nfd, nname, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) {
		return renameIfAbsent(ofd, oname, nfd, nname)
	}
	return err
}
