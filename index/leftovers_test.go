package index

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestScan_RemovesKilledWritesTempFiles: a scan of the whole vault
// removes the temporary files killed writes left (synapse's form, older
// than any write takes), and nothing else: not a recent one (a write may
// be under way), not an editor's, not one outside wiki/, synapse's top
// files and the page history; a scan of named files removes nothing.
func TestScan_RemovesKilledWritesTempFiles(t *testing.T) {
	old := time.Now().Add(-2 * leftoverAge)
	files := map[string]bool{ // path → removed by a whole scan
		"wiki/.page.md.1234567890.tmp":              true,
		"wiki/concepts/.deep.md.42.tmp":             true,
		"wiki/.index.md.9.tmp":                      true,
		".purpose.md.77.tmp":                        true,
		"wiki/.recent.md.5.tmp":                     false, // recent
		"wiki/.page.md.tmp":                         false, // an editor's
		"wiki/.page.md.swp":                         false,
		"wiki/page.md.12.tmp":                       false, // not hidden
		"raw/sources/.source.md.12.tmp":             false, // not under wiki/
		"wiki/.page.md.12345678901234567890123.tmp": false, // not ours: too many digits
	}
	for _, named := range []bool{true, false} {
		v := testvault.New(t)
		ix := openIndexer(t, v)
		for p := range files {
			testvault.Write(t, v, p, "x")
			if p != "wiki/.recent.md.5.tmp" {
				if err := os.Chtimes(v.Abs(p), old, old); err != nil {
					t.Fatal(err)
				}
			}
		}
		opts := ScanOptions{}
		if named {
			opts.Paths = []string{"wiki/concepts"}
		}
		if _, err := ix.Scan(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		for p, removed := range files {
			_, err := os.Lstat(v.Abs(p))
			if gone := err != nil; gone != (removed && !named) {
				t.Errorf("named scan %v: %s gone %v", named, p, gone)
			}
		}
	}
}
