package search

import (
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
)

// Ranked fields of a page (store.SearchFields of them).
const (
	FieldTitle = 0 // title, aliases, and the file name when it differs from the title
	FieldHead  = 1 // headings and tags
	FieldBody  = 2 // body text, frontmatter values of other keys, sources
)

// Filter terms: postings of the page type and of each tag, so type: and
// tag: filters are postings lookups. The 0x00 prefix keeps them apart
// from analyzed terms, which never hold a NUL.
const (
	typeTermPrefix = "\x00type:"
	tagTermPrefix  = "\x00tag:"
	langTermPrefix = "\x00lang:" // + Language.Code(): the pages stemmed in it
)

// knownKeys are frontmatter keys indexed through their own fields (or not
// at all); the string values of other keys (description, summary…) count
// as body text.
var knownKeys = map[string]bool{
	"title": true, "type": true, "aliases": true, "alias": true, "tags": true, "tag": true,
	"created": true, "updated": true, "cssclasses": true, "cssclass": true, "permalink": true,
}

// Indexer keeps the search index in step with page changes; the scanner
// calls it inside its write transactions (index.PageIndexer).
type Indexer struct {
	// Language is the vault's default language: pages that neither
	// declare one nor are detected are stemmed in it (PageLanguage).
	Language Language
}

var (
	_ index.PageIndexer  = Indexer{}
	_ index.PagePreparer = Indexer{}
)

// IndexPages adds or replaces the given pages in the index. Pages are
// analyzed in parallel; the store then merges the batch's postings into
// its blocks in key order.
func (ix Indexer) IndexPages(tx *store.Tx, pages []index.IndexedPage) error {
	if len(pages) == 0 {
		return nil
	}
	// an index built by other analyzer rules keeps its version (searches
	// go on asking for a reindex, which starts the index afresh): a few
	// pages indexed by these rules do not make the rest of it current
	if v := tx.SearchVersion(); v == "" || tx.SearchStats().Docs == 0 {
		if err := tx.SetSearchVersion(AnalyzerVersion); err != nil {
			return err
		}
	}
	b := preparedBatch(pages)
	if b == nil {
		b = analyzeBatch(pages, ix.Language)
	}
	return tx.PutSearchDocs(b)
}

// preparedDoc is a page analyzed before its transaction: doc slot of
// batch (PreparePages).
type preparedDoc struct {
	batch *store.SearchBatch
	slot  int
}

// PreparePages analyzes pages that have no doc yet (index.PagePreparer):
// their batch, to which IndexPages gives the docs.
func (ix Indexer) PreparePages(pages []index.IndexedPage) []any {
	b := analyzeBatch(pages, ix.Language)
	out := make([]any, len(pages))
	for i := range pages {
		out[i] = &preparedDoc{batch: b, slot: i}
	}
	return out
}

// testHookPrepared, when set by a test, is told each prepared batch used.
var testHookPrepared func(pages int)

// preparedBatch returns the batch PreparePages made of exactly these
// pages, with their docs, or nil (some page was not prepared, or with
// others).
func preparedBatch(pages []index.IndexedPage) *store.SearchBatch {
	var b *store.SearchBatch
	seen := make([]bool, len(pages))
	for _, p := range pages {
		pd, ok := p.Prepared.(*preparedDoc)
		if !ok || b != nil && pd.batch != b || len(pd.batch.Docs) != len(pages) || seen[pd.slot] {
			return nil
		}
		b = pd.batch
		seen[pd.slot] = true
	}
	for _, p := range pages {
		pd := p.Prepared.(*preparedDoc)
		b.Docs[pd.slot].Doc = p.Doc
	}
	if testHookPrepared != nil {
		testHookPrepared(len(pages))
	}
	return b
}

// RemovePages removes pages from the index.
func (Indexer) RemovePages(tx *store.Tx, docs []uint32) error {
	return tx.RemoveSearchDocs(docs)
}

// docWork is one worker's analysis of its share of a batch. Terms are
// counted by the worker's analyzer's term numbers; they become batch term
// indexes when the workers' results are merged.
type docWork struct {
	a      *Analyzer
	counts [][store.SearchFields]uint32 // by term number, for the current doc
	touch  []int32                      // term numbers the current doc holds
	docs   []store.SearchDoc            // SearchTF.Term and name terms are term numbers until merged
	slots  []int                        // batch position of each doc
	names  []store.SearchName
	all    []uint32 // scratch: a name's terms
	cont   []uint32 // scratch: a name's terms without stopwords
	allX   []uint32 // scratch: all and cont with each word's surface form for its stem
	contX  []uint32
	stops  []uint32 // scratch: a name's stopwords
	// secMark[id] is 1 + the position of term id among the current
	// heading's content words (0: not one of them), for analyzeSections
	secMark []int32
	nbase   int // names of the current doc, not counting exact words
}

// maxNames is how many names of a doc are kept for re-ranking (title,
// aliases and file name first, then headings in page order); with their
// exact words and stopwords they fit store.maxSearchNames.
const maxNames = 128

// Name kinds stored with a doc (store.SearchName.Kind, low 4 bits: the
// kind, and nameExact for a name's exact words; a heading's section
// support, 0..3, is in the high 4 bits).
const (
	NameTitle   = 0
	NameAlias   = 1
	NameFile    = 2
	NameHeading = 3
	// nameExact marks a name's exact words (kind | nameExact): each word
	// as written (folded) where its stem differs, stored right after the
	// name when any does, so that re-ranking can prefer a name that holds
	// the query's words as they are over one that only shares their stems.
	nameExact = 0x08
	// nameStops marks a name's stopwords (kind | nameStops), stored after
	// the name (and its exact words) when it has content words too, so
	// that re-ranking can tell a name that is the query word for word
	// (Con filtros) from one that holds only its content words (Filtros).
	nameStops = 0x04
)

// maxDocTerms bounds the distinct terms one page is indexed under (a
// real page has a few thousand; a page of a million distinct words would
// add a million terms to the index in one write): past it, words the page
// has not used yet are left out.
const maxDocTerms = 100000

func (w *docWork) add(id int32, f int) {
	if int(id) >= len(w.counts) {
		w.counts = append(w.counts, make([][store.SearchFields]uint32, int(id)+1-len(w.counts)+1024)...)
	}
	c := &w.counts[id]
	if c[0]|c[1]|c[2] == 0 {
		if len(w.touch) >= maxDocTerms {
			return
		}
		w.touch = append(w.touch, id)
	}
	c[f]++
}

// addName analyzes a name into field f and records its terms: the
// distinct content words, or every word when it has nothing else.
//
// When a word's stem differs from it, the name's exact words follow it
// as a name of kind|nameExact.
func (w *docWork) addName(text string, f int, kind uint8, lens *[store.SearchFields]uint32) {
	w.all, w.cont, w.allX, w.contX, w.stops = w.all[:0], w.cont[:0], w.allX[:0], w.contX[:0], w.stops[:0]
	exact := false
	w.a.Each(text, func(t Token) {
		if t.Surface {
			// the word just seen as written (no stopword): for the
			// exact words only
			if len(w.contX) > 0 {
				w.allX[len(w.allX)-1], w.contX[len(w.contX)-1] = uint32(t.ID), uint32(t.ID)
				exact = true
			}
			return
		}
		w.add(t.ID, f)
		if t.Kind == Whole {
			return
		}
		lens[f]++
		w.all, w.allX = append(w.all, uint32(t.ID)), append(w.allX, uint32(t.ID))
		if !t.Stop {
			w.cont, w.contX = append(w.cont, uint32(t.ID)), append(w.contX, uint32(t.ID))
		} else {
			w.stops = append(w.stops, uint32(t.ID))
		}
	})
	ts, xs := w.cont, w.contX
	if len(ts) == 0 {
		ts, xs = w.all, w.allX
	}
	if len(ts) == 0 || w.nbase == maxNames {
		return
	}
	w.nbase++
	slices.Sort(ts)
	w.names = append(w.names, store.SearchName{Kind: kind, Terms: slices.Clone(slices.Compact(ts))})
	if exact {
		slices.Sort(xs)
		w.names = append(w.names, store.SearchName{Kind: kind | nameExact, Terms: slices.Clone(slices.Compact(xs))})
	}
	if len(w.cont) > 0 && len(w.stops) > 0 {
		slices.Sort(w.stops)
		w.names = append(w.names, store.SearchName{Kind: kind | nameStops, Terms: slices.Clone(slices.Compact(w.stops))})
	}
}

// finishDoc turns the counts into the doc's term list (plus its filter
// terms, which occur in no field) and resets them.
func (w *docWork) finishDoc(doc uint32, lens [store.SearchFields]uint32, filters []string, slot int) {
	tfs := make([]store.SearchTF, 0, len(w.touch)+len(filters))
	for _, id := range w.touch {
		tfs = append(tfs, store.SearchTF{Term: uint32(id), TF: w.counts[id]})
		w.counts[id] = [store.SearchFields]uint32{}
	}
	w.touch = w.touch[:0]
	// a filter term (0x00-prefixed) is no word of any field: it can only
	// repeat an earlier filter (a tag given twice)
	n := len(tfs)
	for _, f := range filters {
		id := uint32(w.a.Intern(f))
		if !slices.ContainsFunc(tfs[n:], func(t store.SearchTF) bool { return t.Term == id }) {
			tfs = append(tfs, store.SearchTF{Term: id})
		}
	}
	w.docs = append(w.docs, store.SearchDoc{Doc: doc, Len: lens, Terms: tfs, Names: w.names})
	w.names, w.nbase = nil, 0
	w.slots = append(w.slots, slot)
}

// analyzeBatch tokenizes pages with one worker per CPU and merges the
// workers' term numbers into one batch term list.
func analyzeBatch(pages []index.IndexedPage, lang Language) *store.SearchBatch {
	workers := min(runtime.GOMAXPROCS(0), (len(pages)+15)/16)
	works := make([]*docWork, workers)
	var wg sync.WaitGroup
	for wi := range works {
		w := &docWork{a: Acquire()}
		works[wi] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := wi; i < len(pages); i += workers {
				analyzePage(w, &pages[i], i, lang)
			}
		}()
	}
	wg.Wait()
	b := &store.SearchBatch{Docs: make([]store.SearchDoc, len(pages))}
	global := map[string]uint32{}
	for _, w := range works {
		remap := make([]int32, w.a.NumTerms())
		for i := range remap {
			remap[i] = -1
		}
		idx := func(id uint32) uint32 {
			if r := remap[id]; r >= 0 {
				return uint32(r)
			}
			t := w.a.Term(int32(id))
			g, ok := global[t]
			if !ok {
				g = uint32(len(b.Terms))
				global[t] = g
				b.Terms = append(b.Terms, t)
			}
			remap[id] = int32(g)
			return g
		}
		for j, d := range w.docs {
			for k := range d.Terms {
				d.Terms[k].Term = idx(d.Terms[k].Term)
			}
			for _, n := range d.Names {
				for k := range n.Terms {
					n.Terms[k] = idx(n.Terms[k])
				}
			}
			b.Docs[w.slots[j]] = d
		}
		Release(w.a)
	}
	return b
}

// analyzePage tokenizes one page's fields in the page's language (def
// when it has none).
func analyzePage(w *docWork, p *index.IndexedPage, slot int, def Language) {
	var lens [store.SearchFields]uint32
	field := func(f int) func(Token) {
		return func(t Token) {
			if t.Surface {
				return // exact words are kept in names only
			}
			w.add(t.ID, f)
			if t.Kind != Whole {
				lens[f]++
			}
		}
	}
	head, body := field(FieldHead), field(FieldBody)
	rec, parsed := p.Rec, p.Parsed
	a := w.a
	lang := def
	if parsed != nil {
		lang = PageLanguage(parsed.Frontmatter, rec.Title, parsed.SearchBody(), def)
	}
	a.SetLanguage(lang)
	defer a.SetLanguage(English)
	w.addName(rec.Title, FieldTitle, NameTitle, &lens)
	for _, al := range rec.Aliases {
		w.addName(al, FieldTitle, NameAlias, &lens)
	}
	if stem := store.Stem(rec.Path); store.Fold(stem) != store.Fold(rec.Title) {
		w.addName(stem, FieldTitle, NameFile, &lens)
	}
	for _, t := range rec.Tags {
		a.Each(t, head)
	}
	if parsed != nil {
		sup := analyzeSections(w, parsed.SearchBody(), parsed.Headings, &lens)
		for i, h := range parsed.Headings {
			w.addName(h.Text, FieldHead, NameHeading|sup[i]<<4, &lens)
		}
		eachExtraValue(parsed.Frontmatter, func(s string) { a.Each(s, body) })
	}
	for _, s := range rec.Sources {
		a.Each(s, body)
	}
	filters := make([]string, 0, 2+len(rec.Tags))
	filters = append(filters, typeTermPrefix+rec.Type, langTermPrefix+lang.Code())
	for _, t := range rec.Tags {
		filters = append(filters, tagTermPrefix+t)
	}
	w.finishDoc(p.Doc, lens, filters, slot)
}

// eachExtraValue calls fn with the string values of frontmatter keys that
// have no field of their own.
func eachExtraValue(fm *markdown.Frontmatter, fn func(string)) {
	if fm == nil {
		return
	}
	for _, k := range fm.Keys() {
		if knownKeys[k] || k == "sources" {
			continue
		}
		for _, v := range fm.List(k, false) {
			if v != "true" && v != "false" {
				fn(v)
			}
		}
	}
}

// analyzeSections tokenizes a page body (into the body field) section by
// section: a section is a heading's line and the text under it, up to the
// next heading. It returns each heading's support, 0..3: how much of the
// heading's words the text under it repeats (3: all of them), which
// re-ranking uses to prefer a section about what its heading names.
func analyzeSections(w *docWork, text string, hs []markdown.Heading, lens *[store.SearchFields]uint32) []uint8 {
	a := w.a
	sup := make([]uint8, len(hs))
	var named []int32 // the current heading's content words
	var found []bool  // which of them its text repeats
	cur := -1
	unmark := func() {
		for _, id := range named {
			w.secMark[id] = 0
		}
	}
	finish := func() {
		if cur >= 0 && len(named) > 0 {
			n := 0
			for _, f := range found {
				if f {
					n++
				}
			}
			sup[cur] = uint8((3*n + len(named)/2) / len(named))
		}
	}
	next := 0
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off
		}
		line := text[off:end]
		heading := false
		if next < len(hs) && strings.HasPrefix(strings.TrimLeft(line, " "), "#") && strings.Contains(line, hs[next].Text) {
			finish()
			unmark()
			heading, cur = true, next
			named, found = named[:0], found[:0]
			a.Each(hs[next].Text, func(t Token) {
				if t.Kind != Whole && !t.Stop && !slices.Contains(named, t.ID) {
					if int(t.ID) >= len(w.secMark) {
						w.secMark = append(w.secMark, make([]int32, int(t.ID)+1-len(w.secMark)+1024)...)
					}
					named = append(named, t.ID)
					found = append(found, false)
					w.secMark[t.ID] = int32(len(named))
				}
			})
			next++
		}
		a.Each(line, func(t Token) {
			if t.Surface {
				return // exact words are kept in names only
			}
			w.add(t.ID, FieldBody)
			if t.Kind != Whole {
				lens[FieldBody]++
			}
			if heading {
				return
			}
			if int(t.ID) < len(w.secMark) {
				if k := w.secMark[t.ID]; k > 0 {
					found[k-1] = true
				}
			}
		})
		off = end + 1
	}
	finish()
	unmark()
	return sup
}
