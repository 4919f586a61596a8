package ops

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSlug: a slug is a usable, stable file name for any title.
func FuzzSlug(f *testing.F) {
	for _, s := range []string{"Café au lait", "C++ / C#", "../../etc", "東京", "a\x00b", "---", "Ⅻ", strings.Repeat("é", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, title string) {
		s := Slug(title)
		if s == "" || len(s) > 120 || !utf8.ValidString(s) {
			t.Fatalf("Slug(%q) = %q", title, s)
		}
		if strings.ContainsAny(s, "/\\.\x00 ") || strings.HasPrefix(s, "-") || strings.HasSuffix(s, "-") {
			t.Fatalf("Slug(%q) = %q is not a plain file name", title, s)
		}
		if Slug(s) != s {
			t.Fatalf("Slug is not stable: %q → %q → %q", title, s, Slug(s))
		}
	})
}
