//go:build unix

package main

import "syscall"

func mkfifoFile(p string) error { return syscall.Mkfifo(p, 0o600) }
