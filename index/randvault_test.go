package index

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

// randVault mutates a small vault at random: pages with titles, aliases,
// types, sources and links (some to names that do not exist yet).
type randVault struct {
	t     testing.TB
	v     *vault.Vault
	r     *rand.Rand
	pages []string // vault paths that exist
	last  string
	n     int
	dirs  []string // folders new pages go to
	names []string
}

var randNames = []string{"Apple", "Banana", "Cherry", "Date", "Elder", "Fig", "Grape", "Hazel", "Iris", "Juniper"}
var randTypes = []string{"entity", "concept", "source", "synthesis", "comparison", "query", "note", ""}

// randDirs are the folders of a random vault.
var randDirs = []string{"wiki/", "wiki/concepts/", "wiki/entities/", "wiki/deep/er/"}

// twinDirs make a bilingual vault: few names, each often present in
// several folders, so that links are decided by the folder tie-break.
var twinDirs = []string{"wiki/en/", "wiki/ru/", "wiki/en/sub/", "wiki/"}

func newRandVault(t testing.TB, v *vault.Vault, seed int64) *randVault {
	return newRandVaultIn(t, v, seed, randDirs, randNames)
}

func newRandVaultIn(t testing.TB, v *vault.Vault, seed int64, dirs, names []string) *randVault {
	rv := &randVault{t: t, v: v, r: rand.New(rand.NewSource(seed)), dirs: dirs, names: names}
	for i := 0; i < 6; i++ {
		testvault.Write(t, v, fmt.Sprintf("raw/sources/s%d.md", i), fmt.Sprintf("source %d\n", i))
	}
	for i := 0; i < 12; i++ {
		rv.add()
	}
	return rv
}

func (rv *randVault) name() string { return rv.names[rv.r.Intn(len(rv.names))] }

func (rv *randVault) content() string {
	var b strings.Builder
	b.WriteString("---\n")
	if rv.r.Intn(2) == 0 {
		fmt.Fprintf(&b, "title: %s %d\n", rv.name(), rv.r.Intn(3))
	}
	if t := randTypes[rv.r.Intn(len(randTypes))]; t != "" {
		fmt.Fprintf(&b, "type: %s\n", t)
	}
	if rv.r.Intn(3) == 0 {
		fmt.Fprintf(&b, "aliases: [%s]\n", rv.name())
	}
	if rv.r.Intn(2) == 0 {
		fmt.Fprintf(&b, "sources: [s%d.md, raw/sources/s%d.md]\n", rv.r.Intn(6), rv.r.Intn(6))
	}
	if rv.r.Intn(3) == 0 {
		fmt.Fprintf(&b, "related: [\"[[%s %d]]\"]\n", rv.name(), rv.r.Intn(3)) // a frontmatter link
	}
	b.WriteString("---\nbody\n")
	for i := rv.r.Intn(6); i > 0; i-- {
		switch rv.r.Intn(7) {
		case 5:
			// a bare name that a raw source, a page or a reserved top file
			// may answer to
			fmt.Fprintf(&b, "[[%s]] ", fileNames[rv.r.Intn(len(fileNames))])
		case 6:
			// an attachment by name or by path, as a wikilink or a
			// markdown link (relative to the page)
			switch rv.r.Intn(4) {
			case 0:
				fmt.Fprintf(&b, "![[raw/assets/img%d.png]] ", rv.r.Intn(3))
			case 1:
				fmt.Fprintf(&b, "![i](%simg%d.png) ", []string{"", "../", "../../raw/assets/"}[rv.r.Intn(3)], rv.r.Intn(3))
			default:
				fmt.Fprintf(&b, "![[img%d.png]] ", rv.r.Intn(3))
			}
		case 4:
			// relative: a wikilink up one folder, or a link to a raw source
			if rv.r.Intn(2) == 0 {
				fmt.Fprintf(&b, "[[../%s %d]] ", rv.name(), rv.r.Intn(3))
			} else {
				fmt.Fprintf(&b, "[[raw/sources/s%d.md|src]] ", rv.r.Intn(8))
			}
		case 0:
			fmt.Fprintf(&b, "[[%s %d]] ", rv.name(), rv.r.Intn(3))
		case 1:
			fmt.Fprintf(&b, "[[%s]] ", strings.ToLower(rv.name()))
		case 2:
			if len(rv.pages) > 0 {
				p := rv.pages[rv.r.Intn(len(rv.pages))]
				fmt.Fprintf(&b, "[[%s]] ", strings.TrimSuffix(strings.TrimPrefix(p, "wiki/"), ".md"))
			}
		default:
			fmt.Fprintf(&b, "[x](%s.md) ", rv.name())
		}
	}
	b.WriteString("\n")
	return b.String()
}

func (rv *randVault) newPath() string {
	rv.n++
	return fmt.Sprintf("%s%s %d.md", rv.dirs[rv.r.Intn(len(rv.dirs))], rv.name(), rv.n%5)
}

func (rv *randVault) add() {
	p := rv.newPath()
	for _, q := range rv.pages {
		if q == p {
			return
		}
	}
	testvault.Write(rv.t, rv.v, p, rv.content())
	rv.pages = append(rv.pages, p)
	rv.last = "add " + p
}

// fileNames are names that raw sources, attachments, pages and the
// reserved top files share in a random vault.
var fileNames = []string{"s1", "s6", "s7", "index", "overview", "log"}

// fileSpots are where random raw sources and attachments come and go.
var fileSpots = []string{"raw/sources/s6.md", "raw/sources/sub/s7.md", "raw/sources/s7.md", "raw/sources/sub/s1.md",
	"raw/assets/img0.png", "raw/assets/deep/img1.png", "wiki/img1.png", "wiki/concepts/img2.png", "raw/img0.png"}

// pageSpots are pages named like files or the reserved top files.
var pageSpots = []string{"wiki/s6.md", "wiki/concepts/s1.md", "wiki/notes/index.md", "wiki/entities/Overview.md"}

func (rv *randVault) toggle(p string, page bool) {
	if _, err := os.Stat(rv.v.Abs(p)); err == nil {
		if err := os.Remove(rv.v.Abs(p)); err != nil {
			rv.t.Fatal(err)
		}
		rv.last = "delete " + p
		return
	}
	body := "file\n"
	if page {
		body = rv.content()
	}
	testvault.Write(rv.t, rv.v, p, body)
	rv.last = "create " + p
}

func (rv *randVault) mutate() {
	switch y := rv.r.Intn(14); {
	case y == 10 || y == 11:
		rv.toggle(fileSpots[rv.r.Intn(len(fileSpots))], false)
		return
	case y == 12:
		rv.toggle(pageSpots[rv.r.Intn(len(pageSpots))], true)
		return
	case y == 13 && rv.r.Intn(4) == 0:
		// a reserved top file deleted or written again
		p := []string{"wiki/index.md", "wiki/log.md", "wiki/overview.md"}[rv.r.Intn(3)]
		rv.toggle(p, false)
		return
	}
	switch x := rv.r.Intn(10); {
	case x < 3 || len(rv.pages) < 4:
		rv.add()
	case x < 6:
		p := rv.pages[rv.r.Intn(len(rv.pages))]
		testvault.Write(rv.t, rv.v, p, rv.content())
		rv.last = "edit " + p
	case x < 8:
		i := rv.r.Intn(len(rv.pages))
		if err := os.Remove(rv.v.Abs(rv.pages[i])); err != nil {
			rv.t.Fatal(err)
		}
		rv.last = "delete " + rv.pages[i]
		rv.pages = append(rv.pages[:i], rv.pages[i+1:]...)
	default:
		i := rv.r.Intn(len(rv.pages))
		to := rv.newPath()
		for _, q := range rv.pages {
			if q == to {
				return
			}
		}
		os.MkdirAll(filepath.Dir(rv.v.Abs(to)), 0o755)
		if err := os.Rename(rv.v.Abs(rv.pages[i]), rv.v.Abs(to)); err != nil {
			rv.t.Fatal(err)
		}
		rv.last = "rename " + rv.pages[i] + " → " + to
		rv.pages[i] = to
	}
}
