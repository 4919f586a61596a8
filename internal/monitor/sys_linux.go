//go:build linux

package monitor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/synapse-wiki/synapse/vault"
)

// Supported reports whether a monitor can run on this system (inotify:
// Linux only; elsewhere a watch per file would cost more than the check
// it saves).
func Supported() bool { return true }

// remoteFS names the file systems whose changes made elsewhere (another
// machine, the host of a VM) raise no inotify event here.
var remoteFS = map[int64]string{
	0x6969:     "NFS",
	0x517B:     "SMB",
	0xFF534D42: "CIFS",
	0xFE534D42: "SMB2",
	0x73757245: "Coda",
	0x5346414F: "AFS",
	0x01021997: "9P",
	0x65735546: "FUSE",
	0x0BD00BD0: "Lustre",
	0x47504653: "GPFS",
	0x013111A8: "IBRIX",
}

// unsupported says why the vault at root cannot be watched ("" when it
// can): its tracked trees are on a file system whose remote changes raise
// no event here.
func unsupported(root string) string {
	for _, d := range []string{root, filepath.Join(root, vault.WikiDir), filepath.Join(root, "raw")} {
		var st syscall.Statfs_t
		if err := syscall.Statfs(d, &st); err != nil {
			continue
		}
		if name, ok := remoteFS[int64(st.Type)]; ok {
			return fmt.Sprintf("%s is on %s, whose changes made elsewhere raise no event here", d, name)
		}
	}
	return ""
}

// lock takes the exclusive lock of path without waiting (ErrRunning when
// another process holds it); the returned function releases it.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrRunning
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}

// inode returns the inode of path, not following a symlink.
func inode(path string) (uint64, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return 0, err
	}
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, errors.New("no inode")
	}
	return s.Ino, nil
}

// detach makes cmd's process the leader of a session of its own: no
// terminal, and a signal to the CLI's process group does not reach it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// ownSocket checks that path is a socket of this user, not a symlink.
func ownSocket(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if st.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%s is not a socket", path)
	}
	if s, ok := st.Sys().(*syscall.Stat_t); ok && int(s.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not %d", path, s.Uid, os.Getuid())
	}
	return nil
}
