//go:build linux

package index

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// statter stats vault paths relative to an open descriptor of the vault
// root with statx(2), reusing one path buffer and one result: no
// allocation per file. It follows symlinks (the scanner records what a
// link inside the vault leads to) and never opens a file, so a named pipe
// cannot block it.
type statter struct {
	fd  int
	buf []byte
	stx unix.Statx_t
	// the folder of the last statFile, open, so that a file is looked up
	// by its name alone (records come in path order: a folder's files in
	// a row)
	dir   []byte
	dirFD int
}

func openStatter(root string) (*statter, error) {
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &statter{fd: fd, buf: make([]byte, 0, 512), dirFD: -1}, nil
}

// clone returns a statter sharing the descriptor (one per worker).
func (s *statter) clone() *statter { return &statter{fd: s.fd, buf: make([]byte, 0, 512), dirFD: -1} }

func (s *statter) close() {
	s.closeDir()
	unix.Close(s.fd)
}

// closeDir closes the folder descriptor of a statter (a clone closes
// only that).
func (s *statter) closeDir() {
	if s.dirFD >= 0 {
		unix.Close(s.dirFD)
		s.dirFD = -1
	}
}

// statFile is stat for a file path, looked up in its folder's descriptor.
func (s *statter) statFile(p []byte) (fileStat, error) {
	i := len(p) - 1
	for i >= 0 && p[i] != '/' {
		i--
	}
	if i <= 0 {
		return s.stat(p)
	}
	if s.dirFD < 0 || string(s.dir) != string(p[:i]) {
		if s.dirFD >= 0 {
			unix.Close(s.dirFD)
			s.dirFD = -1
		}
		s.dir = append(s.dir[:0], p[:i]...)
		fd, err := s.statx(s.fd, p[:i], unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, true)
		if err != nil {
			return s.stat(p)
		}
		s.dirFD = fd
	}
	if _, err := s.statx(s.dirFD, p[i+1:], 0, false); err != nil {
		return fileStat{}, err
	}
	return s.result(), nil
}

const statxMask = unix.STATX_TYPE | unix.STATX_MODE | unix.STATX_SIZE | unix.STATX_MTIME

// stat returns the size, mtime (Unix ns) and kind of the vault path p
// ("" is the vault root).
func (s *statter) stat(p []byte) (fileStat, error) {
	if len(p) == 0 {
		p = []byte{'.'}
	}
	if _, err := s.statx(s.fd, p, 0, false); err != nil {
		return fileStat{}, err
	}
	return s.result(), nil
}

// statx stats (or, with open, opens with flags) the path p relative to dirfd.
func (s *statter) statx(dirfd int, p []byte, flags int, open bool) (int, error) {
	s.buf = append(append(s.buf[:0], p...), 0)
	for {
		var r uintptr
		var e unix.Errno
		if open {
			r, _, e = unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&s.buf[0])), uintptr(flags), 0, 0, 0)
		} else {
			_, _, e = unix.Syscall6(unix.SYS_STATX, uintptr(dirfd), uintptr(unsafe.Pointer(&s.buf[0])),
				uintptr(unix.AT_STATX_SYNC_AS_STAT), uintptr(statxMask), uintptr(unsafe.Pointer(&s.stx)), 0)
		}
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return -1, e
		}
		return int(r), nil
	}
}

// isLink reports whether the vault path p is itself a symlink.
func (s *statter) isLink(p []byte) bool {
	s.buf = append(append(s.buf[:0], p...), 0)
	_, _, e := unix.Syscall6(unix.SYS_STATX, uintptr(s.fd), uintptr(unsafe.Pointer(&s.buf[0])),
		uintptr(unix.AT_SYMLINK_NOFOLLOW), uintptr(unix.STATX_TYPE), uintptr(unsafe.Pointer(&s.stx)), 0)
	return e == 0 && s.stx.Mode&unix.S_IFMT == unix.S_IFLNK
}

func (s *statter) result() (st fileStat) {
	st.size = int64(s.stx.Size)
	st.mtimeNS = s.stx.Mtime.Sec*1e9 + int64(s.stx.Mtime.Nsec)
	switch s.stx.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		st.kind = kindFile
	case unix.S_IFDIR:
		st.kind = kindDir
	default:
		st.kind = kindOther
	}
	return st
}
