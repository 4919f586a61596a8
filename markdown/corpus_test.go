package markdown

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse_Corpus(t *testing.T) {
	root := "../testdata/obsidian-help-en"
	if _, err := os.Stat(root); err != nil {
		t.Skip("corpus not present")
	}
	n, links, pageLinks := 0, 0, 0
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if d.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		data, _ := os.ReadFile(p)
		pg := Parse(p, data)
		if pg.FMError != "" {
			t.Errorf("%s: %s", p, pg.FMError)
		}
		n++
		links += len(pg.Links)
		for _, l := range pg.Links {
			if l.IsPageLink() {
				pageLinks++
			}
		}
		return nil
	})
	t.Logf("pages %d links %d page links %d", n, links, pageLinks)
}
