//go:build unix

package vaultfs

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// openNoBlock keeps the open of a named pipe from waiting for a writer
// (harmless for regular files) and a terminal from becoming the
// controlling one.
const openNoBlock = unix.O_NONBLOCK | unix.O_NOCTTY

// openDir opens the folder rel of the vault ("" or "." for the root)
// without following any symlink below the root; with create, missing
// folders are made (0755) and their names returned, outermost first.
func (f *FS) openDir(rel string, create bool) (fd int, made []string, err error) {
	fd, err = unix.Open(f.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, nil, &fs.PathError{Op: "open", Path: f.root, Err: err}
	}
	if rel == "" || rel == "." {
		return fd, nil, nil
	}
	c, err := cleanWrite(rel)
	if err != nil {
		unix.Close(fd)
		return -1, nil, err
	}
	parts := strings.Split(c, "/")
	for i, el := range parts {
		sub := strings.Join(parts[:i+1], "/")
		next, err := openat(fd, el, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, el, 0o755); err == nil {
				made = append(made, sub)
			}
			if err == nil || errors.Is(err, unix.EEXIST) {
				next, err = openat(fd, el, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		if err != nil {
			err = dirError(fd, sub, el, err)
			unix.Close(fd)
			return -1, made, err
		}
		unix.Close(fd)
		fd = next
	}
	return fd, made, nil
}

// dirError explains why el (at vault path sub) could not be opened as a
// folder for writing.
func dirError(parent int, sub, el string, err error) error {
	var st unix.Stat_t
	if serr := unix.Fstatat(parent, el, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil {
		switch uint32(st.Mode) & unix.S_IFMT {
		case unix.S_IFLNK:
			return refuse(sub, Symlink, "a symlink; synapse writes only through real folders, never through a symlink")
		case unix.S_IFDIR:
		default:
			return refuse(sub, NotRegular, "not a folder")
		}
	}
	return &fs.PathError{Op: "open", Path: sub, Err: err}
}

func openat(dir int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flags, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// split returns the folder and the name of a vault path.
func split(rel string) (string, string, error) {
	c, err := cleanWrite(rel)
	if err != nil {
		return "", "", err
	}
	dir, name := path.Split(c)
	return strings.TrimSuffix(dir, "/"), name, nil
}

// lstatName stats name in the folder dir without following it; ok is
// false when it does not exist.
func lstatName(dir int, name string) (st unix.Stat_t, ok bool, err error) {
	err = unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return st, false, nil
	}
	return st, err == nil, err
}

// target refuses to replace or write to rel when it is a symlink or
// anything but a regular file.
func target(rel string, st unix.Stat_t, verb string) error {
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFREG:
		return nil
	case unix.S_IFLNK:
		return refuse(rel, Symlink, "a symlink; synapse never %s a symlink (nor writes through one)", verb)
	}
	return notRegular(rel, fileMode(uint32(st.Mode)))
}

var tempSeq atomic.Uint64

// CreateTemp creates a new file in the folder dir of the vault, named from
// pattern (the last "*" replaced by a random string), opened for writing
// with mode 0600; the folders on the way are never symlinks. The file's
// Name is its absolute path.
func (f *FS) CreateTemp(dir, pattern string) (*os.File, error) {
	fd, _, err := f.openDir(dir, false)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for try := 0; try < 10000; try++ {
		n := uint64(time.Now().UnixNano()) ^ tempSeq.Add(0x9E3779B97F4A7C15)
		name := prefix + strconv.FormatUint(n%1e10, 10) + suffix
		tf, err := openat(fd, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "createtemp", Path: path.Join(dir, pattern), Err: err}
		}
		return os.NewFile(uintptr(tf), f.Abs(path.Join(dir, name))), nil
	}
	return nil, &fs.PathError{Op: "createtemp", Path: path.Join(dir, pattern), Err: fs.ErrExist}
}

// CreateAppend creates the new file rel with mode 0600, opened for
// appending: an existing rel (a symlink too: it is never followed) is an
// error matching fs.ErrExist, a missing folder one matching
// fs.ErrNotExist; the folders on the way are never symlinks.
func (f *FS) CreateAppend(rel string) (*os.File, error) {
	d, name, err := split(rel)
	if err != nil {
		return nil, err
	}
	dfd, _, err := f.openDir(d, false)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	fd, err := openat(dfd, name, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: rel, Err: err}
	}
	return os.NewFile(uintptr(fd), f.Abs(rel)), nil
}

// Rename renames the regular file oldRel to newRel. When newRel exists it
// must be a regular file (a symlink, a folder or a special file is refused,
// never replaced); with noReplace an existing newRel is an error matching
// fs.ErrExist instead, atomically where the system allows it.
func (f *FS) Rename(oldRel, newRel string, noReplace bool) error {
	od, oname, err := split(oldRel)
	if err != nil {
		return err
	}
	nd, nname, err := split(newRel)
	if err != nil {
		return err
	}
	ofd, _, err := f.openDir(od, false)
	if err != nil {
		return err
	}
	defer unix.Close(ofd)
	nfd, _, err := f.openDir(nd, false)
	if err != nil {
		return err
	}
	defer unix.Close(nfd)
	if st, ok, err := lstatName(ofd, oname); err != nil || !ok {
		if err == nil {
			err = unix.ENOENT
		}
		return &os.LinkError{Op: "rename", Old: oldRel, New: newRel, Err: err}
	} else if err := target(oldRel, st, "renames"); err != nil {
		return err
	}
	st, exists, err := lstatName(nfd, nname)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldRel, New: newRel, Err: err}
	}
	if exists {
		if err := target(newRel, st, "replaces"); err != nil {
			return err
		}
		if noReplace {
			return &os.LinkError{Op: "rename", Old: oldRel, New: newRel, Err: fs.ErrExist}
		}
	}
	if err := renameat(ofd, oname, nfd, nname, noReplace); err != nil {
		if errors.Is(err, unix.EEXIST) {
			err = fs.ErrExist
		}
		return &os.LinkError{Op: "rename", Old: oldRel, New: newRel, Err: err}
	}
	return nil
}

// Remove removes the file rel (never following a symlink on the way; a
// symlink at rel itself is removed, not what it points to).
func (f *FS) Remove(rel string) error {
	d, name, err := split(rel)
	if err != nil {
		return err
	}
	fd, _, err := f.openDir(d, false)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Unlinkat(fd, name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: rel, Err: err}
	}
	return nil
}

// MkdirAll creates the folder rel and its missing parents, never through
// a symlink, and returns the folders it created, outermost first.
func (f *FS) MkdirAll(rel string) ([]string, error) {
	fd, made, err := f.openDir(rel, true)
	if err != nil {
		return made, err
	}
	unix.Close(fd)
	return made, nil
}

// IsDir reports whether rel is a real folder (no symlink on the way).
func (f *FS) IsDir(rel string) bool {
	fd, _, err := f.openDir(rel, false)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// CheckWrite reports whether rel could be written now: no folder on the
// way is a symlink, and rel is missing or a regular file (a symlink or a
// special file there is refused). A write checks again when it happens;
// this lets a caller refuse before it changes anything else.
func (f *FS) CheckWrite(rel string) error {
	d, name, err := split(rel)
	if err != nil {
		return err
	}
	fd, _, err := f.openDir(d, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // created by the write
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	st, ok, err := lstatName(fd, name)
	if err != nil || !ok {
		return err
	}
	return target(rel, st, "writes to")
}

// SyncDir flushes the entries of the folder rel to stable storage. A file
// system that cannot fsync a folder is not an error.
func (f *FS) SyncDir(rel string) error {
	fd, _, err := f.openDir(rel, false)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Fsync(fd); err != nil && !errors.Is(err, errors.ErrUnsupported) && err != unix.EINVAL {
		return &fs.PathError{Op: "fsync", Path: rel, Err: err}
	}
	return nil
}

// OpenAppend opens the existing regular file rel for appending. A symlink
// or a special file there is refused without being opened; the open is
// non-blocking, so a named pipe swapped in meanwhile fails at once instead
// of waiting for a reader.
func (f *FS) OpenAppend(rel string) (*os.File, error) {
	d, name, err := split(rel)
	if err != nil {
		return nil, err
	}
	dfd, _, err := f.openDir(d, false)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	st, ok, err := lstatName(dfd, name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: err}
	}
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: fs.ErrNotExist}
	}
	if err := target(rel, st, "appends to"); err != nil {
		return nil, err
	}
	fd, err := openat(dfd, name, unix.O_WRONLY|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC|openNoBlock, 0)
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, refuse(rel, Symlink, "a symlink; synapse never appends to a symlink (nor writes through one)")
	case errors.Is(err, unix.ENXIO):
		return nil, refuse(rel, NotRegular, "a named pipe or socket, not a regular file; synapse opens only regular files")
	case err != nil:
		return nil, &fs.PathError{Op: "open", Path: rel, Err: err}
	}
	err = unix.Fstat(fd, &st)
	if err == nil {
		err = target(rel, st, "appends to")
	}
	if err == nil && f.private(st) {
		err = refuse(rel, Private, "a link to synapse's private state; it is never written")
	}
	if err == nil {
		err = unix.SetNonblock(fd, false)
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Abs(rel)), nil
}

// private reports whether st is the store or the token (a hard link).
func (f *FS) private(st unix.Stat_t) bool {
	for _, p := range []string{dbFile, tokenFile} {
		var ps unix.Stat_t
		if unix.Stat(f.Abs(p), &ps) == nil && ps.Dev == st.Dev && ps.Ino == st.Ino {
			return true
		}
	}
	return false
}

// fileMode converts a stat mode to an fs.FileMode (type bits and
// permissions).
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	return mode
}
