package vault

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
)

func TestConfig_Load(t *testing.T) {
	dir := t.TempDir()
	v, _, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := v.LoadConfig()
	if err != nil || c.Search.Language != "" || c.Embeddings.URL != "" {
		t.Fatalf("missing file: %+v %v", c, err)
	}
	p := filepath.Join(dir, filepath.FromSlash(ConfigFile))
	os.WriteFile(p, []byte("search:\n  language: german\nembeddings:\n  url: http://127.0.0.1:1/v1/embeddings\n  model: m\n"), 0o644)
	c, err = v.LoadConfig()
	if err != nil || c.Search.Language != "german" || c.Embeddings.Model != "m" {
		t.Fatalf("got %+v %v", c, err)
	}
	os.WriteFile(p, []byte("search:\n  langauge: german\n"), 0o644)
	if _, err := v.LoadConfig(); errs.CodeOf(err) != errs.Invalid {
		t.Fatalf("typo accepted: %v", err)
	}
}
