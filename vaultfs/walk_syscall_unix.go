//go:build unix

package vaultfs

import "syscall"

// syscallStat is what os.File.Stat and os.Stat put in Sys().
type syscallStat = syscall.Stat_t
