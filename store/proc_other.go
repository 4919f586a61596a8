//go:build !unix

package store

import "os"

func processAlive(pid int) bool { return pid > 0 }

// unlock is a no-op where bbolt's lock goes with the descriptor.
func unlock(f *os.File) {}

// readOnlyFS reports an error of writing to a read-only file system
// (never told apart here).
func readOnlyFS(error) bool { return false }

// allocatedBytes is unknown here: the caller uses the apparent size.
func allocatedBytes(os.FileInfo) (int64, bool) { return 0, false }
