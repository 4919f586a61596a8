//go:build darwin || freebsd

package sock

import "golang.org/x/sys/unix"

// peerCred is the uid of a connected socket's other end (LOCAL_PEERCRED;
// no pid).
func peerCred(fd int) (uid, pid int, err error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, 0, err
	}
	return int(cred.Uid), 0, nil
}
