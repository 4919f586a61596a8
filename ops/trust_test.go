package ops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

// TestTrust_HostileVaultConfig: a vault whose own config points the
// embeddings at a listener and names a secret variable as the key sends
// nothing and exposes nothing on status, search, list and embed until the
// user trusts it; status says what was ignored and how to trust it.
func TestTrust_HostileVaultConfig(t *testing.T) {
	f := newFakeProvider(t)
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/concepts/dog.md", "# Dog\n\nA hound.\n")
	cfg := "embeddings:\n  url: " + f.url() + "\n  model: fake-64\n  api_key_env: TEST_HOSTILE_SECRET\n"
	if err := os.WriteFile(v.Abs(vault.ConfigFile), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := OpenEnv(context.Background(), v, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := WithEnviron(context.Background(), append(os.Environ(), "TEST_HOSTILE_SECRET=s3cret"))
	run := func() (embedErr error) {
		t.Helper()
		for _, c := range []struct{ op, in string }{
			{"status", `{}`}, {"search", `{"query":"hound"}`}, {"search", `{"query":"hound","mode":"semantic"}`},
			{"search", `{"query":"hound","mode":"hybrid"}`}, {"page.list", `{}`}, {"embed", `{}`},
		} {
			out, err := Lookup(c.op).Call(ctx, e, []byte(c.in))
			if c.op == "embed" {
				embedErr = err
			}
			if err != nil && !(c.op == "embed" && errs.CodeOf(err) == errs.Unavailable) {
				t.Errorf("%s %s: %v", c.op, c.in, err)
			}
			if st, ok := out.(*StatusOut); ok && f.requests.Load() == 0 {
				if st.Config == nil || st.Config.Trust != vault.TrustUntrusted || !strings.Contains(st.Config.Note, "synapse trust") ||
					strings.Join(st.Config.Ignored, ",") != "embeddings.api_key_env,embeddings.url" {
					t.Errorf("status does not say what was ignored: %+v", st.Config)
				}
			}
		}
		return embedErr
	}
	run()
	if n := f.requests.Load(); n != 0 {
		t.Fatalf("an untrusted vault config sent %d requests", n)
	}
	// trusted, the same config is used (the listener counts, and sees the key)
	f.apiKey.Store("s3cret")
	if _, err := v.Trust(time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := run(); err != nil {
		t.Errorf("trusted, with the key: %v", err)
	}
	if f.requests.Load() == 0 {
		t.Fatal("a trusted config sent nothing: the test cannot see requests")
	}
	// changed after trust: untrusted again
	os.WriteFile(v.Abs(vault.ConfigFile), []byte(cfg+"  batch: 4\n"), 0o600)
	before := f.requests.Load()
	run()
	if n := f.requests.Load() - before; n != 0 {
		t.Fatalf("a config changed after trust sent %d requests", n)
	}
}

// TestEmbed_ReadsOnlyInsideTheVault: a page swapped for a symlink to a
// file outside the vault after it was indexed is not read by embed (main
// opened the path as is and sent the outside file to the provider).
func TestEmbed_ReadsOnlyInsideTheVault(t *testing.T) {
	f := newFakeProvider(t)
	v, e := embedVault(t, f, map[string]string{"wiki/concepts/dog.md": "# Dog\n\nA hound.\n"})
	outside := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(outside, []byte("# Secret\n\nOUTSIDE-SECRET-TEXT\n"), 0o600)
	os.Remove(v.Abs("wiki/concepts/dog.md"))
	if err := os.Symlink(outside, v.Abs("wiki/concepts/dog.md")); err != nil {
		t.Skip(err)
	}
	callEmbed(t, e, `{}`)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.seen {
		if strings.Contains(s, "OUTSIDE-SECRET-TEXT") {
			t.Fatalf("the outside file reached the provider: %q", s)
		}
	}
}
