package search_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// knownItem is an evaluation query with the one page it should find.
type knownItem struct {
	query, target string // target: vault path
}

// evalCorpus is an indexed vault and its known-item query sets.
type evalCorpus struct {
	store     *store.Store
	pages     []*markdown.Page
	paths     []string
	aliases   []knownItem // query = an alias, target = its page
	headings  []knownItem // query = a heading found in exactly one page
	questions []knownItem // hand-written questions (testdata/search/questions.tsv)
	// typed: the headings as a person would type them — lower case, no
	// articles, words in other forms the vault uses (by Hunspell, not by
	// synapse's stemmer): testdata/search/typed.tsv, made by
	// tools/typedheadings
	typed []knownItem
}

// loadQuestions reads the questions of one evaluation set.
func loadQuestions(t testing.TB, set string) []knownItem { return loadItems(t, set, "questions.tsv") }

// loadItems reads the queries of one evaluation set from a file of
// testdata/search (SET\tQUERY\tTARGET lines, TARGET under wiki/).
func loadItems(t testing.TB, set, file string) []knownItem {
	data, err := os.ReadFile(filepath.Join(testvault.RepoRoot(), "testdata", "search", file))
	if err != nil {
		t.Fatal(err)
	}
	var out []knownItem
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, "\t")
		if len(f) == 3 && f[0] == set {
			out = append(out, knownItem{f[1], "wiki/" + f[2]})
		}
	}
	return out
}

// openIndexed copies dir into a fresh vault's wiki/ and indexes it with
// the search indexer.
func openIndexed(t testing.TB, dir string) (*vault.Vault, *store.Store) {
	t.Helper()
	v := testvault.New(t)
	if err := testvault.CopyTree(dir, v.Abs(vault.WikiDir)); err != nil {
		t.Fatal(err)
	}
	return v, indexVault(t, v)
}

func indexVault(t testing.TB, v *vault.Vault) *store.Store {
	t.Helper()
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ix := &index.Indexer{Vault: v, Store: s, Pages: search.Indexer{}}
	if _, err := ix.Scan(context.Background(), index.ScanOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	return s
}

func loadEval(t testing.TB, dir string) *evalCorpus {
	t.Helper()
	v, s := openIndexed(t, dir)
	c := &evalCorpus{store: s}
	headingPages := map[string]map[string]bool{} // folded heading → paths
	headingText := map[string]string{}
	aliasPages := map[string]map[string]bool{}
	aliasText := map[string]string{}
	err := filepath.WalkDir(v.Abs(vault.WikiDir), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		rel, _ := v.Rel(p)
		if vault.IsReserved(rel) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		pg := markdown.Parse(rel, data)
		c.pages = append(c.pages, pg)
		c.paths = append(c.paths, rel)
		for _, h := range pg.Headings {
			k := store.Fold(strings.TrimSpace(h.Text))
			if k == "" || !hasLetter(k) {
				continue
			}
			if headingPages[k] == nil {
				headingPages[k] = map[string]bool{}
			}
			headingPages[k][rel] = true
			headingText[k] = strings.TrimSpace(h.Text)
		}
		for _, a := range pg.Aliases {
			k := store.Fold(a)
			if aliasPages[k] == nil {
				aliasPages[k] = map[string]bool{}
			}
			aliasPages[k][rel] = true
			aliasText[k] = a
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, ps := range headingPages {
		if len(ps) == 1 {
			for p := range ps {
				c.headings = append(c.headings, knownItem{headingText[k], p})
			}
		}
	}
	for k, ps := range aliasPages {
		if len(ps) == 1 {
			for p := range ps {
				c.aliases = append(c.aliases, knownItem{aliasText[k], p})
			}
		}
	}
	sort.Slice(c.headings, func(i, j int) bool { return c.headings[i].query < c.headings[j].query })
	sort.Slice(c.aliases, func(i, j int) bool { return c.aliases[i].query < c.aliases[j].query })
	return c
}

// rankOf returns target's 1-based position in got (11 when absent).
func rankOf(got []string, target string) int {
	if i := slices.Index(got, target); i >= 0 {
		return i + 1
	}
	return 11
}

// nonEnglish reports whether the corpus has a page indexed in a language
// other than English.
func (c *evalCorpus) nonEnglish() bool {
	n := 0
	c.store.View(func(tx *store.Tx) error {
		st, _ := tx.LookupSearchTerm("\x00lang:en")
		n = int(st.DF)
		return nil
	})
	return n < len(c.pages)
}

func hasLetter(s string) bool {
	return strings.IndexFunc(s, unicode.IsLetter) >= 0
}

// metrics are known-item scores over a query set.
type metrics struct {
	n                 int
	top1, recall5, mr float64
}

func (m metrics) String() string {
	return fmt.Sprintf("n=%-4d top-1 %.3f  recall@5 %.3f  MRR@10 %.3f", m.n, m.top1, m.recall5, m.mr)
}

// score runs every query through rank (which returns paths, best first).
func score(items []knownItem, rank func(q string) []string, miss func(it knownItem, got []string)) metrics {
	m := metrics{n: len(items)}
	for _, it := range items {
		got := rank(it.query)
		pos := -1
		for i, p := range got {
			if p == it.target {
				pos = i
				break
			}
		}
		if pos == 0 {
			m.top1++
		}
		if pos >= 0 && pos < 5 {
			m.recall5++
		}
		if pos >= 0 && pos < 10 {
			m.mr += 1 / float64(pos+1)
		}
		if pos != 0 && miss != nil {
			miss(it, got)
		}
	}
	if m.n > 0 {
		m.top1 /= float64(m.n)
		m.recall5 /= float64(m.n)
		m.mr /= float64(m.n)
	}
	return m
}

func synapseRanker(t testing.TB, s *store.Store, p search.Params) func(string) []string {
	return func(q string) []string {
		hits, err := search.SearchWith(s, q, search.Options{K: 10}, p)
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		out := make([]string, len(hits))
		for i, h := range hits {
			out[i] = h.Path
		}
		return out
	}
}

// baseline is an ordinary BM25 (k1 1.2, b 0.75) over one field holding
// the title and the body, with a plain tokenizer: lowercase runs of
// letters and digits, no stemming, no stopwords, no bigrams.
type baseline struct {
	docs  []map[string]int
	lens  []int
	paths []string
	df    map[string]int
	avg   float64
}

func plainTokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func newBaseline(c *evalCorpus) *baseline {
	b := &baseline{df: map[string]int{}}
	total := 0
	for i, pg := range c.pages {
		toks := plainTokens(pg.Title + "\n" + pg.Body)
		tf := map[string]int{}
		for _, t := range toks {
			tf[t]++
		}
		b.docs = append(b.docs, tf)
		b.lens = append(b.lens, len(toks))
		b.paths = append(b.paths, c.paths[i])
		total += len(toks)
		seen := map[string]bool{}
		for _, t := range toks {
			if !seen[t] {
				seen[t] = true
				b.df[t]++
			}
		}
	}
	b.avg = float64(total) / float64(len(b.docs))
	return b
}

func (b *baseline) rank(q string) []string {
	qt := plainTokens(q)
	N := float64(len(b.docs))
	type sd struct {
		i int
		s float64
	}
	var res []sd
	for i, tf := range b.docs {
		s := 0.0
		for _, t := range qt {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(b.df[t])
			idf := math.Log(1 + (N-df+0.5)/(df+0.5))
			s += idf * f * 2.2 / (f + 1.2*(0.25+0.75*float64(b.lens[i])/b.avg))
		}
		if s > 0 {
			res = append(res, sd{i, s})
		}
	}
	sort.SliceStable(res, func(i, j int) bool { return res[i].s > res[j].s })
	var out []string
	for _, r := range res[:min(10, len(res))] {
		out = append(out, b.paths[r.i])
	}
	return out
}

// evalSet names a corpus and the quality it must reach.
type evalSet struct {
	name, dir       string
	minAliasTop1    float64
	minHeadingMRR   float64
	minAliasQueries int
	// minQuestionRecall is the recall@5 the hand-written questions must
	// reach (0.75 when zero).
	minQuestionRecall float64
}

func evalSets() []evalSet {
	root := testvault.RepoRoot()
	return []evalSet{
		{"obsidian-help-en", testvault.CorpusDir(), 0.95, 0.85, 50, 0},
		{"de", filepath.Join(root, "testdata", "search", "de"), 0.95, 0.85, 10, 0},
		{"zh", filepath.Join(root, "testdata", "search", "zh"), 0.95, 0.85, 10, 0},
		{"ja", filepath.Join(root, "testdata", "search", "ja"), 0.95, 0.85, 10, 0},
		// Korean: the same twenty pages as zh and ja
		{"ko", filepath.Join(root, "testdata", "search", "ko"), 0.95, 0.85, 10, 0},
		// the Obsidian Help vault in the translators' Spanish, Italian
		// and Russian
		{"obsidian-help-es", filepath.Join(root, "testdata", "obsidian-help-es"), 0.85, 0.70, 30, 0.5},
		{"obsidian-help-it", filepath.Join(root, "testdata", "obsidian-help-it"), 0.85, 0.70, 50, 0.5},
		{"obsidian-help-ru", filepath.Join(root, "testdata", "obsidian-help-ru"), 0.85, 0.70, 50, 0.3},
		// command reference pages whose parameters are `### -Param`
		// headings (PowerShell help, GNU option lists): no aliases
		{"params", filepath.Join(root, "testdata", "search", "params"), 0, 0.85, 0, 0},
	}
}

// TestEval runs the known-item evaluation (docs/search.md) and prints
// top-1, recall@5 and MRR@10 for synapse and for the plain BM25 baseline:
//
//	go test ./search -run Eval -v
//
// Set SEARCH_EVAL_MISSES=1 to list the queries whose page was not first.
func TestEval(t *testing.T) {
	for _, set := range evalSets() {
		t.Run(set.name, func(t *testing.T) {
			if _, err := os.Stat(set.dir); err != nil {
				t.Fatalf("corpus %s: %v", set.dir, err)
			}
			c := loadEval(t, set.dir)
			if len(c.aliases) < set.minAliasQueries {
				t.Fatalf("only %d alias queries in %s", len(c.aliases), set.dir)
			}
			var miss func(knownItem, []string)
			if os.Getenv("SEARCH_EVAL_MISSES") != "" {
				miss = func(it knownItem, got []string) {
					first := ""
					if len(got) > 0 {
						first = got[0]
					}
					t.Logf("miss %q → want %s, got %s", it.query, it.target, first)
				}
			}
			ours := synapseRanker(t, c.store, search.DefaultParams)
			base := newBaseline(c)
			c.questions = loadQuestions(t, set.name)
			for _, q := range c.questions {
				if _, err := os.Stat(filepath.Join(set.dir, strings.TrimPrefix(q.target, "wiki/"))); err != nil {
					t.Fatalf("question %q: target %v", q.query, err)
				}
			}
			sa, sh, sq := score(c.aliases, ours, miss), score(c.headings, ours, miss), score(c.questions, ours, miss)
			ba, bh, bq := score(c.aliases, base.rank, nil), score(c.headings, base.rank, nil), score(c.questions, base.rank, nil)
			t.Logf("%-9s %-8s %s", "aliases", "synapse", sa)
			t.Logf("%-9s %-8s %s", "aliases", "bm25", ba)
			t.Logf("%-9s %-8s %s", "headings", "synapse", sh)
			t.Logf("%-9s %-8s %s", "headings", "bm25", bh)
			t.Logf("%-9s %-8s %s", "questions", "synapse", sq)
			t.Logf("%-9s %-8s %s", "questions", "bm25", bq)
			c.typed = loadItems(t, set.name, "typed.tsv")
			if len(c.typed) > 0 {
				st, bt := score(c.typed, ours, miss), score(c.typed, base.rank, nil)
				t.Logf("%-9s %-8s %s", "typed", "synapse", st)
				t.Logf("%-9s %-8s %s", "typed", "bm25", bt)
				if st.mr < bt.mr {
					t.Errorf("typed headings: synapse MRR@10 %.3f below the BM25 baseline's %.3f", st.mr, bt.mr)
				}
			}
			if c.nonEnglish() {
				// the same vault with every page analyzed as English: what
				// stemming in the page's language gains. It must
				// not lose a heading or an alias anywhere.
				restore := search.SetEnglishOnly(true)
				ce := loadEval(t, set.dir)
				restore()
				eng := synapseRanker(t, ce.store, search.DefaultParams)
				ea, eh, eq := score(c.aliases, eng, nil), score(c.headings, eng, nil), score(c.questions, eng, nil)
				t.Logf("%-9s %-8s %s", "aliases", "english", ea)
				t.Logf("%-9s %-8s %s", "headings", "english", eh)
				t.Logf("%-9s %-8s %s", "questions", "english", eq)
				if len(c.typed) > 0 {
					t.Logf("%-9s %-8s %s", "typed", "english", score(c.typed, eng, nil))
				}
				if miss != nil {
					for kind, items := range map[string][]knownItem{"alias": c.aliases, "heading": c.headings, "question": c.questions, "typed": c.typed} {
						for _, it := range items {
							if a, b := rankOf(ours(it.query), it.target), rankOf(eng(it.query), it.target); a > b {
								t.Logf("stemming loses %s %q: %s at %d, english only at %d", kind, it.query, it.target, a, b)
							}
						}
					}
				}
				if sh.mr < eh.mr || sa.mr < ea.mr {
					t.Errorf("stemming loses: heading MRR@10 %.3f (english only %.3f), alias MRR@10 %.3f (%.3f)", sh.mr, eh.mr, sa.mr, ea.mr)
				}
			}
			if dash := dashQueries(c.headings); len(dash) > 0 {
				sd := score(dash, ours, miss)
				t.Logf("%-9s %-8s %s", "-headings", "synapse", sd)
				t.Logf("%-9s %-8s %s", "-headings", "bm25", score(dash, base.rank, nil))
				// every -Param heading finds its page in the top 5
				if sd.recall5 < 1 {
					score(dash, ours, func(it knownItem, got []string) {
						if !slices.Contains(got[:min(5, len(got))], it.target) {
							t.Errorf("dash heading %q: %s not in the top 5 (%v)", it.query, it.target, got)
						}
					})
				}
			}
			if zero := zeroScoreQueries(t, c); len(zero) > 0 {
				t.Errorf("%d queries return a score-0 hit, e.g. %q", len(zero), zero[0])
			}
			minRecall := set.minQuestionRecall
			if minRecall == 0 {
				minRecall = 0.75
			}
			if sq.recall5 < minRecall {
				t.Errorf("question recall@5 %.3f < %.2f", sq.recall5, minRecall)
			}
			if sa.n > 0 && sa.top1 < set.minAliasTop1 {
				t.Errorf("alias top-1 %.3f < %.2f", sa.top1, set.minAliasTop1)
			}
			if sh.mr < set.minHeadingMRR {
				t.Errorf("heading MRR@10 %.3f < %.2f", sh.mr, set.minHeadingMRR)
			}
			if sa.top1 < ba.top1 || sh.mr < bh.mr {
				t.Errorf("synapse does not beat the BM25 baseline")
			}
		})
	}
}

// dashQueries returns the items whose query starts with a dash (a
// command-line parameter such as -ApprovalStatus or --dry-run).
func dashQueries(items []knownItem) []knownItem {
	var out []knownItem
	for _, it := range items {
		if strings.HasPrefix(it.query, "-") {
			out = append(out, it)
		}
	}
	return out
}

// zeroScoreQueries returns the evaluation queries (aliases, headings,
// questions) for which search returns a hit with score 0: a page that
// matches nothing of the query.
func zeroScoreQueries(t *testing.T, c *evalCorpus) []string {
	var out []string
	for _, set := range [][]knownItem{c.aliases, c.headings, c.questions} {
		for _, it := range set {
			hits, err := search.Search(c.store, it.query, search.Options{K: 10})
			if err != nil {
				t.Fatalf("search %q: %v", it.query, err)
			}
			for _, h := range hits {
				if h.Score <= 0 {
					out = append(out, it.query)
					break
				}
			}
		}
	}
	return out
}

// tuneCorpus is an evaluation set loaded for a tuning grid.
type tuneCorpus struct {
	name string
	c    *evalCorpus
}

// tuneCorpora loads the named evaluation sets, typed headings included,
// in evalSets' order, for the tuning grids below.
func tuneCorpora(t *testing.T, names ...string) []tuneCorpus {
	var cs []tuneCorpus
	for _, set := range evalSets() {
		if slices.Contains(names, set.name) {
			c := loadEval(t, set.dir)
			c.typed = loadItems(t, set.name, "typed.tsv")
			cs = append(cs, tuneCorpus{set.name, c})
		}
	}
	return cs
}

// half is the tuning half of items: those at even positions (odd 0,
// "train") or at odd ones (odd 1, "held").
func half(items []knownItem, odd int) []knownItem {
	var out []knownItem
	for i, it := range items {
		if i%2 == odd {
			out = append(out, it)
		}
	}
	return out
}

// TestTuneExactName prints the heading and typed-heading MRR@10 of the
// es, it, ru and de sets for a grid of Params.StemName and
// Params.ExactName, on two halves of each query set (even and odd
// positions in query order): the constants are chosen on the first half
// ("train"), the second ("held") shows what they do on queries they were
// not chosen on. Run with
//
//	SEARCH_EVAL_TUNE=1 go test ./search -run TuneExactName -v
func TestTuneExactName(t *testing.T) {
	if os.Getenv("SEARCH_EVAL_TUNE") == "" {
		t.Skip("set SEARCH_EVAL_TUNE=1 to run the grid")
	}
	cs := tuneCorpora(t, "obsidian-help-es", "obsidian-help-it", "obsidian-help-ru", "de")
	for _, stem := range []float64{0.5, 0.85, 1} {
		for _, exact := range []float64{0.8, 1, 1.25, 1.5, 2, 3} {
			p := search.DefaultParams
			p.StemName, p.ExactName = stem, exact
			var train, held float64
			line := ""
			for _, x := range cs {
				r := synapseRanker(t, x.c.store, p)
				h0, h1 := score(half(x.c.headings, 0), r, nil).mr, score(half(x.c.headings, 1), r, nil).mr
				y0, y1 := score(half(x.c.typed, 0), r, nil).mr, score(half(x.c.typed, 1), r, nil).mr
				train += (h0 + y0) / float64(2*len(cs))
				held += (h1 + y1) / float64(2*len(cs))
				line += fmt.Sprintf(" | %s aliases %.3f headings %.3f/%.3f typed %.3f/%.3f",
					strings.TrimPrefix(x.name, "obsidian-help-"), score(x.c.aliases, r, nil).mr, h0, h1, y0, y1)
			}
			t.Logf("StemName %.2f ExactName %.2f: train %.4f held %.4f%s", stem, exact, train, held, line)
		}
	}
}

// TestTuneWordForWord prints heading (and typed-heading) MRR@10 of the
// en, es, it, ru and de sets for a grid of Params.WordForWord on the two
// halves of each query set, as TestTuneExactName does: the value is
// chosen on the first half ("train"); the second ("held") shows what it
// does on queries it was not chosen on. Run with
//
//	SEARCH_EVAL_TUNE=1 go test ./search -run TuneWordForWord -v
func TestTuneWordForWord(t *testing.T) {
	if os.Getenv("SEARCH_EVAL_TUNE") == "" {
		t.Skip("set SEARCH_EVAL_TUNE=1 to run the grid")
	}
	cs := tuneCorpora(t, "obsidian-help-en", "obsidian-help-es", "obsidian-help-it", "obsidian-help-ru", "de")
	for _, wfw := range []float64{1, 1.25, 1.5, 2, 2.5, 3, 4} {
		p := search.DefaultParams
		p.WordForWord = wfw
		var train, held float64
		line := ""
		for _, x := range cs {
			r := synapseRanker(t, x.c.store, p)
			h0, h1 := score(half(x.c.headings, 0), r, nil).mr, score(half(x.c.headings, 1), r, nil).mr
			sets := 1.0
			if len(x.c.typed) > 0 {
				y0, y1 := score(half(x.c.typed, 0), r, nil).mr, score(half(x.c.typed, 1), r, nil).mr
				h0, h1, sets = h0+y0, h1+y1, 2
				line += fmt.Sprintf(" | %s aliases %.3f headings %.3f/%.3f typed %.3f/%.3f", strings.TrimPrefix(x.name, "obsidian-help-"),
					score(x.c.aliases, r, nil).mr, score(half(x.c.headings, 0), r, nil).mr, score(half(x.c.headings, 1), r, nil).mr, y0, y1)
			} else {
				line += fmt.Sprintf(" | %s aliases %.3f headings %.3f/%.3f", strings.TrimPrefix(x.name, "obsidian-help-"), score(x.c.aliases, r, nil).mr, h0, h1)
			}
			train += h0 / sets / float64(len(cs))
			held += h1 / sets / float64(len(cs))
		}
		t.Logf("WordForWord %.2f: train %.4f held %.4f%s", wfw, train, held, line)
	}
}
