package ops

import (
	"sort"
	"strings"

	"github.com/synapse-wiki/synapse/search"
)

// minPassageRoom is the least room a passage is cut to: less would be a
// crumb, not a passage.
const minPassageRoom = 160

// passageCand is a passage of a hit that may be given.
type passageCand struct {
	page int // the hit
	p    search.Passage
	rank int // its place among its page's passages by score (0: the best)
}

// fillPassages gives the hits the passages that match the query best
// (search.Passages), in room bytes of JSON: first each hit's best passage,
// in the hits' order, then the others by score while they fit; a hit's
// best passage is cut at a line end when it does not fit whole. A hit with
// no matching passage (found by its title or aliases) gets its opening.
// Each page's passages are given in its own order; what is left out is
// counted (matching passages, bytes of text).
func (b *contextBuilder) fillPassages(bodies []string, lines []int, room int) {
	cands, matching := b.passageCands(bodies)
	room -= len(`,"passages":[]`) * len(bodies)
	type pick struct {
		start int
		cp    ContextPassage
	}
	picked := make([][]pick, len(bodies))
	given := make([]int, len(bodies))
	firsts := 0 // best passages still to give
	for _, c := range cands {
		if c.rank == 0 {
			firsts++
		}
	}
	for _, c := range cands {
		body := bodies[c.page]
		cp := ContextPassage{Line: lines[c.page] + c.p.Line - 1, Heading: c.p.Heading, Text: strings.TrimRight(body[c.p.Start:c.p.End], "\r\n")}
		size := jsonSize(cp) + 1
		if c.rank == 0 {
			// each hit's best passage gets at least its share of the room
			share := room / firsts
			firsts--
			if size > share && share >= minPassageRoom {
				whole := cp.Text
				cp.Text = cutToJSON(whole, jsonSize(whole)-(size-share)-len(`,"cut":1000000`))
				cp.Cut = len(whole) - len(cp.Text)
				size = jsonSize(cp) + 1
			}
		}
		if size > room || cp.Text == "" {
			continue
		}
		room -= size
		picked[c.page] = append(picked[c.page], pick{c.p.Start, cp})
		given[c.page] += len(cp.Text)
		if c.p.Score > 0 {
			matching[c.page]--
		}
	}
	for i := range bodies {
		ps := picked[i]
		sort.Slice(ps, func(x, y int) bool { return ps[x].start < ps[y].start })
		for _, p := range ps {
			b.out.Pages[i].Passages = append(b.out.Pages[i].Passages, p.cp)
		}
		b.out.Omitted.Passages += matching[i]
		b.out.Omitted.Bytes += max(0, len(strings.TrimRight(bodies[i], "\r\n"))-given[i])
	}
}

// passageCands lists the passages worth giving, in the order they are
// offered (fillPassages), and counts each hit's matching passages.
func (b *contextBuilder) passageCands(bodies []string) ([]passageCand, []int) {
	var cands []passageCand
	matching := make([]int, len(bodies))
	for i, body := range bodies {
		ps := search.Passages(body, b.terms)
		var best []search.Passage
		for _, p := range ps {
			if p.Score > 0 {
				best = append(best, p)
			}
		}
		matching[i] = len(best)
		if len(best) == 0 && len(ps) > 0 {
			best = ps[:1] // the opening
		}
		sort.SliceStable(best, func(x, y int) bool { return best[x].Score > best[y].Score })
		for r, p := range best {
			cands = append(cands, passageCand{page: i, p: p, rank: r})
		}
	}
	sort.SliceStable(cands, func(x, y int) bool {
		a, c := cands[x], cands[y]
		switch {
		case (a.rank == 0) != (c.rank == 0):
			return a.rank == 0
		case a.rank == 0:
			return a.page < c.page
		case a.p.Score != c.p.Score:
			return a.p.Score > c.p.Score
		case a.page != c.page:
			return a.page < c.page
		}
		return a.p.Start < c.p.Start
	})
	return cands, matching
}
