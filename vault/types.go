package vault

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Page types (docs/vault.md#pages). Types are open: a vault may use any well-formed
// type (topic, question, person…) and every surface accepts it. The
// built-in types have their folders (docs/vault.md#layout); the reserved ones belong to
// the three top files.
var (
	// PageTypes are the built-in types, in catalogue order.
	PageTypes = []string{"entity", "concept", "source", "synthesis", "comparison", "query", "note"}
	// ReservedTypes belong to wiki/index.md, log.md and overview.md.
	ReservedTypes = []string{"index", "log", "overview"}
)

// MaxTypeChars bounds a type's length.
const MaxTypeChars = 32

var typeFolders = map[string]string{
	"entity": "entities", "concept": "concepts", "source": "sources",
	"synthesis": "synthesis", "comparison": "comparisons", "query": "queries",
}

// TypeFolder returns the wiki sub-folder of a built-in type ("" for
// note, which lives at the top of wiki/, and for any other type).
func TypeFolder(t string) string { return typeFolders[t] }

// WellFormedType reports whether t is a well-formed page type: a
// lower-case word of letters, digits and '-' (not starting with '-'), at
// most 32 characters. Reserved types are well formed (see IsReservedType).
func WellFormedType(t string) bool {
	if t == "" || t[0] == '-' || utf8.RuneCountInString(t) > MaxTypeChars {
		return false
	}
	for _, r := range t {
		switch {
		case r == '-', '0' <= r && r <= '9', 'a' <= r && r <= 'z':
		case r >= 0x80 && unicode.IsLetter(r) && !unicode.IsUpper(r) && !unicode.IsTitle(r):
		case r >= 0x80 && unicode.IsDigit(r):
		default:
			return false
		}
	}
	return true
}

// IsReservedType reports whether t is index, log or overview.
func IsReservedType(t string) bool {
	for _, r := range ReservedTypes {
		if r == t {
			return true
		}
	}
	return false
}

// ValidType reports whether t is a type a page can be written with: well
// formed and not reserved.
func ValidType(t string) bool { return WellFormedType(t) && !IsReservedType(t) }

// IsBuiltinType reports whether t is one of the built-in types.
func IsBuiltinType(t string) bool {
	for _, x := range PageTypes {
		if x == t {
			return true
		}
	}
	return false
}

// NormalizeType is the type a page's frontmatter `type` value gives it:
// trimmed and lower-cased, with runs of blanks and '_' as one '-'
// ("Research Note" → research-note); "" when the result is not a valid
// type (the page then takes its folder's type).
func NormalizeType(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if ValidType(s) {
		return s // the common case: already a lower-case word
	}
	s = strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return unicode.IsSpace(r) || r == '_' }), "-")
	if !ValidType(s) {
		return ""
	}
	return s
}

// TypeProblem explains why t cannot be a page type ("" when it can).
func TypeProblem(t string) string {
	switch {
	case t == "":
		return "a type is a lower-case word"
	case IsReservedType(t):
		return "type " + quote(t) + " is reserved for wiki/" + t + ".md"
	case !WellFormedType(t):
		return "type " + quote(t) + " is not a well-formed type: use a lower-case word of letters, digits and '-', at most 32 characters (e.g. topic, question, person)" + TypeHint(t, "")
	}
	return ""
}

// TypeHint is "; did you mean PREFIX+T?" for a malformed type t that has
// a well-formed spelling T (NormalizeType: "Topic" → topic, "Research
// Note" → research-note), else "". Types are lower-case words on every
// surface: an upper-case one is refused with this hint, never lowered
// silently.
func TypeHint(t, prefix string) string {
	n := NormalizeType(t)
	if n == "" || n == t {
		return ""
	}
	return "; did you mean " + quote(prefix+n) + "?"
}

func quote(s string) string { return strconv.Quote(s) }
