package ops

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
)

// get_context gives an agent what it needs about a page, or about a
// question, in one answer of a size it chooses: the page itself (or, for
// a question, the passages of the best hits that match it best), then the
// pages around it — each named, summed up (its
// frontmatter summary or description, else its first paragraph) and tied
// to it by the lines that link them — most relevant first (graph weight),
// cut to fit, saying what was left out. The budget bounds the whole JSON
// answer. The same vault and input give the same answer.

// ContextIn is the input of get_context.
type ContextIn struct {
	Title  string `json:"title,omitempty" arg:"0" words:"true" desc:"The page to build context around: title, alias, path or id (or give query)"`
	Query  string `json:"query,omitempty" desc:"A question or words: the passages of the best hits (lexical search) that match it best, and the pages around them"`
	Budget int    `json:"budget,omitempty" default:"8192" min:"1024" max:"65536" desc:"Size of the answer in bytes, JSON included (1024..65536, default 8192)"`
}

// ContextPage is a page given in full, or cut to fit (a title), or the
// passages of it that match best (a query).
type ContextPage struct {
	PageRef
	// Content is the page's text (a title; cut at its end to fit).
	Content string `json:"content,omitempty"`
	// Cut counts the bytes of content left out at its end (0: whole).
	Cut int `json:"cut,omitempty"`
	// Passages are the parts of a hit that match the query best (a
	// query), in the page's order; its opening when none matches.
	Passages []ContextPassage `json:"passages,omitempty"`
}

// ContextPassage is a part of a page: a paragraph, a list, a code block.
type ContextPassage struct {
	Line    int    `json:"line"`              // the file's line it starts on
	Heading string `json:"heading,omitempty"` // the headings it sits under: "Setup > Sync"
	Text    string `json:"text"`
	Cut     int    `json:"cut,omitempty"` // bytes left out at its end
}

// ContextNeighbor is a page next to one given in full.
type ContextNeighbor struct {
	PageRef
	Summary string `json:"summary,omitempty"`
	// Links are the lines that link the two pages, "out: …" for a line of
	// the page given in full, "in: …" for a line of this one.
	Links []string `json:"links,omitempty"`
}

// ContextOmitted says what did not fit.
type ContextOmitted struct {
	Neighbors int      `json:"neighbors,omitempty"` // neighbours left out (the least related)
	Pages     []string `json:"pages,omitempty"`     // hits left out (titles)
	Passages  int      `json:"passages,omitempty"`  // passages matching the query left out
	Bytes     int      `json:"bytes,omitempty"`     // page text not given
}

// ContextOut is the result of get_context.
type ContextOut struct {
	Budget    int               `json:"budget"`
	Pages     []ContextPage     `json:"pages"`
	Neighbors []ContextNeighbor `json:"neighbors"`
	Omitted   ContextOmitted    `json:"omitted"`
	// Note says how to read more when something was left out.
	Note string `json:"note,omitempty"`
}

var opContext = register(Op{
	Name: "context", Summary: "A page (or the best hits for a query) and the pages around it, packed into a budget",
	CLI: "context", MCP: "get_context", REST: []Route{{Method: "GET", Path: "/context"}},
	Access: Read, Limits: "budget 1024..65536 bytes (default 8192) for the whole answer; at most 5 hits and 40 neighbours considered",
	Title: "Page context within a budget",
	Examples: []Example{
		{`synapse context "Spaced repetition"`, "the page, then its neighbours with summaries and the lines that link them, in 8 KB"},
		{`synapse context --query "how do I review old notes" --budget 4096 --json`, "the passages of the best hits that match the question, and the pages around them, in 4 KB"},
	},
	Exits: map[int]string{2: "invalid input: both or neither of TITLE and --query", 3: "not found: no page answers to TITLE"},
}, getContext)

// Caps of get_context's search.
const (
	contextHits      = 3  // hits given in full (as far as the budget goes)
	contextNeighbors = 40 // neighbours considered
	summaryChars     = 300
	linkLineChars    = 200
	linkLinesEach    = 2 // lines per direction per neighbour
)

func getContext(ctx context.Context, e *Env, in *ContextIn) (*ContextOut, error) {
	in.Title, in.Query = strings.TrimSpace(in.Title), strings.TrimSpace(in.Query)
	if (in.Title == "") == (in.Query == "") {
		return nil, errs.E(errs.Invalid, "give a page title or %s, one of them", errs.Param("query"))
	}
	var centers []*store.PageRec
	var skipped []string
	if in.Title != "" {
		err := e.Store.View(func(tx *store.Tx) error {
			p, err := resolvePage(tx, in.Title)
			centers = []*store.PageRec{p}
			return err
		})
		if err != nil {
			return nil, err
		}
	} else {
		var err error
		if centers, skipped, err = contextHitsFor(ctx, e, in.Query); err != nil {
			return nil, err
		}
	}
	b := &contextBuilder{e: e, ctx: ctx, out: &ContextOut{Budget: in.Budget, Pages: []ContextPage{}, Neighbors: []ContextNeighbor{}}}
	b.out.Omitted.Pages = skipped
	if in.Query != "" {
		var err error
		if b.terms, err = search.QueryTerms(e.Store, in.Query); err != nil {
			return nil, err
		}
		b.query = true
	}
	if err := b.build(centers); err != nil {
		return nil, err
	}
	return b.out, nil
}

// contextHitsFor runs the query: the first hits are given in full, the
// rest named as left out.
func contextHitsFor(ctx context.Context, e *Env, q string) (pages []*store.PageRec, skipped []string, err error) {
	res, err := searchWiki(ctx, e, &SearchIn{Query: q, K: 5})
	if err != nil {
		return nil, nil, err
	}
	err = e.Store.View(func(tx *store.Tx) error {
		for i, h := range res.Hits {
			if i >= contextHits {
				skipped = append(skipped, h.Title)
				continue
			}
			if p, err := tx.Page(tx.DocByID(h.ID)); err == nil && p != nil {
				pages = append(pages, p)
			}
		}
		return nil
	})
	return pages, skipped, err
}

// contextBuilder packs a context answer.
type contextBuilder struct {
	e   *Env
	ctx context.Context
	out *ContextOut
	// query: the centers are hits, given by their passages matching terms
	query bool
	terms map[string]float64
}

// build fills the answer: the centers' content, cut so that the neighbours
// get their share, then the neighbours most related first while they fit.
func (b *contextBuilder) build(centers []*store.PageRec) error {
	bodies := make([]string, len(centers))
	lines := make([]int, len(centers)) // the file's line each body starts on
	for i, c := range centers {
		data, _, err := b.e.files().ReadFile(b.ctx, c.Path, maxSnippetRead)
		if err != nil {
			return fileError(err, "read %s: %v", c.Path, err)
		}
		bodies[i] = strings.TrimLeft(markdown.Parse(c.Path, data).Body, "\r\n")
		lines[i] = 1 + strings.Count(string(data[:len(data)-len(bodies[i])]), "\n")
		b.out.Pages = append(b.out.Pages, ContextPage{PageRef: refOf(c)})
	}
	neighbors, err := b.neighbors(centers)
	if err != nil {
		return err
	}
	// the pages get what the neighbours leave, at least 60% of the budget
	nsize := 0
	for _, n := range neighbors {
		nsize += jsonSize(n) + 1
	}
	room := b.out.Budget - jsonSize(b.out) - 64 // the note and the counts
	pageRoom := max(room*6/10, room-nsize)
	if b.query {
		b.fillPassages(bodies, lines, pageRoom)
	} else {
		b.fillPages(bodies, pageRoom)
	}
	for i, n := range neighbors {
		if jsonSize(b.out)+jsonSize(n)+1+64 > b.out.Budget {
			b.out.Omitted.Neighbors += len(neighbors) - i
			break
		}
		b.out.Neighbors = append(b.out.Neighbors, n)
	}
	b.note()
	for jsonSize(b.out) > b.out.Budget && len(b.out.Neighbors) > 0 { // the note's share was short
		b.out.Neighbors = b.out.Neighbors[:len(b.out.Neighbors)-1]
		b.out.Omitted.Neighbors++
		b.note()
	}
	return nil
}

// fillPages gives each page's content its share of room bytes (of JSON),
// cut at a line end where it must be cut.
func (b *contextBuilder) fillPages(bodies []string, room int) {
	for i := range b.out.Pages {
		share := room / (len(bodies) - i)
		body := bodies[i]
		if jsonSize(body) > share {
			body = cutToJSON(body, share)
			b.out.Pages[i].Cut = len(bodies[i]) - len(body)
			b.out.Omitted.Bytes += b.out.Pages[i].Cut
		}
		b.out.Pages[i].Content = body
		room -= jsonSize(body)
	}
}

// note says how to read what was left out.
func (b *contextBuilder) note() {
	o := b.out.Omitted
	var parts []string
	if o.Passages > 0 {
		parts = append(parts, fmt.Sprintf("%d matching passages", o.Passages))
	}
	if o.Bytes > 0 {
		parts = append(parts, fmt.Sprintf("%d bytes of page text", o.Bytes))
	}
	if o.Neighbors > 0 {
		parts = append(parts, fmt.Sprintf("%d neighbours", o.Neighbors))
	}
	if len(o.Pages) > 0 {
		parts = append(parts, fmt.Sprintf("%d more hits", len(o.Pages)))
	}
	b.out.Note = ""
	switch {
	case len(parts) > 0:
		b.out.Note = "left out: " + strings.Join(parts, ", ") + "; read a page whole with get_page (synapse page get), or give a larger budget"
	case len(b.out.Pages) == 0:
		b.out.Note = "no page matches the query"
	}
}

// cutToJSON cuts s to at most max bytes as a JSON string, at the end of a
// line when one is near, else at a rune boundary.
func cutToJSON(s string, max int) string {
	lo, hi := 0, len(s)
	for lo < hi { // the longest prefix whose JSON fits
		mid := (lo + hi + 1) / 2
		if jsonSize(s[:mid]) <= max {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for lo > 0 && !utf8.RuneStart(s[lo]) {
		lo--
	}
	cut := s[:lo]
	if nl := strings.LastIndexByte(cut, '\n'); nl >= len(cut)*3/4 {
		cut = cut[:nl+1]
	}
	return cut
}

// jsonSize is the size of v as JSON.
func jsonSize(v any) int {
	data, err := MarshalJSON(v)
	if err != nil {
		return 0
	}
	return len(data) - 1 // without the newline
}

// neighbors lists the pages next to the centers, most related first: by
// the sum of their graph weights to the centers, then title, then path.
func (b *contextBuilder) neighbors(centers []*store.PageRec) ([]ContextNeighbor, error) {
	type cand struct {
		rec    *store.PageRec
		weight float64
	}
	isCenter := map[uint32]bool{}
	for _, c := range centers {
		isCenter[c.Doc] = true
	}
	byDoc := map[uint32]*cand{}
	err := b.e.Store.View(func(tx *store.Tx) error {
		for _, c := range centers {
			a, err := tx.Adj(c.Doc)
			if err != nil || a == nil {
				return err
			}
			for _, ed := range a.Edges {
				if isCenter[ed.To] {
					continue
				}
				if byDoc[ed.To] == nil {
					p, err := tx.Page(ed.To)
					if err != nil || p == nil || p.Reserved {
						continue
					}
					byDoc[ed.To] = &cand{rec: p}
				}
				byDoc[ed.To].weight += float64(ed.Weight)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	cands := make([]*cand, 0, len(byDoc))
	for _, c := range byDoc {
		cands = append(cands, c)
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		switch {
		case a.weight != b.weight:
			return a.weight > b.weight
		case store.Fold(a.rec.Title) != store.Fold(b.rec.Title):
			return store.Fold(a.rec.Title) < store.Fold(b.rec.Title)
		}
		return a.rec.Path < b.rec.Path
	})
	if len(cands) > contextNeighbors {
		b.out.Omitted.Neighbors += len(cands) - contextNeighbors
		cands = cands[:contextNeighbors]
	}
	lines := b.centerLines(centers)
	out := make([]ContextNeighbor, 0, len(cands))
	for _, c := range cands {
		n, err := b.neighbor(c.rec, centers, isCenter, lines)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// centerLines maps each page a center links to onto the center's lines
// that link it.
func (b *contextBuilder) centerLines(centers []*store.PageRec) map[uint32][]string {
	out := map[uint32][]string{}
	for _, c := range centers {
		text := b.fileLines(c.Path)
		for _, l := range c.Links {
			if l.To != 0 && l.Line > 0 && l.Line <= len(text) && len(out[l.To]) < linkLinesEach {
				out[l.To] = appendLine(out[l.To], "out: "+clipWords(text[l.Line-1], linkLineChars))
			}
		}
	}
	return out
}

// neighbor describes one neighbour: its summary and the lines that link it
// with the centers.
func (b *contextBuilder) neighbor(p *store.PageRec, centers []*store.PageRec, isCenter map[uint32]bool, out map[uint32][]string) (ContextNeighbor, error) {
	n := ContextNeighbor{PageRef: refOf(p), Links: append([]string(nil), out[p.Doc]...)}
	data, _, err := b.e.files().ReadFile(b.ctx, p.Path, maxSnippetRead)
	if err != nil {
		if b.ctx.Err() != nil {
			return n, b.ctx.Err()
		}
		return n, nil // a file gone meanwhile: its name is still worth giving
	}
	parsed := markdown.Parse(p.Path, data)
	n.Summary = summaryOf(parsed)
	text := strings.Split(string(data), "\n")
	in := 0
	for _, l := range p.Links {
		if isCenter[l.To] && l.Line > 0 && l.Line <= len(text) && in < linkLinesEach {
			n.Links = appendLine(n.Links, "in: "+clipWords(text[l.Line-1], linkLineChars))
			in++
		}
	}
	return n, nil
}

// appendLine adds a line once.
func appendLine(ls []string, l string) []string {
	for _, x := range ls {
		if x == l {
			return ls
		}
	}
	return append(ls, l)
}

// fileLines reads a page's lines (none when it cannot be read).
func (b *contextBuilder) fileLines(p string) []string {
	data, _, err := b.e.files().ReadFile(b.ctx, p, maxSnippetRead)
	if err != nil {
		return nil
	}
	return strings.Split(string(data), "\n")
}

// summaryOf is a page's summary: its frontmatter summary or description,
// else its first paragraph (not a heading, a code block, a table or a
// quote), clipped.
func summaryOf(p *markdown.Page) string {
	for _, k := range []string{"summary", "description"} {
		if s := p.Frontmatter.String(k); s != "" {
			return clipWords(s, summaryChars)
		}
	}
	masked := markdown.Mask(p.Body)
	var para []string
	lines, mlines := strings.Split(p.Body, "\n"), strings.Split(masked, "\n")
	for i, l := range lines {
		t := strings.TrimSpace(strings.TrimSuffix(l, "\r"))
		m := strings.TrimSpace(mlines[i])
		switch {
		case t == "" || m == "":
			if len(para) > 0 {
				return clipWords(strings.Join(para, " "), summaryChars)
			}
		case strings.HasPrefix(t, "#"), strings.HasPrefix(t, "|"), strings.HasPrefix(t, ">"), strings.HasPrefix(t, "!["):
			if len(para) > 0 {
				return clipWords(strings.Join(para, " "), summaryChars)
			}
		default:
			para = append(para, t)
		}
	}
	return clipWords(strings.Join(para, " "), summaryChars)
}

// clipWords shortens s to at most n characters, at a word end, with "…".
func clipWords(s string, n int) string {
	s = strings.TrimSpace(strings.TrimSuffix(s, "\r"))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}
