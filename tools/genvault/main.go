// Command genvault generates a synthetic vault for benchmarks and tests:
//
//	go run ./tools/genvault -pages 10000 -sources 1000 -out /tmp/v10k
//	go run ./tools/genvault -wild -pages 300 -out /tmp/wild
//
// It runs `synapse init`'s layout itself (no synapse binary needed) and
// writes a manifest (pages.tsv) next to the vault for query sets. With
// -wild it generates a vault with the conventions of LLM wikis in the wild
// (internal/wildgen: open types, citations of every kind, broken YAML,
// CRLF, BOM, en/ru twins, …); -no-huge leaves out its >1 MB page and huge
// index.md.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/internal/vaultgen"
	"github.com/synapse-wiki/synapse/internal/wildgen"
	"github.com/synapse-wiki/synapse/vault"
)

func main() {
	pages := flag.Int("pages", 10000, "number of wiki pages")
	sources := flag.Int("sources", 1000, "number of raw sources")
	seed := flag.Int64("seed", 1, "random seed")
	words := flag.Int("words", 450, "mean words per page")
	out := flag.String("out", "", "vault folder to create (must not exist)")
	corpus := flag.String("corpus", testvault.CorpusDir(), "folder of markdown supplying the vocabulary")
	wild := flag.Bool("wild", false, "generate a vault with the conventions of LLM wikis in the wild")
	noHuge := flag.Bool("no-huge", false, "with -wild: leave out the >1 MB page and the huge index.md")
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
	var ps []vaultgen.Page
	if *wild {
		m, err := wildgen.Generate(v.Root, wildgen.Options{Pages: *pages, Sources: *sources, Seed: *seed, NoHuge: *noHuge})
		if err != nil {
			fmt.Fprintln(os.Stderr, "genvault:", err)
			os.Exit(1)
		}
		for _, p := range m.Pages {
			ps = append(ps, vaultgen.Page{Title: p.Title, Path: p.Path, Type: p.Type})
		}
	} else {
		ps, err = vaultgen.Generate(v.Root, vaultgen.Options{Pages: *pages, Sources: *sources, Seed: *seed, BodyWords: *words, CorpusDir: *corpus})
		if err != nil {
			fmt.Fprintln(os.Stderr, "genvault:", err)
			os.Exit(1)
		}
	}
	manifest := filepath.Join(filepath.Dir(v.Root), filepath.Base(v.Root)+".pages.tsv")
	if err := vaultgen.WriteManifest(manifest, ps); err != nil {
		fmt.Fprintln(os.Stderr, "genvault:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "generated %d pages and %d sources in %s (%s); manifest %s\n", len(ps), *sources, v.Root, time.Since(start).Round(time.Millisecond), manifest)
}
