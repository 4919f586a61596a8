package server

import (
	"os"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestMain gives the tests a user config folder of their own: the tokens
// serve creates are recorded there, never in the user's real one.
func TestMain(m *testing.M) { os.Exit(testvault.RunPrivate(m)) }
