//go:build unix

package server

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"github.com/synapse-wiki/synapse/errs"
)

// openToken opens the token file for reading if it is safe to use: a
// regular file (not followed through a symlink, never waited on like a
// named pipe) that the current user owns and that nobody else may read or
// write.
func openToken(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, err
	case errors.Is(err, syscall.ELOOP):
		return nil, errs.E(errs.Forbidden, "the token file %s is a symlink; serve uses only a regular file: remove it (a new token is generated) or put the token itself there, owner-only (chmod 600)", path)
	case errors.Is(err, fs.ErrPermission):
		return nil, errs.E(errs.Forbidden, "the token file %s cannot be read: permission denied (run serve as the vault's owner)", path)
	case err != nil:
		return nil, errs.Wrap(errs.Internal, err, "open the token file %s: %v", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, errs.Wrap(errs.Internal, err, "stat the token file %s: %v", path, err)
	}
	fail := func(format string, args ...any) (*os.File, error) {
		f.Close()
		return nil, errs.E(errs.Forbidden, format, args...)
	}
	if !st.Mode().IsRegular() {
		return fail("the token file %s is not a regular file (%s); remove it and a new token is generated", path, st.Mode().Type())
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fail("the token file %s belongs to uid %d, not to you (uid %d); serve refuses a token another user controls: remove it (a new token is generated) or run serve as its owner", path, sys.Uid, os.Geteuid())
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fail("the token file %s is open to other users (mode %04o), so the token may have been read; serve refuses it. Fix it with: chmod 600 %s (and consider deleting it for a new token)", path, perm, path)
	}
	if err := syscallSetBlock(f); err != nil {
		f.Close()
		return nil, errs.Wrap(errs.Internal, err, "open the token file %s: %v", path, err)
	}
	return f, nil
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
