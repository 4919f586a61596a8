// Command genvault generates a synthetic vault for benchmarks:
//
//	go run ./tools/genvault -pages 10000 -sources 1000 -out /tmp/v10k
//
// It runs `synapse init`'s layout itself (no synapse binary needed) and
// writes a manifest (pages.tsv) next to the vault for query sets.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/internal/vaultgen"
	"github.com/synapse-wiki/synapse/vault"
)

func main() {
	pages := flag.Int("pages", 10000, "number of wiki pages")
	sources := flag.Int("sources", 1000, "number of raw sources")
	seed := flag.Int64("seed", 1, "random seed")
	words := flag.Int("words", 450, "mean words per page")
	out := flag.String("out", "", "vault folder to create (must not exist)")
	corpus := flag.String("corpus", testvault.CorpusDir(), "folder of markdown supplying the vocabulary")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "genvault: -out is required")
		os.Exit(2)
	}
	if _, err := os.Stat(*out); err == nil {
		fmt.Fprintf(os.Stderr, "genvault: %s exists; choose a new folder\n", *out)
		os.Exit(2)
	}
	start := time.Now()
	v, _, err := vault.Init(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genvault:", err)
		os.Exit(1)
	}
	ps, err := vaultgen.Generate(v.Root, vaultgen.Options{Pages: *pages, Sources: *sources, Seed: *seed, BodyWords: *words, CorpusDir: *corpus})
	if err != nil {
		fmt.Fprintln(os.Stderr, "genvault:", err)
		os.Exit(1)
	}
	manifest := filepath.Join(filepath.Dir(v.Root), filepath.Base(v.Root)+".pages.tsv")
	if err := vaultgen.WriteManifest(manifest, ps); err != nil {
		fmt.Fprintln(os.Stderr, "genvault:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "generated %d pages and %d sources in %s (%s); manifest %s\n", *pages, *sources, v.Root, time.Since(start).Round(time.Millisecond), manifest)
}
