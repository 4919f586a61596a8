package index

import (
	"context"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// TestScan_CompareRoots: the ordered compare of disk and store finds the
// same new, changed, deleted and unchanged files however the scan roots
// are spelled (whole trees, a folder with a trailing slash, a single file,
// overlapping roots).
func TestScan_CompareRoots(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		paths []string
	}{
		{"whole vault", nil},
		{"folders", []string{"wiki", "raw/sources"}},
		{"trailing slashes", []string{"wiki/", "raw/sources/"}},
		{"overlapping", []string{"raw/sources", "raw/sources/sub", "wiki", "wiki/a.md", "wiki/b.md", "raw/sources/z.md"}},
		{"files", []string{"wiki/a.md", "wiki/b.md", "wiki/c.md", "raw/sources/sub/x.md", "raw/sources/y.md", "raw/sources/z.md", "raw/sources-x.md"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := testvault.New(t)
			write := func(rel, body string, at time.Time) {
				testvault.Write(t, v, rel, body)
				if err := os.Chtimes(v.Abs(rel), at, at); err != nil {
					t.Fatal(err)
				}
			}
			write("wiki/a.md", "# A\n", t0)
			write("wiki/b.md", "# B\n", t0)
			write("raw/sources/sub/x.md", "x\n", t0)
			write("raw/sources/y.md", "y\n", t0)
			ix := openIndexer(t, v)
			if _, err := ix.Scan(context.Background(), ScanOptions{}); err != nil {
				t.Fatal(err)
			}
			write("wiki/b.md", "# B, edited\n", t0.Add(time.Hour))           // changed
			write("wiki/c.md", "# C\n", t0)                                  // new
			write("raw/sources/y.md", "y\n", t0.Add(time.Hour))              // touched only
			write("raw/sources/z.md", "z\n", t0)                             // new
			if err := os.Remove(v.Abs("raw/sources/sub/x.md")); err != nil { // deleted
				t.Fatal(err)
			}
			rep, err := ix.Scan(context.Background(), ScanOptions{Paths: tc.paths})
			if err != nil {
				t.Fatal(err)
			}
			got := [3][]string{rep.New, rep.Changed, rep.Deleted}
			want := [3][]string{{"raw/sources/z.md", "wiki/c.md"}, {"wiki/b.md"}, {"raw/sources/sub/x.md"}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("new, changed, deleted = %v, want %v", got, want)
			}
			// a.md unchanged; y.md touched (re-read, same hash); the three
			// reserved top files unchanged when wiki/ is scanned whole
			if rep.Unchanged < 2 {
				t.Errorf("unchanged = %d", rep.Unchanged)
			}
			again, err := ix.Scan(context.Background(), ScanOptions{Paths: tc.paths})
			if err != nil {
				t.Fatal(err)
			}
			if again.NewCount+again.ChangedCount+again.DeletedCount != 0 || again.Unchanged != again.Scanned {
				t.Errorf("second scan not quiet: %+v", again)
			}
		})
	}
}
