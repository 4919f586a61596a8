package search_test

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/vault"
)

// TestEvalCommands measures search on a command reference: a vault made
// from tldr-pages by tools/tldrvault (thousands of short pages of
// command names, flags and terse English, where a page here and there is
// detected as another language). Three sets:
//
//	words   testdata/search/command-words.txt: the first hit must contain
//	        every word of the query (at the start of a word, any case);
//	        at least 63 of the 64 must
//	names   every page's title (a command name) as the query: top-1, where
//	        any page of that title counts
//	summary every page's one-line summary (its "> " line) as the query:
//	        MRR@10 of its page
//
// The vault is not part of the repository; build it and point the test at
// it:
//
//	go run ./tools/tldrvault -src TLDR_CHECKOUT -out /tmp/tldr-vault
//	SEARCH_TLDR_VAULT=/tmp/tldr-vault go test ./search -run EvalCommands -v
//
// SEARCH_EVAL_MISSES=1 lists the misses.
func TestEvalCommands(t *testing.T) {
	dir := os.Getenv("SEARCH_TLDR_VAULT")
	if dir == "" {
		t.Skip("set SEARCH_TLDR_VAULT to a vault made by tools/tldrvault")
	}
	_, s := openIndexed(t, filepath.Join(dir, vault.WikiDir))
	wiki := filepath.Join(dir, vault.WikiDir)
	read := func(p string) string {
		data, err := os.ReadFile(filepath.Join(wiki, strings.TrimPrefix(p, "wiki/")))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	logMiss := os.Getenv("SEARCH_EVAL_MISSES") != ""
	search1 := func(q string, k int) []search.Hit {
		hits, err := search.Search(s, q, search.Options{K: k, ReadFile: func(p string) ([]byte, error) {
			return os.ReadFile(filepath.Join(dir, p))
		}})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		return hits
	}

	words := commandWords(t)
	found := 0
	for _, q := range words {
		hits := search1(q, 1)
		if len(hits) > 0 && holdsWords(read(hits[0].Path), strings.Fields(q)) {
			found++
			continue
		}
		if logMiss {
			first := "nothing"
			if len(hits) > 0 {
				first = hits[0].Path
			}
			t.Logf("miss %q → %s", q, first)
		}
	}
	t.Logf("%-8s n=%-4d first hit holds the words: %d (%.3f)", "words", len(words), found, float64(found)/float64(len(words)))

	// titles and summaries of every page
	byTitle := map[string][]string{}
	var summaries []knownItem
	err := filepath.WalkDir(wiki, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if vault.IsReserved(rel) {
			return nil
		}
		pg := markdown.Parse(rel, data)
		byTitle[pg.Title] = append(byTitle[pg.Title], rel)
		if sum := summaryLine(pg.Body); sum != "" {
			summaries = append(summaries, knownItem{sum, rel})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	titles := make([]string, 0, len(byTitle))
	for ti := range byTitle {
		titles = append(titles, ti)
	}
	sort.Strings(titles)
	top1 := 0
	for _, ti := range titles {
		hits := search1(ti, 1)
		if len(hits) > 0 && contains(byTitle[ti], hits[0].Path) {
			top1++
		} else if logMiss {
			first := "nothing"
			if len(hits) > 0 {
				first = hits[0].Path
			}
			t.Logf("name miss %q → %s", ti, first)
		}
	}
	t.Logf("%-8s n=%-4d top-1 %.3f", "names", len(titles), float64(top1)/float64(len(titles)))
	sort.Slice(summaries, func(i, j int) bool { return summaries[i].target < summaries[j].target })
	rank := func(q string) []string {
		var out []string
		for _, h := range search1(q, 10) {
			out = append(out, h.Path)
		}
		return out
	}
	t.Logf("%-8s %s", "summary", score(summaries, rank, nil))
	if found < len(words)-1 {
		t.Errorf("the first hit holds the query's words for %d of %d common words; want at least %d", found, len(words), len(words)-1)
	}
}

// commandWords reads testdata/search/command-words.txt.
func commandWords(t *testing.T) []string {
	f, err := os.Open(filepath.Join(testvault.RepoRoot(), "testdata", "search", "command-words.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// summaryLine returns a tldr page's summary: its first "> " line.
func summaryLine(body string) string {
	for _, l := range strings.Split(body, "\n") {
		if s, ok := strings.CutPrefix(l, "> "); ok {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// holdsWords reports whether text holds every word at the start of a word
// (run in "gh run" or "running", not in "ru" or "prune"), in any case.
func holdsWords(text string, words []string) bool {
	low := strings.ToLower(text)
	for _, w := range words {
		w = strings.ToLower(w)
		ok := false
		for i := 0; ; {
			j := strings.Index(low[i:], w)
			if j < 0 {
				break
			}
			j += i
			if r, _ := utf8.DecodeLastRuneInString(low[:j]); j == 0 || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				ok = true
				break
			}
			i = j + 1
		}
		if !ok {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
