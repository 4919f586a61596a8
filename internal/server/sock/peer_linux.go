//go:build linux

package sock

import "syscall"

// peerCred is the uid and pid of a connected socket's other end
// (SO_PEERCRED).
func peerCred(fd int) (uid, pid int, err error) {
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return 0, 0, err
	}
	return int(cred.Uid), int(cred.Pid), nil
}
