package vault

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
)

// TestInit_InsideAVault: init in a folder inside a vault (at any depth)
// refuses, naming the vault, and creates nothing; beside it, it works;
// running it again on the vault itself stays harmless.
func TestInit_InsideAVault(t *testing.T) {
	root := filepath.Join(t.TempDir(), "outer")
	if _, _, err := Init(root); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"wiki/sub", "raw/sources/x", "a/b/c"} {
		_, _, err := Init(filepath.Join(root, dir))
		if errs.CodeOf(err) != errs.Conflict || !strings.Contains(errs.Message(err), "inside the vault "+root) {
			t.Errorf("init %s: %v", dir, err)
		}
		if _, serr := os.Stat(filepath.Join(root, dir, StateDir)); serr == nil {
			t.Errorf("init %s made a vault", dir)
		}
	}
	if _, _, err := Init(root); err != nil {
		t.Errorf("init again: %v", err)
	}
	if _, _, err := Init(root + "-beside"); err != nil {
		t.Errorf("init beside: %v", err)
	}
}

// TestOpen_LiteralTilde: a path starting with a ~ the shell did not
// expand is explained, with the path to give instead.
func TestOpen_LiteralTilde(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, dir := range []string{"~", "~/notes"} {
		_, err := Open(dir)
		msg := errs.Message(err)
		if errs.CodeOf(err) != errs.NotFound || !strings.Contains(msg, "literal ~") || !strings.Contains(msg, `"$HOME`+strings.TrimPrefix(dir, "~")+`"`) {
			t.Errorf("Open(%q): %v", dir, err)
		}
	}
	if _, err := Open("notes"); strings.Contains(errs.Message(err), "~") {
		t.Errorf("Open(notes): %v", err)
	}
}
