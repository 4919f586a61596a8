//go:build !unix

package store

import "os"

func processAlive(pid int) bool { return pid > 0 }

// unlock is a no-op where bbolt's lock goes with the descriptor.
func unlock(f *os.File) {}
