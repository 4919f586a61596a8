package desk

import (
	"regexp"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
)

// The page view renders markdown itself, line by line, with the desk's
// lipgloss styles. A full renderer (glamour) was tried first: it pulls in
// chroma, whose lexers register themselves when the binary starts, and
// that cost every synapse command 60 ms or more of start-up CPU — far more
// than a search takes — for syntax colours the desk does not need. What a
// reader of a wiki page needs is here: headings, emphasis, lists, quotes
// and callouts, code kept as written, tables kept as written, links shown
// by their label, and words wrapped to the width.

// The patterns are compiled on first use: package init runs in every
// synapse process, a search's included, not only in the desk.
var (
	headingRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`) })
	listRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\s*)([-*+]|\d{1,9}[.)])\s+(\[[ xX]\]\s+)?(.*)$`) })
	ruleRe    = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$`)
	})
	mdLinkRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`!?\[([^\]\n]*)\]\(([^)\n]*)\)`) })
	strongRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\*\*([^*\n]+)\*\*|__([^_\n]+)__`) })
	emRe     = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(^|[^\w*])\*([^*\s][^*\n]*)\*|(^|[^\w_])_([^_\s][^_\n]*)_`)
	})
)

// mdRenderer renders one page body for a width.
type mdRenderer struct {
	st    Styles
	width int
	out   []string
}

// renderMarkdown renders a page body for the terminal at width w: the
// text wrapped to w-2 with a margin of two, styled with st (plain under
// NO_COLOR: the same layout, no escape codes).
func renderMarkdown(content string, w int, st Styles) string {
	r := &mdRenderer{st: st, width: max(w-2, 20)}
	lines := strings.Split(plain(strings.ReplaceAll(content, "\r\n", "\n")), "\n")
	fence := ""
	var para []string
	flush := func() {
		if len(para) > 0 {
			r.wrapped("", "", r.inline(strings.Join(para, " ")))
			para = nil
		}
	}
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if fence != "" || isFence(t) {
			flush()
			fence = r.code(l, t, fence)
			continue
		}
		if t == "" {
			flush()
			r.blank()
			continue
		}
		if r.block(l, t) {
			flush()
			continue
		}
		para = append(para, t)
	}
	flush()
	return strings.Trim(strings.Join(r.out, "\n"), "\n")
}

func isFence(t string) bool {
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// code draws a fenced block's line as written (dimmed, cut at the
// width) and returns the fence still open after it.
func (r *mdRenderer) code(l, t, fence string) string {
	if fence == "" {
		if lang := strings.TrimSpace(t[3:]); lang != "" {
			r.add("  " + r.st.Dim.Render(lang))
		}
		return t[:3]
	}
	if strings.HasPrefix(t, fence) {
		return ""
	}
	r.add("  " + r.st.Dim.Render(ansi.Truncate(strings.ReplaceAll(l, "\t", "    "), r.width-2, "…")))
	return fence
}

// block draws a line that is a block of its own (heading, rule, list
// item, quote, table row) and says whether it was one.
func (r *mdRenderer) block(l, t string) bool {
	switch {
	case headingRe().MatchString(t):
		g := headingRe().FindStringSubmatch(t)
		r.blank()
		text := r.inline(g[2])
		if len(g[1]) <= 2 {
			r.wrapped("", "", r.st.Heading.Render(ansi.Strip(text)))
		} else {
			r.wrapped("", "", r.st.Title.Render(ansi.Strip(text)))
		}
		r.blank()
	case ruleRe().MatchString(t):
		r.add(r.st.Border.Render(strings.Repeat("─", r.width)))
	case strings.HasPrefix(t, ">"):
		r.quote(t)
	case strings.HasPrefix(t, "|"):
		r.add(ansi.Truncate(r.inline(t), r.width, "…"))
	case listRe().MatchString(l):
		g := listRe().FindStringSubmatch(l)
		depth := len(strings.ReplaceAll(g[1], "\t", "  ")) / 2
		bullet := "• "
		if g[2][0] >= '0' && g[2][0] <= '9' {
			bullet = g[2] + " "
		}
		if g[3] != "" {
			bullet += strings.TrimSpace(g[3]) + " "
		}
		pad := strings.Repeat("  ", depth)
		r.wrapped(pad+bullet, pad+strings.Repeat(" ", ansi.StringWidth(bullet)), r.inline(g[4]))
	default:
		return false
	}
	return true
}

// quote draws a blockquote line (callouts included: "> [!note] Title").
func (r *mdRenderer) quote(t string) {
	depth := 0
	for strings.HasPrefix(t, ">") {
		depth++
		t = strings.TrimSpace(t[1:])
	}
	bar := strings.Repeat(r.st.Border.Render("│")+" ", depth)
	if strings.HasPrefix(t, "[!") {
		if kind, rest, ok := strings.Cut(t[2:], "]"); ok {
			rest = strings.TrimLeft(rest, "+-")
			t = r.st.Title.Render(strings.ToUpper(kind)) + " " + r.inline(strings.TrimSpace(rest))
			r.wrapped(bar, bar, t)
			return
		}
	}
	r.wrapped(bar, bar, r.inline(t))
}

// inline styles a line's inline markup: code spans as written, links by
// their label, strong and emphasis.
func (r *mdRenderer) inline(s string) string {
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // an unclosed backtick is a character
		parts[len(parts)-2] += "`" + parts[len(parts)-1]
		parts = parts[:len(parts)-1]
	}
	for i := range parts {
		if i%2 == 1 {
			parts[i] = r.st.Code.Render(parts[i])
			continue
		}
		parts[i] = r.spans(parts[i])
	}
	return strings.Join(parts, "")
}

func (r *mdRenderer) spans(s string) string {
	s = wikiLink().ReplaceAllStringFunc(s, func(m string) string { return r.st.Link.Render(linkLabel(m)) })
	s = mdLinkRe().ReplaceAllStringFunc(s, func(m string) string {
		g := mdLinkRe().FindStringSubmatch(m)
		label := g[1]
		if label == "" {
			label = g[2]
		}
		if strings.HasPrefix(m, "!") {
			label = "[image: " + label + "]"
		}
		return r.st.Link.Render(label)
	})
	s = strongRe().ReplaceAllStringFunc(s, func(m string) string {
		return r.st.Strong.Render(m[2 : len(m)-2])
	})
	return emRe().ReplaceAllStringFunc(s, func(m string) string {
		g := emRe().FindStringSubmatch(m)
		if g[2] != "" {
			return g[1] + r.st.Em.Render(g[2])
		}
		return g[3] + r.st.Em.Render(g[4])
	})
}

// wrapped adds text wrapped to the width: the first line after first,
// the others after rest.
func (r *mdRenderer) wrapped(first, rest, text string) {
	w := max(r.width-ansi.StringWidth(first), 10)
	for i, line := range strings.Split(ansi.Wrap(text, w, " -"), "\n") {
		if i == 0 {
			r.add(first + line)
		} else {
			r.add(rest + line)
		}
	}
}

func (r *mdRenderer) add(line string) { r.out = append(r.out, "  "+line) }

// blank adds an empty line, never two in a row.
func (r *mdRenderer) blank() {
	if n := len(r.out); n > 0 && r.out[n-1] != "" {
		r.out = append(r.out, "")
	}
}

// wikiLink matches a wikilink or an embed.
var wikiLink = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(!?)\[\[([^\[\]\n]+)\]\]`) })

// linkLabel is a wikilink's text: its label, else its target (with the
// heading); an embed says so.
func linkLabel(m string) string {
	g := wikiLink().FindStringSubmatch(m)
	target, label, ok := strings.Cut(g[2], "|")
	if !ok || strings.TrimSpace(label) == "" {
		label = strings.Replace(target, "#", " › ", 1)
	}
	label = strings.TrimSpace(label)
	if g[1] == "!" {
		label = "[embedded: " + label + "]"
	}
	return label
}
