package ops

import (
	"os"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestMain gives the tests a user config folder of their own, so that no
// test reads or writes the user's real one (the vault configs the tests
// trust are recorded there).
func TestMain(m *testing.M) { os.Exit(testvault.RunPrivate(m)) }
