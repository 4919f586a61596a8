package vault

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
)

// trustVault is a vault with the given config, and a private user config
// folder (XDG_CONFIG_HOME) holding userCfg when it is not empty.
func trustVault(t *testing.T, cfg, userCfg string) *Vault {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	v, _, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if cfg != "" {
		if err := os.WriteFile(v.Abs(ConfigFile), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if userCfg != "" {
		dir, _ := UserConfigDir()
		os.MkdirAll(dir, 0o700)
		if err := os.WriteFile(filepath.Join(dir, UserConfigName), []byte(userCfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

const hostileCfg = "search:\n  language: german\nembeddings:\n  url: http://attacker.example/v1/embeddings\n  model: m\n  api_key_env: GITHUB_TOKEN\n  batch: 3\n"

// TestConfig_UntrustedSettingsIgnored: the settings of a vault's config
// that reach the network or name a secret take effect only once the file
// is trusted as it is; the harmless ones always do.
func TestConfig_UntrustedSettingsIgnored(t *testing.T) {
	cases := []struct {
		name, cfg, user  string
		trust            bool
		edit             string // appended after trusting
		wantURL, wantKey string
		wantGit          bool
		wantIgnored      []string
		wantState        string
	}{
		{name: "untrusted", cfg: hostileCfg,
			wantIgnored: []string{"embeddings.api_key_env", "embeddings.url"}, wantState: TrustUntrusted},
		{name: "trusted", cfg: hostileCfg, trust: true,
			wantURL: "http://attacker.example/v1/embeddings", wantKey: "GITHUB_TOKEN"},
		{name: "changed after trust", cfg: hostileCfg, trust: true, edit: "freshness:\n  max_files: 5\n",
			wantIgnored: []string{"embeddings.api_key_env", "embeddings.url"}, wantState: TrustChanged},
		{name: "user config wins over an untrusted vault", cfg: hostileCfg,
			user:    "embeddings:\n  url: http://127.0.0.1:11434/v1/embeddings\n  api_key_env: MY_KEY\n",
			wantURL: "http://127.0.0.1:11434/v1/embeddings", wantKey: "MY_KEY",
			wantIgnored: []string{"embeddings.api_key_env", "embeddings.url"}, wantState: TrustUntrusted},
		{name: "harmless only", cfg: "search:\n  language: german\nembeddings:\n  model: m\n  batch: 3\n"},
		{name: "git commits untrusted", cfg: hostileCfg + "history:\n  git: true\n  page_mb: 2\n",
			wantIgnored: []string{"embeddings.api_key_env", "embeddings.url", "history.git"}, wantState: TrustUntrusted},
		{name: "git commits trusted", cfg: hostileCfg + "history:\n  git: true\n  page_mb: 2\n", trust: true,
			wantURL: "http://attacker.example/v1/embeddings", wantKey: "GITHUB_TOKEN", wantGit: true},
		{name: "git commits from the user's config", cfg: hostileCfg, user: "history:\n  git: true\n",
			wantGit: true, wantIgnored: []string{"embeddings.api_key_env", "embeddings.url"}, wantState: TrustUntrusted},
		{name: "user config alone", user: "embeddings:\n  url: http://u/v1\n  model: m\n  batch: 3\n", wantURL: "http://u/v1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := trustVault(t, tc.cfg, tc.user)
			if tc.trust {
				if _, err := v.Trust(time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			if tc.edit != "" {
				f, _ := os.OpenFile(v.Abs(ConfigFile), os.O_APPEND|os.O_WRONLY, 0)
				f.WriteString(tc.edit)
				f.Close()
			}
			c, err := v.LoadConfig()
			if err != nil {
				t.Fatal(err)
			}
			if c.Embeddings.URL != tc.wantURL || c.Embeddings.APIKeyEnv != tc.wantKey {
				t.Errorf("url %q key %q, want %q %q", c.Embeddings.URL, c.Embeddings.APIKeyEnv, tc.wantURL, tc.wantKey)
			}
			if c.History.Git != tc.wantGit {
				t.Errorf("history.git %v, want %v", c.History.Git, tc.wantGit)
			}
			if strings.Contains(tc.cfg, "page_mb") && c.History.PageMB != 2 {
				t.Errorf("history.page_mb lost: %+v", c.History)
			}
			if !slices.Equal(c.Ignored, tc.wantIgnored) || c.TrustState != tc.wantState {
				t.Errorf("ignored %v (%s), want %v (%s)", c.Ignored, c.TrustState, tc.wantIgnored, tc.wantState)
			}
			if c.Embeddings.Model != "m" || c.Embeddings.Batch != 3 {
				t.Errorf("harmless settings lost: %+v", c.Embeddings)
			}
			if tc.cfg != "" && c.Search.Language != "german" {
				t.Errorf("search.language lost: %+v", c.Search)
			}
			note := c.UntrustedNote()
			if (note != "") != (len(tc.wantIgnored) > 0) || (note != "" && !strings.Contains(note, "synapse trust")) {
				t.Errorf("note %q", note)
			}
		})
	}
}

// TestTrust_RecordOutsideVault: trust is recorded in the user's config
// folder, never in the vault; revoke forgets it; a vault without a config
// has nothing to trust.
func TestTrust_RecordOutsideVault(t *testing.T) {
	v := trustVault(t, hostileCfg, "")
	st, err := v.TrustState()
	if err != nil || st.State != TrustUntrusted || len(st.Settings) != 2 {
		t.Fatalf("before: %+v %v", st, err)
	}
	st, err = v.Trust(time.Now())
	if err != nil || st.State != TrustTrusted {
		t.Fatalf("trust: %+v %v", st, err)
	}
	if strings.HasPrefix(st.Record, v.Root) {
		t.Errorf("trust recorded inside the vault: %s", st.Record)
	}
	if fi, err := os.Stat(st.Record); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("record %s: %v %v", st.Record, fi, err)
	}
	// another path to the same vault finds the record
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(v.Root, link)
	if st, _ := (&Vault{Root: link}).TrustState(); st == nil || st.State != TrustTrusted {
		t.Errorf("through a symlinked path: %+v", st)
	}
	if st, err = v.Revoke(); err != nil || st.State != TrustUntrusted {
		t.Fatalf("revoke: %+v %v", st, err)
	}
	if c, _ := v.LoadConfig(); c.Embeddings.URL != "" {
		t.Errorf("revoked but used: %+v", c.Embeddings)
	}
	os.Remove(v.Abs(ConfigFile))
	if _, err := v.Trust(time.Now()); errs.CodeOf(err) != errs.NotFound {
		t.Errorf("trust without a config: %v", err)
	}
}

// TestConfig_UserConfigMalformed: a typo in the user's config names it.
func TestConfig_UserConfigMalformed(t *testing.T) {
	v := trustVault(t, "", "embedings:\n  url: x\n")
	_, err := v.LoadConfig()
	if errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), UserConfigName) {
		t.Fatalf("got %v", err)
	}
}

// TestUserConfigDir: XDG_CONFIG_HOME when absolute, else ~/.config.
func TestUserConfigDir(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	for _, tc := range []struct{ xdg, want string }{
		{"/x/cfg", "/x/cfg/synapse"},
		{"", "/home/u/.config/synapse"},
		{"relative", "/home/u/.config/synapse"},
	} {
		t.Setenv("XDG_CONFIG_HOME", tc.xdg)
		if got, err := UserConfigDir(); err != nil || got != tc.want {
			t.Errorf("XDG_CONFIG_HOME=%q: %q %v, want %q", tc.xdg, got, err, tc.want)
		}
	}
}

// TestRecordToken: a token synapse recorded is known, another is not, and
// recording keeps the trust records.
func TestRecordToken(t *testing.T) {
	v := trustVault(t, hostileCfg, "")
	if _, err := v.Trust(time.Now()); err != nil {
		t.Fatal(err)
	}
	if ok, err := TokenCreated("tok-secret-1"); ok || err != nil {
		t.Fatalf("before: %v %v", ok, err)
	}
	if err := v.RecordToken("tok-secret-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	if ok, _ := TokenCreated("tok-secret-1"); !ok {
		t.Error("recorded token unknown")
	}
	if ok, _ := TokenCreated("tok-secret-2"); ok {
		t.Error("unrecorded token known")
	}
	if st, _ := v.TrustState(); st.State != TrustTrusted {
		t.Errorf("trust lost: %+v", st)
	}
	dir, _ := UserConfigDir()
	data, _ := os.ReadFile(filepath.Join(dir, RecordName))
	if strings.Contains(string(data), "tok-secret") {
		t.Error("the token itself is in the record")
	}
}
