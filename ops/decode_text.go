package ops

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
)

// checkParamText refuses parameters that JSON decoding would silently change:
// bytes that are not UTF-8, and \uD800–\uDFFF escapes that do not form a
// surrogate pair, both of which decode to U+FFFD. Without it a page
// written over MCP or REST kept U+FFFD where the CLI refuses the bytes.
func checkParamText(raw []byte) error {
	if !utf8.Valid(raw) {
		return errs.E(errs.Invalid, "parameters are not valid UTF-8 (bad byte at offset %d); send text as UTF-8", BadUTF8Offset(raw))
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++ // the escaped character (a backslash appears only in strings)
		if i >= len(raw) || raw[i] != 'u' {
			continue
		}
		r := hex4(raw, i+1)
		switch {
		case r < 0 || !utf16.IsSurrogate(rune(r)):
			continue
		case r < 0xDC00 && i+6 < len(raw) && raw[i+5] == '\\' && raw[i+6] == 'u':
			if lo := hex4(raw, i+7); lo >= 0xDC00 && lo <= 0xDFFF {
				i += 10 // a pair: one character
				continue
			}
		}
		return errs.E(errs.Invalid, "parameters hold a lone UTF-16 surrogate (\\u%04x at offset %d), which is no character; send text as UTF-8", r, i-1)
	}
	return nil
}

// hex4 is the value of the four hex digits at raw[i:], or -1.
func hex4(raw []byte, i int) int {
	if i+4 > len(raw) {
		return -1
	}
	n, err := strconv.ParseUint(string(raw[i:i+4]), 16, 16)
	if err != nil {
		return -1
	}
	return int(n)
}

// BadUTF8Offset is the offset of the first byte of b that is not UTF-8
// (len(b) when all are).
func BadUTF8Offset(b []byte) int {
	off := 0
	for off < len(b) {
		r, n := utf8.DecodeRune(b[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	return off
}
