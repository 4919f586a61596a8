package vaultfs

import (
	"context"
	"io/fs"
	"os"
	"path"
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The Linux fast path of Reader.Stat, Open and ReadFile: openat2 with
// RESOLVE_BENEATH resolves the whole path in the kernel, confined to the
// reader's root (a symlink inside is followed, one that leads out is
// EXDEV), in one call instead of os.Root's open per folder. The file is
// first opened O_PATH (no I/O, no device open) and its type checked; only
// a regular file is then opened for reading, non-blocking, and checked
// again to be the same file. On a kernel without openat2 the os.Root path
// runs instead.

var noOpenat2 atomic.Bool

const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

func openat2(dir int, name string, flags, resolve uint64) (int, error) {
	for {
		fd, err := unix.Openat2(dir, name, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: resolve})
		if err != unix.EINTR && err != unix.EAGAIN {
			return fd, err
		}
	}
}

// fastErr maps an openat2 failure on c.
func (r *Reader) fastErr(c string, err error) error {
	if err == unix.EXDEV {
		return refuse(c, Outside, "a symlink (or leads through one) that points outside %s; synapse never reads or writes outside it through a symlink", r.where())
	}
	return openError(c, r.where(), &fs.PathError{Op: "open", Path: c, Err: err})
}

// fastStat resolves in (relative to the root) and stats what it leads
// to; ok is false when the fast path is not available. The path is first
// resolved with no symlink allowed (the common case); only when one is
// met is it resolved again following those inside the root, and resolve
// says which the second open must use.
func (r *Reader) fastStat(c, in string) (st unix.Stat_t, resolve uint64, ok bool, err error) {
	if r.dirfd < 0 || noOpenat2.Load() {
		return st, 0, false, nil
	}
	resolve = beneath | unix.RESOLVE_NO_SYMLINKS
	pfd, err := openat2(r.dirfd, in, unix.O_PATH, resolve)
	if err == unix.ELOOP {
		resolve = beneath
		pfd, err = openat2(r.dirfd, in, unix.O_PATH, resolve)
	}
	runtime.KeepAlive(r) // r.dir holds dirfd open
	if err == unix.ENOSYS || err == unix.EPERM {
		if err == unix.ENOSYS {
			noOpenat2.Store(true)
		}
		return st, 0, false, nil
	}
	if err != nil {
		return st, 0, true, r.fastErr(c, err)
	}
	err = unix.Fstat(pfd, &st)
	unix.Close(pfd)
	if err != nil {
		return st, 0, true, &fs.PathError{Op: "stat", Path: c, Err: err}
	}
	return st, resolve, true, nil
}

// fastOpen opens the regular file in for reading (see Open).
func (r *Reader) fastOpen(c, in string) (fd int, st unix.Stat_t, ok bool, err error) {
	st, resolve, ok, err := r.fastStat(c, in)
	if !ok || err != nil {
		return -1, st, ok, err
	}
	if err := r.checkStat(c, &st, resolve); err != nil {
		return -1, st, true, err
	}
	fd, err = openat2(r.dirfd, in, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, resolve)
	runtime.KeepAlive(r)
	if err != nil {
		return -1, st, true, r.fastErr(c, err)
	}
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil {
		unix.Close(fd)
		return -1, st, true, &fs.PathError{Op: "stat", Path: c, Err: err}
	}
	if now.Dev != st.Dev || now.Ino != st.Ino {
		// swapped between the two opens: check what was opened
		if err := r.checkStat(c, &now, beneath); err != nil {
			unix.Close(fd)
			return -1, st, true, err
		}
	}
	return fd, now, true, nil
}

// checkStat is check for a raw stat. The store and the token are looked
// for only when they could be what was reached: through a symlink, or a
// file with more than one link (a path that names neither lexically and
// met no symlink is neither, unless hard-linked).
func (r *Reader) checkStat(c string, st *unix.Stat_t, resolve uint64) error {
	fi := &statInfo{name: path.Base(c), st: *st}
	if resolve&unix.RESOLVE_NO_SYMLINKS != 0 && st.Nlink <= 1 && fi.Mode().IsRegular() {
		return nil
	}
	return r.check(c, fi)
}

// openFast is Open's fast path.
func (r *Reader) openFast(c, in string) (*os.File, fs.FileInfo, bool, error) {
	fd, st, ok, err := r.fastOpen(c, in)
	if !ok || err != nil {
		return nil, nil, ok, err
	}
	// back to blocking (the flags are known: one fcntl)
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, unix.O_RDONLY); err != nil {
		unix.Close(fd)
		return nil, nil, true, err
	}
	return os.NewFile(uintptr(fd), r.fs.Abs(c)), &statInfo{name: path.Base(c), st: st}, true, nil
}

// statFast is Stat's fast path.
func (r *Reader) statFast(c, in string) (fs.FileInfo, bool, error) {
	st, _, ok, err := r.fastStat(c, in)
	if !ok || err != nil {
		return nil, ok, err
	}
	return &statInfo{name: path.Base(c), st: st}, true, nil
}

// readFast is ReadFile's fast path: the bytes are read straight from the
// descriptor, a chunk at a time.
func (r *Reader) readFast(ctx context.Context, c, in string, limit int64) ([]byte, fs.FileInfo, bool, error) {
	fd, st, ok, err := r.fastOpen(c, in)
	if !ok || err != nil {
		return nil, nil, ok, err
	}
	defer unix.Close(fd)
	if st.Size > limit {
		return nil, nil, true, refuse(c, TooLarge, "%d bytes; the limit is %d", st.Size, limit)
	}
	buf := make([]byte, 0, min(st.Size+1, initialRead))
	for int64(len(buf)) <= limit {
		if err := ctx.Err(); err != nil {
			return nil, nil, true, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		end := min(int64(cap(buf)), limit+1, int64(len(buf))+chunk)
		n, err := unix.Read(fd, buf[len(buf):end])
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			return nil, nil, true, &fs.PathError{Op: "read", Path: c, Err: err}
		}
		if n == 0 {
			return buf, &statInfo{name: path.Base(c), st: st}, true, nil
		}
		buf = buf[:len(buf)+n]
	}
	return nil, nil, true, refuse(c, TooLarge, "more than %d bytes (it grew while read)", limit)
}

// rootFD returns a descriptor of the root's folder for openat2 (-1 when
// it cannot be had).
func rootFD(root *os.Root) (*os.File, int) {
	d, err := root.Open(".")
	if err != nil {
		return nil, -1
	}
	var fd int = -1
	if rc, err := d.SyscallConn(); err == nil {
		rc.Control(func(u uintptr) { fd = int(u) })
	}
	if fd < 0 {
		d.Close()
		return nil, -1
	}
	return d, fd
}
