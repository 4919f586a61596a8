//go:build unix

package vaultfs

import "golang.org/x/sys/unix"

// renameIfAbsent renames unless the target exists (a check, then the
// rename: a file created in between would be replaced).
func renameIfAbsent(ofd int, oname string, nfd int, nname string) error {
	if _, ok, err := lstatName(nfd, nname); err != nil {
		return err
	} else if ok {
		return unix.EEXIST
	}
	return unix.Renameat(ofd, oname, nfd, nname)
}
