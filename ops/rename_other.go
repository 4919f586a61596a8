//go:build !linux

package ops

// renameNoReplace renames oldpath to newpath only if newpath does not
// exist (a check, then a rename).
func renameNoReplace(oldpath, newpath string) error { return renameIfAbsent(oldpath, newpath) }
