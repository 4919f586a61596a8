// Command typedheadings writes testdata/search/typed.tsv: the section
// headings of the eval sets' vaults as a person would type them — in lower
// case, without articles, and each word that can be in another form the
// vault itself uses (another inflection of the same lemma, by the
// language's Hunspell dictionary, not by synapse's stemmer) in that form.
//
//	apt-get install hunspell hunspell-es hunspell-it hunspell-ru hunspell-de-de
//	go run ./tools/typedheadings > testdata/search/typed.tsv
//
// The headings are those of TestEval's heading sets (found in exactly one
// page, by folded text); a heading none of whose words has another form
// in the vault is left out; words of fewer than four letters are kept as
// they are. Of a word's other forms the one the vault
// uses most is taken (ties: the first in byte order). Lines are
// SET\tQUERY\tTARGET with TARGET relative to the vault, as in
// questions.tsv.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
)

// minLetters is the length below which a word is kept as it is (short
// function words: di, de, на).
const minLetters = 4

// corpus is one eval set: its vault, its Hunspell dictionary and the
// language's articles.
type corpus struct {
	set, dir, dict string
	articles       string
}

func main() {
	root := testvault.RepoRoot()
	corpora := []corpus{
		{"de", filepath.Join(root, "testdata", "search", "de"), "de_DE", "der die das den dem des ein eine einen einem einer eines"},
		{"obsidian-help-es", filepath.Join(root, "testdata", "obsidian-help-es"), "es_ES", "el la los las lo un una unos unas"},
		{"obsidian-help-it", filepath.Join(root, "testdata", "obsidian-help-it"), "it_IT", "il lo la i gli le l un uno una un'"},
		{"obsidian-help-ru", filepath.Join(root, "testdata", "obsidian-help-ru"), "ru_RU", ""},
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for _, c := range corpora {
		items, err := typed(c)
		if err != nil {
			fmt.Fprintf(os.Stderr, "typedheadings: %s: %v\n", c.set, err)
			os.Exit(1)
		}
		for _, it := range items {
			fmt.Fprintf(w, "%s\t%s\t%s\n", c.set, it[0], it[1])
		}
		fmt.Fprintf(os.Stderr, "%s: %d typed headings\n", c.set, len(items))
	}
}

// words returns the letter runs of s (lower case) with their offsets.
func words(s string) [][2]int {
	var out [][2]int
	start := -1
	for i, r := range s {
		letter := unicode.IsLetter(r) || r == '\''
		switch {
		case letter && start < 0:
			start = i
		case !letter && start >= 0:
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(s)})
	}
	return out
}

func typed(c corpus) ([][2]string, error) {
	headingPages := map[string]map[string]bool{}
	headingText := map[string]string{}
	freq := map[string]int{}
	err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(c.dir, p)
		rel = filepath.ToSlash(rel)
		pg := markdown.Parse("wiki/"+rel, data)
		text := strings.ToLower(pg.Title + "\n" + pg.Body)
		for _, wd := range words(text) {
			freq[text[wd[0]:wd[1]]]++
		}
		for _, h := range pg.Headings {
			k := store.Fold(strings.TrimSpace(h.Text))
			if k == "" || strings.IndexFunc(k, unicode.IsLetter) < 0 {
				continue
			}
			if headingPages[k] == nil {
				headingPages[k] = map[string]bool{}
			}
			headingPages[k][rel] = true
			headingText[k] = strings.TrimSpace(h.Text)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	stems, err := hunspellStems(c.dict, freq)
	if err != nil {
		return nil, err
	}
	// the vault's forms of each stem, most used first
	forms := map[string][]string{}
	for wd, ss := range stems {
		for _, s := range ss {
			forms[s] = append(forms[s], wd)
		}
	}
	for s, fs := range forms {
		sort.Slice(fs, func(i, j int) bool {
			if freq[fs[i]] != freq[fs[j]] {
				return freq[fs[i]] > freq[fs[j]]
			}
			return fs[i] < fs[j]
		})
		forms[s] = fs
	}
	other := func(wd string) string {
		var best string
		if len([]rune(wd)) < minLetters {
			return ""
		}
		for _, s := range stems[wd] {
			for _, f := range forms[s] {
				if store.Fold(f) == store.Fold(wd) || len([]rune(f)) < minLetters {
					continue
				}
				if best == "" || freq[f] > freq[best] || freq[f] == freq[best] && f < best {
					best = f
				}
				break
			}
		}
		return best
	}
	articles := strings.Fields(c.articles)
	var out [][2]string
	for k, ps := range headingPages {
		if len(ps) != 1 {
			continue
		}
		h := strings.ToLower(headingText[k])
		var b strings.Builder
		changed := false
		last := 0
		for _, wd := range words(h) {
			word := h[wd[0]:wd[1]]
			b.WriteString(h[last:wd[0]])
			last = wd[1]
			switch {
			case slices.Contains(articles, word):
				// an article goes, with the space after it
				for last < len(h) && h[last] == ' ' {
					last++
				}
			case other(word) != "":
				b.WriteString(other(word))
				changed = true
			default:
				b.WriteString(word)
			}
		}
		b.WriteString(h[last:])
		q := strings.Join(strings.Fields(b.String()), " ")
		if !changed || q == "" {
			continue
		}
		for p := range ps {
			out = append(out, [2]string{q, p})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] || out[i][0] == out[j][0] && out[i][1] < out[j][1] })
	return out, nil
}

// hunspellStems runs `hunspell -d dict -s` over the words and returns each
// word's stems (lower case); words Hunspell does not know have none.
func hunspellStems(dict string, freq map[string]int) (map[string][]string, error) {
	var in bytes.Buffer
	list := make([]string, 0, len(freq))
	for wd := range freq {
		list = append(list, wd)
	}
	sort.Strings(list)
	for _, wd := range list {
		in.WriteString(wd + "\n")
	}
	cmd := exec.Command("hunspell", "-d", dict, "-s", "-i", "utf-8")
	cmd.Stdin = &in
	cmd.Stderr = os.Stderr
	outb, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("hunspell -d %s: %w", dict, err)
	}
	stems := map[string][]string{}
	for _, line := range strings.Split(string(outb), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		wd, s := f[0], strings.ToLower(f[1])
		if _, ok := freq[wd]; ok && !slices.Contains(stems[wd], s) {
			stems[wd] = append(stems[wd], s)
		}
	}
	return stems, nil
}
