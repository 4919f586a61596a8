package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/mattn/go-runewidth"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/search"
)

// Search prints hits: on a terminal a numbered list with the title,
// type, path and score, and the snippet below with the matched words
// marked; in a pipe one tab-separated line per hit.
func Search(o *Output, r *ops.SearchOut) error {
	if r.Note != "" {
		o.Note("note: %s", r.Note)
	}
	if len(r.Types) > 0 {
		o.Note("no page has the type that type: names; the vault's types, closest first: %s", typeList(r.Types))
	}
	if len(r.Hits) == 0 {
		o.Note("no pages match %q", r.Query)
		return nil
	}
	if !o.tty {
		rows := make([][]string, 0, len(r.Hits))
		for _, h := range r.Hits {
			rows = append(rows, []string{strconv.FormatFloat(h.Score, 'f', 3, 64), h.Title, h.Type, h.Path, h.Snippet})
		}
		o.table([]col{numCol("SCORE"), flexCol("TITLE"), fixedCol("TYPE"), pathCol("PATH"), flexCol("SNIPPET")}, rows)
		return nil
	}
	width := o.termWidth()
	body := o.r.NewStyle().PaddingLeft(4).Width(max(width-2, 20))
	for i, h := range r.Hits {
		if i > 0 {
			o.Printf("\n")
		}
		// one line: number, title, then type · path · score, the path
		// (then the title) cut to fit the terminal
		score := strconv.FormatFloat(h.Score, 'f', 2, 64) + signalsNote(r.Mode, h.Signals)
		titleText, path := h.Title, h.Path
		fixed := 3 + 2 + runewidth.StringWidth(h.Type+" ·  · "+score)
		if room := width - fixed - runewidth.StringWidth(titleText); runewidth.StringWidth(path) > room {
			path = cutTo(path, max(room, 16), true)
		}
		if room := width - fixed - runewidth.StringWidth(path); runewidth.StringWidth(titleText) > room {
			titleText = cutTo(titleText, max(room, 12), false)
		}
		title := o.st.Title.Render(titleText)
		if titleText == h.Title {
			title = mark(o.st.Title, o.st.Mark.Bold(true), h.Title, search.Highlight(r.Query, h.Title))
		}
		o.Printf("%s %s  %s\n", o.st.Dim.Render(fmt.Sprintf("%2d", i+1)), title,
			o.st.Dim.Render(h.Type+" · "+path+" · "+score))
		if h.Snippet != "" {
			o.Printf("%s\n", trimLines(body.Render(mark(o.r.NewStyle(), o.st.Mark, h.Snippet, search.Highlight(r.Query, h.Snippet)))))
		}
	}
	return nil
}

// mark renders text with base style and the spans in the marked style.
func mark(base, marked lipgloss.Style, text string, spans [][2]int) string {
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		if sp[0] < at || sp[1] > len(text) {
			continue
		}
		b.WriteString(base.Render(text[at:sp[0]]))
		b.WriteString(marked.Render(text[sp[0]:sp[1]]))
		at = sp[1]
	}
	b.WriteString(base.Render(text[at:]))
	return b.String()
}

// trimLines drops the spaces a fixed-width style pads lines with.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// signalsNote names what found a hit when search ranked by more than words.
func signalsNote(mode string, signals []string) string {
	if mode == "" || mode == "lexical" || len(signals) == 0 {
		return ""
	}
	return " · " + strings.Join(signals, "+")
}
