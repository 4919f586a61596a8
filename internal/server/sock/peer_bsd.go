//go:build darwin || freebsd

package sock

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// CheckPeer refuses the other end of a connection that runs as another
// user (LOCAL_PEERCRED): the server checks its clients, a client the
// server it reached.
func CheckPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Xucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("peer credentials: %w", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("the peer runs as uid %d, not %d", cred.Uid, os.Getuid())
	}
	return nil
}
