//go:build linux || darwin || freebsd

package sock

import (
	"fmt"
	"net"
	"os"
)

// CheckPeer refuses the other end of a connection that runs as another
// user: the server checks its clients, a client the server it reached (on
// top of the socket's 0600 mode inside the 0700 .synapse folder, and of
// the file checks of Dial).
func CheckPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var uid, pid int
	var cerr error
	if err := raw.Control(func(fd uintptr) { uid, pid, cerr = peerCred(int(fd)) }); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("peer credentials: %w", cerr)
	}
	if uid != os.Getuid() {
		if pid > 0 {
			return fmt.Errorf("peer pid %d runs as uid %d, not %d", pid, uid, os.Getuid())
		}
		return fmt.Errorf("the peer runs as uid %d, not %d", uid, os.Getuid())
	}
	return nil
}
