//go:build !race

package vaultfs

const raceEnabled = false
