//go:build unix

package server

import "syscall"

func mkfifoFile(p string) error { return syscall.Mkfifo(p, 0o600) }
