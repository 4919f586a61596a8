// Package testvault builds vaults for tests: empty ones, and ones whose
// wiki/ holds the Obsidian Help corpus kept in testdata/.
package testvault

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/vault"
)

// RepoRoot returns the repository root (where go.mod is).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// CorpusDir is the Obsidian Help corpus copied into testdata/.
func CorpusDir() string { return filepath.Join(RepoRoot(), "testdata", "obsidian-help-en") }

// New creates an initialised, empty vault in a temporary folder.
func New(t testing.TB) *vault.Vault {
	t.Helper()
	v, _, err := vault.Init(filepath.Join(t.TempDir(), "vault"))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// WithCorpus creates a vault whose wiki/ holds the Obsidian Help corpus.
func WithCorpus(t testing.TB) *vault.Vault {
	t.Helper()
	v := New(t)
	if err := CopyTree(CorpusDir(), v.Abs(vault.WikiDir)); err != nil {
		t.Fatal(err)
	}
	return v
}

// CopyTree copies the regular files under src into dst.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// Write writes a vault-relative file, creating folders.
func Write(t testing.TB, v *vault.Vault, rel, content string) {
	t.Helper()
	p := v.Abs(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TrustedConfig writes the vault's .synapse/config.yaml and trusts it, as
// the user would with `synapse trust` (recorded in the user config folder
// of the test process: point XDG_CONFIG_HOME at a temporary folder first).
func TrustedConfig(t testing.TB, v *vault.Vault, cfg string) {
	t.Helper()
	if err := os.WriteFile(v.Abs(vault.ConfigFile), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Trust(time.Now()); err != nil {
		t.Fatal(err)
	}
}

// PrivateUserConfig points XDG_CONFIG_HOME at a new temporary folder for
// the rest of the process, so that tests never read or write the user's
// own config; it returns a function that removes the folder.
func PrivateUserConfig() func() {
	dir, err := os.MkdirTemp("", "synapse-test-config-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	return func() { os.RemoveAll(dir) }
}

// RunPrivate runs a package's tests with a user config folder of their
// own (PrivateUserConfig), for its TestMain: os.Exit(testvault.RunPrivate(m)).
func RunPrivate(m *testing.M) int {
	defer PrivateUserConfig()()
	return m.Run()
}

// WikiFiles reads every file under the vault's wiki/ but temporary ones
// (hidden names ending in .tmp, which a write in progress leaves): what a
// reader of the vault sees, by path relative to wiki/.
func WikiFiles(t testing.TB, v *vault.Vault) map[string]string {
	t.Helper()
	return wikiFiles(t, v, false)
}

// AllWikiFiles is WikiFiles with the temporary files too.
func AllWikiFiles(t testing.TB, v *vault.Vault) map[string]string {
	t.Helper()
	return wikiFiles(t, v, true)
}

func wikiFiles(t testing.TB, v *vault.Vault, temp bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := v.Abs(vault.WikiDir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !temp && strings.HasSuffix(p, ".tmp") {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
