package desk

import "strings"

// plain makes text from the vault safe to draw: a tab becomes spaces (the
// terminal would move to its next tab stop, which the layout does not
// count, and the line would wrap and scroll the screen) and every other
// control character, ESC included, becomes U+FFFD, so a page can neither
// move the cursor nor restyle the screen.
func plain(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString("    ")
		case r == '\n':
			b.WriteRune(r)
		case isControl(r):
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isControl reports a C0 or C1 control character or DEL (a line break
// included: plain keeps those).
func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }
