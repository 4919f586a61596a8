//go:build !unix

package ops

import "os/exec"

// killGroupOnCancel: without process groups, only the command is killed.
func killGroupOnCancel(cmd *exec.Cmd) {}
