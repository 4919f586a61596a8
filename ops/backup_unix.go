//go:build unix

package ops

import "syscall"

// backupOpen are the flags a backup opens a file with: never through a
// symlink, never waiting on a named pipe swapped in.
const backupOpen = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
