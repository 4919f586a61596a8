package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"

	"go.yaml.in/yaml/v3"

	"github.com/synapse-wiki/synapse/errs"
)

// ConfigFile is the vault's optional configuration, YAML, relative to the
// vault root. A vault without it uses the defaults of every section.
const ConfigFile = ".synapse/config.yaml"

// maxConfigBytes bounds the configuration file: it is small by nature.
const maxConfigBytes = 64 << 10

// Config is a configuration: the vault's (ConfigFile) or the user's own
// (UserConfigName), in the same form. Each section belongs
// to one subsystem and documents its own keys; environment variables may
// override a section's values where that section says so. Unknown keys
// are an error naming them, so a typo never silently falls back to a
// default.
type Config struct {
	// Search configures ranking and analysis (see package search).
	Search SearchConfig `yaml:"search"`
	// Embeddings configures the optional embedding provider (off when
	// empty).
	Embeddings EmbeddingsConfig `yaml:"embeddings"`
	// Freshness configures the check of a CLI verb for files changed
	// since the last scan (index/fresh.go).
	Freshness FreshnessConfig `yaml:"freshness"`
	// History configures page history and the optional git commits
	// (docs/history.md).
	History HistoryConfig `yaml:"history"`

	// Ignored lists the sensitive settings of the vault's file that were
	// left out because the user has not trusted it as it is (sorted
	// keys, e.g. "embeddings.url"); TrustState says why (TrustUntrusted
	// or TrustChanged).
	Ignored    []string `yaml:"-"`
	TrustState string   `yaml:"-"`
}

// HistoryConfig is the `history:` section of the configuration: the
// bounds of the page history kept in .synapse/history/ (zero or absent:
// the defaults of package history: 100 revisions and 8 MiB per page,
// 2 GiB in all) and whether each write also commits to git.
type HistoryConfig struct {
	// PageRevisions is the most revisions kept per page.
	PageRevisions int `yaml:"page_revisions,omitempty"`
	// PageMB is the most megabytes (MiB) one page's history takes.
	PageMB int `yaml:"page_mb,omitempty"`
	// TotalMB is the most megabytes (MiB) the whole history takes.
	TotalMB int `yaml:"total_mb,omitempty"`
	// Git, when true and the vault is in a git work tree, makes each
	// write commit the files it changed. It runs the git program, so in
	// a vault's own config it needs trust (Sensitive).
	Git bool `yaml:"git,omitempty"`
}

// FreshnessConfig is the `freshness:` section of the configuration:
// before a CLI verb that opens the store itself answers (no server
// running), it asks the vault's file monitor which files changed, or
// without one compares every tracked file's size and mtime with the
// index when the vault has at most MaxFiles tracked files (default
// 20000; -1: never), and always each folder's mtime. Monitor is "auto"
// (the default: a monitor for vaults of 2,000 pages or more), "on" or
// "off". The environment variables SYNAPSE_FRESH_MAX_FILES and
// SYNAPSE_FRESH_MONITOR override them; SYNAPSE_FRESH=off turns the check
// off.
type FreshnessConfig struct {
	MaxFiles int    `yaml:"max_files,omitempty"`
	Monitor  string `yaml:"monitor,omitempty"`
}

// SearchConfig is the `search:` section of the configuration.
type SearchConfig struct {
	// Language is the vault's default language for stemming pages that do
	// not declare one and cannot be detected (e.g. "english", "german").
	// Empty means the built-in default.
	Language string `yaml:"language,omitempty"`
}

// EmbeddingsConfig is the `embeddings:` section of the configuration.
type EmbeddingsConfig struct {
	// URL is an OpenAI-compatible embeddings endpoint
	// (e.g. http://127.0.0.1:11434/v1/embeddings). Empty: no provider.
	URL string `yaml:"url,omitempty"`
	// Model is the model name sent with each request.
	Model string `yaml:"model,omitempty"`
	// APIKeyEnv names the environment variable holding the API key (the
	// key itself is never stored in the vault).
	APIKeyEnv string `yaml:"api_key_env,omitempty"`
	// Batch is the number of chunks per request (default 32),
	// Concurrency the number of requests in flight (default 2).
	Batch       int `yaml:"batch,omitempty"`
	Concurrency int `yaml:"concurrency,omitempty"`
	// Timeout bounds one embedding request (a Go duration, default
	// "60s"); QueryTimeout bounds the query vector of a search (default
	// "2s"), after which the search answers lexically.
	Timeout      string `yaml:"timeout,omitempty"`
	QueryTimeout string `yaml:"query_timeout,omitempty"`
}

// LoadConfig returns the configuration in effect for the vault: the
// user's own (UserConfigFile in UserConfigDir, for every vault), overlaid
// by the vault's ConfigFile — whose sensitive settings (Sensitive) count
// only when the user trusted the file as it is (docs/security.md; the
// others are listed in Ignored). Missing files give the zero Config; a
// malformed one is errs.Invalid naming the file and the problem.
func (v *Vault) LoadConfig() (*Config, error) {
	c, err := loadUserConfig()
	if err != nil {
		return nil, err
	}
	vc, data, err := v.readVaultConfig()
	if err != nil || data == nil {
		return c, err
	}
	if len(vc.Sensitive()) > 0 {
		state := TrustUntrusted
		if dir, err := UserConfigDir(); err == nil {
			// a record that cannot be read trusts nothing
			if tf, err := readTrust(dir); err == nil {
				state = v.trustState(dir, tf, vc, data).State
			}
		}
		if state != TrustTrusted {
			c.Ignored, c.TrustState = vc.withoutSensitive(), state
		}
	}
	overlay(reflect.ValueOf(c).Elem(), reflect.ValueOf(vc).Elem())
	return c, nil
}

// loadUserConfig reads the user's own configuration (zero when there is
// none, or no user config folder).
func loadUserConfig() (*Config, error) {
	c := &Config{}
	dir, err := UserConfigDir()
	if err != nil {
		return c, nil
	}
	p := filepath.Join(dir, UserConfigName)
	data, err := ReadSmallFile(p, maxConfigBytes)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		// none, or another user's folder (XDG_CONFIG_HOME kept by sudo)
		return c, nil
	}
	if err == nil {
		err = decodeConfig(data, c)
	}
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "%s: %v", p, err)
	}
	return c, nil
}

// readVaultConfig reads the vault's ConfigFile as it is, with its bytes
// (nil when there is no file).
func (v *Vault) readVaultConfig() (*Config, []byte, error) {
	var c Config
	data, err := ReadSmallFile(v.Abs(ConfigFile), maxConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return &c, nil, nil
	}
	if errors.Is(err, fs.ErrPermission) {
		return nil, nil, errs.Wrap(errs.Forbidden, err, "%s cannot be read: permission denied (%s/ belongs to the vault's owner; run synapse as that user)", ConfigFile, StateDir)
	}
	if err == nil {
		err = decodeConfig(data, &c)
	}
	if err != nil {
		return nil, nil, errs.Wrap(errs.Invalid, err, "%s: %v", ConfigFile, err)
	}
	return &c, data, nil
}

// decodeConfig parses a configuration strictly (unknown keys are errors).
func decodeConfig(data []byte, c *Config) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	return dec.Decode(c)
}

// overlay sets every field of dst that src sets (non-zero), through
// nested structs; fields without a yaml name (Ignored) are left alone.
func overlay(dst, src reflect.Value) {
	for i := 0; i < src.NumField(); i++ {
		f := src.Type().Field(i)
		if f.Tag.Get("yaml") == "-" || f.Tag.Get("yaml") == "" {
			continue
		}
		if f.Type.Kind() == reflect.Struct {
			overlay(dst.Field(i), src.Field(i))
		} else if !src.Field(i).IsZero() {
			dst.Field(i).Set(src.Field(i))
		}
	}
}

// ReadSmallFile reads a small file of synapse's own (config.yaml, the
// trust record, the files of a vault's .synapse/, which arrives with the
// vault and so is untrusted): it must be a regular file, not a symlink, a
// named pipe or a device (a pipe would block the reader for ever), of at
// most max bytes; the file opened must be the one checked. Anything else
// is an error naming what it is.
func ReadSmallFile(path string, max int64) ([]byte, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", filepath.Base(path), st.Mode().Type())
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", filepath.Base(path), max)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fst, err := f.Stat(); err != nil || !os.SameFile(st, fst) {
		return nil, fmt.Errorf("%s changed while it was opened", filepath.Base(path))
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", filepath.Base(path), max)
	}
	return data, nil
}
