// Command tldrvault builds a command-reference vault from a checkout of
// tldr-pages (https://github.com/tldr-pages/tldr), for the search
// evaluation over short command words (search/tldr_eval_test.go):
//
//	git clone --depth 1 https://github.com/tldr-pages/tldr /tmp/tldr
//	go run ./tools/tldrvault -src /tmp/tldr -out /tmp/tldr-vault
//	SEARCH_TLDR_VAULT=/tmp/tldr-vault go test ./search -run EvalCommands -v
//
// Each page of the chosen platforms (pages/<platform>/<name>.md) becomes
// wiki/<platform>/<name>.md with its first-line heading as the frontmatter
// title and the rest of the page as its body. The vault's pages are
// tldr's (CC BY 4.0); nothing of them is kept in this repository.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/synapse-wiki/synapse/vault"
)

func main() {
	src := flag.String("src", "", "tldr-pages checkout (holds pages/)")
	out := flag.String("out", "", "vault folder to create (must not exist)")
	platforms := flag.String("platforms", "common,linux", "comma-separated platforms (folders of pages/)")
	flag.Parse()
	if *src == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "tldrvault: -src and -out are required")
		os.Exit(2)
	}
	if _, err := os.Stat(*out); err == nil {
		fmt.Fprintf(os.Stderr, "tldrvault: %s exists; choose a new folder\n", *out)
		os.Exit(2)
	}
	n, err := build(*src, *out, strings.Split(*platforms, ","))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tldrvault:", err)
		os.Exit(1)
	}
	fmt.Printf("%d pages in %s\n", n, *out)
}

// build converts the pages of each platform into a new vault at out and
// returns how many it wrote.
func build(src, out string, platforms []string) (int, error) {
	v, _, err := vault.Init(out)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range platforms {
		files, err := filepath.Glob(filepath.Join(src, "pages", p, "*.md"))
		if err != nil {
			return n, err
		}
		if len(files) == 0 {
			return n, fmt.Errorf("no pages under %s", filepath.Join(src, "pages", p))
		}
		dir := v.Abs(filepath.Join(vault.WikiDir, p))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return n, err
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return n, err
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), page(data), 0o644); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// page turns a tldr page into a wiki page: its "# name" line becomes the
// title in frontmatter.
func page(data []byte) []byte {
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	title, ok := bytes.CutPrefix(bytes.TrimSpace(first), []byte("# "))
	if !ok {
		return data
	}
	var b bytes.Buffer
	b.WriteString("---\ntitle: " + strconv.Quote(string(title)) + "\n---\n")
	b.Write(rest)
	return b.Bytes()
}
