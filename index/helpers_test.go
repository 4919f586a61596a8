package index

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/synapse-wiki/synapse/vault"
)

func readFileOS(p string) ([]byte, error) { return os.ReadFile(p) }

func rm(t testing.TB, v *vault.Vault, rel string) {
	t.Helper()
	if err := os.Remove(v.Abs(rel)); err != nil {
		t.Fatal(err)
	}
}

func mv(t testing.TB, v *vault.Vault, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(v.Abs(to)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(v.Abs(from), v.Abs(to)); err != nil {
		t.Fatal(err)
	}
}
