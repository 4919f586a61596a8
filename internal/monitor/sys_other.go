//go:build !linux

package monitor

import (
	"errors"
	"os/exec"
)

// Supported reports whether a monitor can run on this system (inotify:
// Linux only; elsewhere a watch per file would cost more than the check
// it saves).
func Supported() bool { return false }

func unsupported(string) string { return "the monitor runs on Linux only" }

func lock(string) (func(), error) { return nil, errors.New("the monitor runs on Linux only") }

func inode(string) (uint64, error) { return 0, errors.New("the monitor runs on Linux only") }

func detach(*exec.Cmd) {}

func ownSocket(string) error { return errors.New("the monitor runs on Linux only") }
