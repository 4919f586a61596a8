package search

import (
	"strings"
	"testing"
)

// TestPassages_Split: paragraphs up to a blank line or a heading, a fenced
// block whole (blank lines inside it included), a long paragraph cut at
// line ends; each with its line and the headings above it; headings are
// no passages.
func TestPassages_Split(t *testing.T) {
	long := strings.Repeat("a line of a long list of things\n", 60) // 1920 bytes
	body := "Intro text.\nStill intro.\n\n# Top\n## Setup\nFirst para.\n\n```\ncode\n\nmore code\n```\n### Deep\n" + long + "\n## Other\nLast."
	ps := Passages(body, nil)
	type want struct {
		line    int
		heading string
		prefix  string
	}
	wants := []want{
		{1, "", "Intro text.\nStill intro.\n"},
		{6, "Top > Setup", "First para.\n"},
		{8, "Top > Setup", "```\ncode\n\nmore code\n```\n"},
		{14, "Top > Setup > Deep", "a line of"},
		{14 + PassageMax/32, "Top > Setup > Deep", "a line of"},
		{76, "Top > Other", "Last."},
	}
	if len(ps) != len(wants) {
		for _, p := range ps {
			t.Logf("%d %q %q", p.Line, p.Heading, body[p.Start:p.End])
		}
		t.Fatalf("%d passages, want %d", len(ps), len(wants))
	}
	for i, w := range wants {
		p := ps[i]
		text := body[p.Start:p.End]
		if p.Line != w.line || p.Heading != w.heading || !strings.HasPrefix(text, w.prefix) || p.End-p.Start > PassageMax && i != 2 {
			t.Errorf("passage %d: line %d heading %q %q (%d bytes); want line %d heading %q %q", i, p.Line, p.Heading, text[:min(len(text), 30)], p.End-p.Start, w.line, w.heading, w.prefix)
		}
		if got := strings.Split(body, "\n")[p.Line-1]; !strings.HasPrefix(text, got) {
			t.Errorf("passage %d starts %q, line %d is %q", i, text[:min(len(text), 20)], p.Line, got)
		}
	}
}

// TestPassages_Score: a passage scores by the distinct query terms it
// holds (rarer terms weigh more), a little by repeats, and half for terms
// only its headings hold; one without any scores 0.
func TestPassages_Score(t *testing.T) {
	body := "Nothing here.\n\nConflicts happen; a conflict is merged.\n\nA conflict resolution rule.\n\n## Resolution\nThe rule under it.\n"
	terms := map[string]float64{"conflict": 2, "resolut": 3}
	ps := Passages(body, terms)
	if len(ps) != 4 {
		t.Fatalf("%d passages", len(ps))
	}
	if ps[0].Score != 0 {
		t.Errorf("no match scores %v", ps[0].Score)
	}
	if !(ps[2].Score > ps[1].Score && ps[1].Score > ps[3].Score && ps[3].Score > 0) {
		t.Errorf("scores %v %v %v (both terms > one term repeated > a heading's term > 0)", ps[1].Score, ps[2].Score, ps[3].Score)
	}
}
