package index

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

const (
	nfc = "wiki/R\u00e9sum\u00e9.md"
	nfd = "wiki/Re\u0301sume\u0301.md"
)

// twinFS skips a test on a file system that does not keep two names that
// differ only by case or normalization apart (macOS, Windows).
func twinFS(t *testing.T, v *vault.Vault) {
	t.Helper()
	testvault.Write(t, v, "wiki/Probe.md", "a")
	testvault.Write(t, v, "wiki/probe.md", "b")
	defer os.Remove(v.Abs("wiki/Probe.md"))
	defer os.Remove(v.Abs("wiki/probe.md"))
	if data, _ := os.ReadFile(v.Abs("wiki/Probe.md")); string(data) != "a" {
		t.Skip("this file system folds case")
	}
}

func indexedPaths(t *testing.T, ix *Indexer) string {
	t.Helper()
	var paths []string
	_ = ix.Store.View(func(tx *store.Tx) error {
		return tx.EachPage(func(p *store.PageRec) bool {
			if !p.Reserved {
				paths = append(paths, p.Path)
			}
			return true
		})
	})
	return strings.Join(paths, " ")
}

func refusedTwins(t *testing.T, ix *Indexer) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = ix.Store.View(func(tx *store.Tx) error {
		for _, r := range RefusedFiles(tx).Files {
			if r.Reason == TwinReason {
				out[r.Path] = r.TwinOf
			}
		}
		return nil
	})
	return out
}

// TestScan_TwinNamesReported: of page files whose names differ only by
// case or Unicode normalization, one is indexed and every other is
// reported by name (before, one of each pair vanished in silence, and a
// scan of one file could replace the other's page); whether they arrive
// together or one after the other, the indexed one stays, and when it
// goes its twin becomes the page.
func TestScan_TwinNamesReported(t *testing.T) {
	for _, together := range []bool{true, false} {
		v := testvault.New(t)
		twinFS(t, v)
		ix := openIndexer(t, v)
		ctx := context.Background()
		testvault.Write(t, v, "wiki/Upper.md", "# A\n")
		testvault.Write(t, v, nfd, "# nfd\n")
		if !together {
			if _, err := ix.Scan(ctx, ScanOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		testvault.Write(t, v, "wiki/upper.md", "# B\n")
		testvault.Write(t, v, nfc, "# nfc\n")
		paths := []string{}
		if !together {
			paths = []string{"wiki/upper.md", nfc} // as the freshness check asks
		}
		if _, err := ix.Scan(ctx, ScanOptions{Paths: paths}); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"wiki/upper.md": "wiki/Upper.md", nfc: nfd}
		if together {
			// NFC is preferred, then byte order
			want = map[string]string{"wiki/upper.md": "wiki/Upper.md", nfd: nfc}
		}
		got := refusedTwins(t, ix)
		if len(got) != 2 || got["wiki/upper.md"] != want["wiki/upper.md"] || (got[nfc] != want[nfc] && got[nfd] != want[nfd]) {
			t.Fatalf("together %v: twins %q, want %q; indexed %s", together, got, want, indexedPaths(t, ix))
		}
		if n := strings.Count(indexedPaths(t, ix), " ") + 1; n != 2 {
			t.Fatalf("indexed: %s", indexedPaths(t, ix))
		}
		// the indexed one goes: its twin is the page now
		rm(t, v, "wiki/Upper.md")
		if _, err := ix.Scan(ctx, ScanOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := indexedPaths(t, ix); !strings.Contains(got, "wiki/upper.md") {
			t.Fatalf("after the indexed twin went: %s", got)
		}
		if _, ok := refusedTwins(t, ix)["wiki/upper.md"]; ok {
			t.Fatal("still refused")
		}
	}
}
