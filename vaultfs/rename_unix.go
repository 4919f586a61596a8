//go:build unix && !linux

package vaultfs

import "golang.org/x/sys/unix"

// renameat renames within folder descriptors; with noReplace an existing
// target fails with EEXIST (after a check: not atomic here).
func renameat(ofd int, oname string, nfd int, nname string, noReplace bool) error {
	if noReplace {
		return renameIfAbsent(ofd, oname, nfd, nname)
	}
	return unix.Renameat(ofd, oname, nfd, nname)
}
