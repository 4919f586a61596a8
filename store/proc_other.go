//go:build !unix

package store

import "os"

func processAlive(pid int) bool { return pid > 0 }

// allocatedBytes is unknown here: the caller uses the apparent size.
func allocatedBytes(os.FileInfo) (int64, bool) { return 0, false }
