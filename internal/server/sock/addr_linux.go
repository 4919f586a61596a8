//go:build linux

package sock

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// MaxPath is the longest socket path bind and connect take (sun_path
// holds 108 bytes with the terminating NUL).
const MaxPath = 107

// Addr returns an address for the socket file at path that fits
// sun_path. A longer path is reached through /proc/self/fd/N/NAME, N being
// its folder held open until release is called (after bind or connect).
func Addr(path string) (addr string, release func(), err error) {
	if len(path) <= MaxPath {
		return path, func() {}, nil
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return "", nil, err
	}
	return fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), filepath.Base(path)), func() { d.Close() }, nil
}

// CheckPeer refuses a connection from another user (SO_PEERCRED), on top
// of the socket's 0600 mode inside the 0700 .synapse folder.
func CheckPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("peer credentials: %w", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("peer pid %d runs as uid %d, not %d", cred.Pid, cred.Uid, os.Getuid())
	}
	return nil
}
