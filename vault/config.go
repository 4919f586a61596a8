package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/synapse-wiki/synapse/errs"
)

// ConfigFile is the vault's optional configuration, YAML, relative to the
// vault root. A vault without it uses the defaults of every section.
const ConfigFile = ".synapse/config.yaml"

// maxConfigBytes bounds the configuration file: it is small by nature.
const maxConfigBytes = 64 << 10

// Config is the vault's configuration (ConfigFile). Each section belongs
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
	// write commit the files it changed. It runs the git program, so
	// it is read through one function (ops.gitWanted), where a trust
	// check applies.
	Git bool `yaml:"git,omitempty"`
}

// FreshnessConfig is the `freshness:` section of the configuration:
// before a CLI verb that opens the store itself answers (no server
// running), it compares every tracked file's size and mtime with the
// index when the vault has at most MaxFiles tracked files (default
// 20000; -1: never), and always each folder's mtime. The environment
// variable SYNAPSE_FRESH_MAX_FILES overrides MaxFiles; SYNAPSE_FRESH=off
// turns the check off.
type FreshnessConfig struct {
	MaxFiles int `yaml:"max_files,omitempty"`
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

// LoadConfig reads the vault's configuration. A missing file gives the
// zero Config; a malformed one is errs.Invalid naming the file and the
// problem.
func (v *Vault) LoadConfig() (*Config, error) {
	var c Config
	data, err := readSmallFile(v.Abs(ConfigFile), maxConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return &c, nil
	}
	if errors.Is(err, fs.ErrPermission) {
		return nil, errs.Wrap(errs.Forbidden, err, "%s cannot be read: permission denied (%s/ belongs to the vault's owner; run synapse as that user)", ConfigFile, StateDir)
	}
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "%s: %v", ConfigFile, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return &c, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "%s: %v", ConfigFile, err)
	}
	return &c, nil
}

// readSmallFile reads at most max bytes of a regular file; a larger file
// or anything but a regular file is an error.
func readSmallFile(path string, max int64) ([]byte, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if st.Size() > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return os.ReadFile(path)
}
