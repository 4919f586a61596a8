//go:build linux

package sock

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// CheckPeer refuses the other end of a connection that runs as another
// user (SO_PEERCRED): the server checks its clients, a client the server
// it reached (on top of the socket's 0600 mode inside the 0700 .synapse
// folder, and of the file checks of Dial).
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
