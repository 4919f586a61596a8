//go:build unix

package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/synapse-wiki/synapse/errs"
)

// readToken reads the token file if it is one synapse may use: a regular
// file (not followed through a symlink, never waited on like a named
// pipe) that the current user owns and that nobody else may read or
// write. It returns the token, or why the file must be replaced ("" and
// "" when there is none); err only for what replacing cannot fix.
func readToken(path string) (tok, why string, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "", nil
	case errors.Is(err, syscall.ELOOP):
		return "", "it is a symlink", nil
	case errors.Is(err, fs.ErrPermission):
		return "", "it cannot be read (another user's file?)", nil
	case errors.Is(err, syscall.ENXIO):
		return "", "it is a socket", nil
	case err != nil:
		return "", "", errs.Wrap(errs.Internal, err, "open the token file %s: %v", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", "", errs.Wrap(errs.Internal, err, "stat the token file %s: %v", path, err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Sprintf("it is not a regular file (%s)", st.Mode().Type()), nil
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return "", fmt.Sprintf("it belongs to uid %d, not to you (uid %d)", sys.Uid, os.Geteuid()), nil
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Sprintf("other users may read or write it (mode %04o), so the token may have been seen", perm), nil
	}
	if err := syscallSetBlock(f); err != nil {
		return "", "", errs.Wrap(errs.Internal, err, "open the token file %s: %v", path, err)
	}
	return tokenIn(f, path)
}

func syscallSetBlock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
