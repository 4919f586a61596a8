package markdown

import "strings"

// frontmatterLinks finds the wikilinks in frontmatter values (docs/vault.md#links),
// as Obsidian counts them in backlinks and the graph: a string value
// (`related: "[[X]]"`), list items (`related: ["[[x]]"]`, `- "[[x]]"`),
// and an unquoted `[[x]]`, which YAML reads as a list holding a list
// holding "x" but which its writer meant as a link. text is the YAML
// between the --- fences; its first line is line firstLine of the file,
// and each link carries the file line it is on and the top-level key whose
// value holds it. Keys and YAML comments hold no links.
//
// The scan is textual, over the YAML the caller has already parsed
// successfully (a page whose frontmatter does not parse has no
// frontmatter links, as in Obsidian): every value form above spells the
// link out as `[[…]]` on one line, while a real nested list such as
// `[[a, b], [c]]` does not close with "]]" after its first item and is no
// link.
func frontmatterLinks(text string, firstLine int) []Link {
	if !strings.Contains(text, "[[") {
		return nil
	}
	var out []Link
	key := ""
	line := firstLine
	off := 0 // offset of the line in text
	for rest := text; rest != ""; line++ {
		l, after, _ := strings.Cut(rest, "\n")
		lineOff := off
		off += len(rest) - len(after)
		rest = after
		l = strings.TrimSuffix(l, "\r")
		start := 0
		if l != "" && l[0] != ' ' && l[0] != '\t' && l[0] != '-' && l[0] != '#' {
			// a top-level "key: value" line
			if c := keyEnd(l); c > 0 {
				key = strings.TrimSpace(strings.Trim(strings.TrimSpace(l[:c]), `"'`))
				start = c + 1
			}
		}
		v := uncomment(l, start)
		for i := start; i < len(v); {
			j := strings.Index(v[i:], "[[")
			if j < 0 {
				break
			}
			i += j
			end, ok := wikiEnd(v, i+2)
			if !ok {
				i += 2
				continue
			}
			if lk, ok := parseWikiInner(v[i+2 : end]); ok {
				lk.Embed = i > 0 && v[i-1] == '!'
				lk.Kind, lk.Line, lk.Property = WikiLink, line, key
				s, e := wikiTargetSpan(v[i+2 : end])
				lk.Start, lk.End = lineOff+i+2+s, lineOff+i+2+e
				out = append(out, lk)
			}
			i = end + 2
		}
	}
	return out
}

// keyEnd returns the offset of the ':' ending a top-level mapping key on
// line l (a colon followed by a space, a tab or the end of the line), or
// -1. A quoted key may hold colons.
func keyEnd(l string) int {
	i := 0
	if q := l[0]; q == '"' || q == '\'' {
		if k := strings.IndexByte(l[1:], q); k >= 0 {
			i = k + 2
		}
	}
	for ; i < len(l); i++ {
		if l[i] == ':' && (i+1 == len(l) || l[i+1] == ' ' || l[i+1] == '\t') {
			return i
		}
	}
	return -1
}

// uncomment returns l up to a YAML comment: a '#' at the start of the
// value or after a space or tab, outside a quoted scalar. A quote opens a
// scalar only where a value starts (after "key:", "- ", '[', '{' or ','),
// so the apostrophe of `title: Don't` opens nothing.
func uncomment(l string, from int) string {
	var quote byte
	valueStart := true // at a position where a scalar may start
	for i := from; i < len(l); i++ {
		c := l[i]
		if quote != 0 {
			switch {
			case quote == '"' && c == '\\':
				i++
			case c == quote && quote == '\'' && i+1 < len(l) && l[i+1] == '\'':
				i++ // '' inside a single-quoted scalar
			case c == quote:
				quote = 0
			}
			continue
		}
		switch c {
		case ' ', '\t':
			continue
		case '#':
			if i == from || l[i-1] == ' ' || l[i-1] == '\t' {
				return l[:i]
			}
		case '"', '\'':
			if valueStart {
				quote = c
				continue
			}
		}
		valueStart = c == '-' || c == '[' || c == '{' || c == ',' || c == ':'
	}
	return l
}
