package main

import (
	"testing"

	"github.com/synapse-wiki/synapse/internal/hostile"
)

// TestHostile_Quick replays the quick part of the red team's attacks on a
// vault from anywhere (internal/hostile; `go run ./tools/hostile
// attacks` runs them all and prints a table) against the built binary.
func TestHostile_Quick(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := synapseBinary(t)
	for _, a := range hostile.Attacks() {
		if !a.Quick {
			continue
		}
		t.Run(a.Name, func(t *testing.T) {
			if v := a.Run(hostile.NewArena(bin, t.TempDir())); !v.OK {
				t.Errorf("still does harm (found: %s): %s", a.Found, v.Now)
			}
		})
	}
}
