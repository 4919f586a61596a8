//go:build !unix

package ops

// backupOpen are the flags a backup opens a file with (the listing
// already left out symlinks and special files).
const backupOpen = 0
