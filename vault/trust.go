package vault

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/synapse-wiki/synapse/errs"
)

// A vault arrives from anywhere (git clone, a sync tool, a download), so
// its .synapse/config.yaml is untrusted: a setting in it that reaches the
// network or names a secret (Config.Sensitive) takes effect only once the
// user has trusted that file, byte for byte, with `synapse trust`. The
// record lives outside every vault, in the user's config folder, keyed by
// the vault's absolute path and holding the file's sha256: a changed file
// is untrusted again. The user's own config (UserConfigFile) and the
// environment are always trusted. docs/security.md tells the whole model.

// UserConfigName and RecordName are the files of the user's config
// folder (UserConfigDir): the user's own configuration, whose sections
// apply to every vault, and synapse's record of the vault configs the user
// trusted and of the HTTP tokens it created.
const (
	UserConfigName = "config.yaml"
	RecordName     = "vaults.json"
)

// UserConfigDir is the user's synapse config folder: $XDG_CONFIG_HOME/synapse
// when XDG_CONFIG_HOME is set to an absolute path, else ~/.config/synapse.
// It is an error (unavailable) when neither can be known.
func UserConfigDir() (string, error) {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "synapse"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" || !filepath.IsAbs(home) {
		return "", errs.E(errs.Unavailable, "no user config folder: set $HOME or $XDG_CONFIG_HOME")
	}
	return filepath.Join(home, ".config", "synapse"), nil
}

// TrustState is what the user's trust record says of a vault's config.
type TrustState struct {
	// Vault is the vault's root; Config the file, vault-relative.
	Vault  string `json:"vault"`
	Config string `json:"config"`
	// SHA256 is the file's hash now ("" when there is no file).
	SHA256 string `json:"sha256"`
	// State is "trusted" (the record holds this hash), "changed" (a
	// record of another hash: the file changed since it was trusted),
	// "untrusted" (no record) or "none" (no config file).
	State string `json:"state"`
	// TrustedSHA256 and TrustedAt are the record, when there is one.
	TrustedSHA256 string `json:"trusted_sha256,omitempty"`
	TrustedAt     string `json:"trusted_at,omitempty"`
	// Settings lists the file's settings that need trust, as "key: value".
	Settings []string `json:"settings"`
	// Record is the file holding the user's trust records.
	Record string `json:"record"`
}

// Trust states.
const (
	TrustTrusted   = "trusted"
	TrustChanged   = "changed"
	TrustUntrusted = "untrusted"
	TrustNone      = "none"
)

// trustRecord is one vault's entry in the record file.
type trustRecord struct {
	SHA256    string `json:"sha256"`
	TrustedAt string `json:"trusted_at"`
}

// tokenRecord is a token synapse created (keyed by its sha256).
type tokenRecord struct {
	Vault     string `json:"vault"`
	CreatedAt string `json:"created_at"`
}

// trustFile is the record file's content.
type trustFile struct {
	Vaults map[string]trustRecord `json:"vaults"`
	Tokens map[string]tokenRecord `json:"tokens,omitempty"`
}

// trustMu serializes this process's changes of the record file (its
// read-modify-write); the file itself is replaced atomically.
var trustMu sync.Mutex

// maxTrustBytes bounds the record file (a few hundred bytes a vault).
const maxTrustBytes = 4 << 20

// trustKey is the key of v in the record file: its root with symlinks
// resolved, so that every path leading to the vault finds one record.
func (v *Vault) trustKey() string {
	if r, err := filepath.EvalSymlinks(v.Root); err == nil {
		return r
	}
	return v.Root
}

func hashHex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// readTrust reads the record file of dir; a missing one is empty.
func readTrust(dir string) (*trustFile, error) {
	tf := &trustFile{Vaults: map[string]trustRecord{}}
	data, err := ReadSmallFile(filepath.Join(dir, RecordName), maxTrustBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "%s: %v", filepath.Join(dir, RecordName), err)
	}
	if err := json.Unmarshal(data, tf); err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "%s: %v (remove it to trust vaults again)", filepath.Join(dir, RecordName), err)
	}
	if tf.Vaults == nil {
		tf.Vaults = map[string]trustRecord{}
	}
	return tf, nil
}

// writeTrust replaces the record file of dir atomically (0600, in a 0700
// folder created if needed).
func writeTrust(dir string, tf *trustFile) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return errs.Wrap(errs.Internal, err, "create %s: %v", dir, err)
	}
	data, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return errs.Wrap(errs.Internal, err, "encode the trust record: %v", err)
	}
	f, err := os.CreateTemp(dir, ".trust-*.tmp")
	if err != nil {
		return errs.Wrap(errs.Internal, err, "write %s: %v", dir, err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, RecordName))
	}
	if err != nil {
		return errs.Wrap(errs.Internal, err, "write %s: %v", filepath.Join(dir, RecordName), err)
	}
	return nil
}

// TrustState reports whether the vault's config is trusted, and what in
// it needs trust. A malformed config is invalid, naming it.
func (v *Vault) TrustState() (*TrustState, error) {
	dir, err := UserConfigDir()
	if err != nil {
		return nil, err
	}
	c, data, err := v.readVaultConfig()
	if err != nil {
		return nil, err
	}
	tf, err := readTrust(dir)
	if err != nil {
		return nil, err
	}
	return v.trustState(dir, tf, c, data), nil
}

func (v *Vault) trustState(dir string, tf *trustFile, c *Config, data []byte) *TrustState {
	st := &TrustState{Vault: v.Root, Config: ConfigFile, Record: filepath.Join(dir, RecordName), Settings: c.Sensitive(), State: TrustNone}
	if data == nil {
		return st
	}
	st.SHA256 = hashHex(data)
	rec, ok := tf.Vaults[v.trustKey()]
	switch {
	case !ok:
		st.State = TrustUntrusted
	case rec.SHA256 == st.SHA256:
		st.State = TrustTrusted
	default:
		st.State = TrustChanged
	}
	if ok {
		st.TrustedSHA256, st.TrustedAt = rec.SHA256, rec.TrustedAt
	}
	return st
}

// Trust records the vault's config file, as it is now, as trusted by the
// user, and returns the new state. Without a config file there is nothing
// to trust (not_found).
func (v *Vault) Trust(now time.Time) (*TrustState, error) {
	return v.changeTrust(func(st *TrustState, tf *trustFile) error {
		if st.State == TrustNone {
			return errs.E(errs.NotFound, "%s has no %s: nothing to trust", v.Root, ConfigFile)
		}
		tf.Vaults[v.trustKey()] = trustRecord{SHA256: st.SHA256, TrustedAt: now.UTC().Format(time.RFC3339)}
		st.State, st.TrustedSHA256, st.TrustedAt = TrustTrusted, st.SHA256, tf.Vaults[v.trustKey()].TrustedAt
		return nil
	})
}

// Revoke forgets the vault's trust record (harmless without one) and
// returns the new state.
func (v *Vault) Revoke() (*TrustState, error) {
	return v.changeTrust(func(st *TrustState, tf *trustFile) error {
		delete(tf.Vaults, v.trustKey())
		st.TrustedSHA256, st.TrustedAt = "", ""
		if st.State != TrustNone {
			st.State = TrustUntrusted
		}
		return nil
	})
}

func (v *Vault) changeTrust(change func(st *TrustState, tf *trustFile) error) (*TrustState, error) {
	c, data, err := v.readVaultConfig()
	if err != nil {
		return nil, err
	}
	var st *TrustState
	err = updateRecords(func(dir string, tf *trustFile) error {
		st = v.trustState(dir, tf, c, data)
		return change(st, tf)
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// updateRecords applies change to the record file and writes it back.
func updateRecords(change func(dir string, tf *trustFile) error) error {
	dir, err := UserConfigDir()
	if err != nil {
		return err
	}
	trustMu.Lock()
	defer trustMu.Unlock()
	tf, err := readTrust(dir)
	if err != nil {
		return err
	}
	if err := change(dir, tf); err != nil {
		return err
	}
	return writeTrust(dir, tf)
}

// RecordToken notes in the user's record file that synapse created token
// for v (only the token's sha256 is kept), so that a token file synapse
// did not create — one shipped with a cloned vault — is never mistaken
// for one it did. Call it before the token file is written.
func (v *Vault) RecordToken(token string, now time.Time) error {
	return updateRecords(func(_ string, tf *trustFile) error {
		if tf.Tokens == nil {
			tf.Tokens = map[string]tokenRecord{}
		}
		tf.Tokens[hashHex([]byte(token))] = tokenRecord{Vault: v.Root, CreatedAt: now.UTC().Format(time.RFC3339)}
		return nil
	})
}

// TokenCreated reports whether the user's record file says synapse
// created token (for any vault: a moved vault keeps its token).
func TokenCreated(token string) (bool, error) {
	dir, err := UserConfigDir()
	if err != nil {
		return false, err
	}
	tf, err := readTrust(dir)
	if err != nil {
		return false, err
	}
	_, ok := tf.Tokens[hashHex([]byte(token))]
	return ok, nil
}

// Sensitive lists the settings of c that reach the network, run a
// program or name a secret, as "key: value", in a fixed order. Only these
// need trust.
func (c *Config) Sensitive() []string {
	out := []string{}
	for _, s := range c.sensitive() {
		if v := s.value(); v != "" {
			out = append(out, s.key+": "+v)
		}
	}
	return out
}

// setting is one sensitive setting: its key and a pointer to its value
// (text or switch).
type setting struct {
	key  string
	text *string
	on   *bool
}

// value is the setting as written ("" when unset or off).
func (s setting) value() string {
	if s.text != nil {
		return *s.text
	}
	if *s.on {
		return "true"
	}
	return ""
}

// clear unsets the setting.
func (s setting) clear() {
	if s.text != nil {
		*s.text = ""
	} else {
		*s.on = false
	}
}

// sensitive names the settings that need trust, with a pointer to each.
// A new setting that reaches the network, runs a program or names a
// secret belongs here.
func (c *Config) sensitive() []setting {
	return []setting{
		{key: "embeddings.url", text: &c.Embeddings.URL},
		{key: "embeddings.api_key_env", text: &c.Embeddings.APIKeyEnv},
		// runs the git program in the vault, whose own .git/config
		// (fsmonitor, filters) can run anything
		{key: "history.git", on: &c.History.Git},
	}
}

// withoutSensitive clears c's sensitive settings and returns their keys.
func (c *Config) withoutSensitive() []string {
	var keys []string
	for _, s := range c.sensitive() {
		if s.value() != "" {
			keys = append(keys, s.key)
			s.clear()
		}
	}
	sort.Strings(keys)
	return keys
}

// UntrustedNote is the one line that says which settings of the vault's
// config were ignored and how to use them ("" when none was).
func (c *Config) UntrustedNote() string {
	if len(c.Ignored) == 0 {
		return ""
	}
	why := "this vault's config is not trusted"
	if c.TrustState == TrustChanged {
		why = "the file changed since it was trusted"
	}
	return fmt.Sprintf("ignoring %s in %s: %s (check the file, then run `synapse trust`)", strings.Join(c.Ignored, ", "), ConfigFile, why)
}
