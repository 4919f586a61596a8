//go:build !unix

package store

func processAlive(pid int) bool { return pid > 0 }
