//go:build unix

package vault

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
)

// TestInit_NeverThroughSymlinks: `synapse init` on a cloned folder whose
// wiki/ or template files are symlinks out creates nothing outside (main
// created the folders and files at the link targets).
func TestInit_NeverThroughSymlinks(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	os.MkdirAll(outside, 0o755)
	count := func() int {
		n := 0
		filepath.Walk(outside, func(p string, _ os.FileInfo, err error) error {
			if err == nil && p != outside {
				n++
			}
			return nil
		})
		return n
	}
	// wiki/ is a symlink out
	dir := filepath.Join(base, "v1")
	os.MkdirAll(dir, 0o755)
	os.Symlink("../outside", filepath.Join(dir, "wiki"))
	if _, _, err := Init(dir); errs.CodeOf(err) != errs.Forbidden {
		t.Errorf("init with wiki/ linked out: %v", err)
	}
	if n := count(); n != 0 {
		t.Fatalf("init created %d entries outside the vault", n)
	}
	// a dangling template symlink out
	dir = filepath.Join(base, "v2")
	os.MkdirAll(filepath.Join(dir, "wiki"), 0o755)
	os.Symlink("../../outside/index.md", filepath.Join(dir, "wiki", "index.md"))
	os.Symlink("../outside/purpose.md", filepath.Join(dir, "purpose.md"))
	if _, created, err := Init(dir); err != nil {
		t.Fatal(err)
	} else {
		for _, c := range created {
			if c == IndexPage || c == PurposeFile {
				t.Errorf("init reports %s created through a symlink", c)
			}
		}
	}
	if n := count(); n != 0 {
		t.Fatalf("init wrote %d files outside the vault", n)
	}
}

// TestOpen_StateDirSymlinkRefused: a .synapse that is a symlink is
// refused by name on every way a vault is found, never followed (main
// opened the store and config of the folder it points to).
func TestOpen_StateDirSymlinkRefused(t *testing.T) {
	base := t.TempDir()
	other := filepath.Join(base, "other")
	os.MkdirAll(other, 0o700)
	dir := filepath.Join(base, "v")
	os.MkdirAll(filepath.Join(dir, "wiki", "sub"), 0o755)
	os.Symlink(other, filepath.Join(dir, StateDir))
	check := func(what string, err error) {
		t.Helper()
		if errs.CodeOf(err) != errs.Forbidden || !strings.Contains(err.Error(), filepath.Join(dir, StateDir)) || !strings.Contains(err.Error(), "symlink") {
			t.Errorf("%s: %v", what, err)
		}
	}
	_, err := Open(dir)
	check("open", err)
	_, err = Find("", "", filepath.Join(dir, "wiki", "sub"))
	check("find from below", err)
	_, err = Find("", dir, "/")
	check("find from the environment", err)
	_, _, err = Init(dir)
	check("init", err)
	if ents, _ := os.ReadDir(other); len(ents) != 0 {
		t.Errorf("wrote %d entries through the symlink", len(ents))
	}
}
