package ops

import (
	"fmt"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"golang.org/x/text/unicode/norm"
)

// The field rules of write_page, shared by its stages. Each rule is here
// once; the stages call it for what the caller gives (decode) or for what
// a write adds (merge).

// checkTitle checks a title (or an alias, named by field): valid UTF-8,
// at most MaxTitleChars characters, one line of visible text — no control
// characters, no bidirectional overrides or isolates (U+202A–U+202E,
// U+2066–U+2069, U+200E, U+200F, U+061C: they make a title read
// differently from what it is) and no line or paragraph separators
// (U+2028, U+2029).
func checkTitle(field, s string) error {
	if !utf8.ValidString(s) {
		return errs.E(errs.Invalid, "%s is not valid UTF-8", field)
	}
	if n := utf8.RuneCountInString(s); n > MaxTitleChars {
		return errs.E(errs.Invalid, "%s is %d characters long; the limit is %d", field, n, MaxTitleChars)
	}
	for _, r := range s {
		switch {
		case unicode.IsControl(r):
			return errs.E(errs.Invalid, "%s contains a control character (%U); titles are one line of text", field, r)
		case r == '\u2028' || r == '\u2029':
			return errs.E(errs.Invalid, "%s contains a line or paragraph separator (%U); titles are one line of text", field, r)
		case isBidiControl(r):
			return errs.E(errs.Invalid, "%s contains a bidirectional control character (%U), which makes it display differently from what it is", field, r)
		}
	}
	return nil
}

func isBidiControl(r rune) bool {
	return r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069' || r == '\u200e' || r == '\u200f' || r == '\u061c'
}

// reservedNames are the names of the three top files (docs/vault.md#pages): no page
// may be titled, renamed or aliased to one, since links to it would reach
// the file synapse maintains.
var reservedNames = map[string]bool{"index": true, "log": true, "overview": true}

// checkNotReserved refuses a title or alias that names a top file
// ("index", "Log.md", "wiki/overview").
func checkNotReserved(field, s string) error {
	f := store.Fold(strings.TrimSpace(s))
	f = strings.TrimPrefix(strings.TrimSuffix(f, ".md"), "wiki/")
	if reservedNames[f] {
		return errs.E(errs.Invalid, "%s %q is reserved for wiki/%s.md, which synapse maintains; choose another", field, s, f)
	}
	return nil
}

// checkAlias checks an alias a write adds.
func checkAlias(a string) error {
	if err := checkTitle("alias "+quote(a), a); err != nil {
		return err
	}
	return checkNotReserved("alias", a)
}

// checkTag checks a tag a write adds (after normalizing).
func checkTag(t string) error {
	if strings.ContainsAny(t, " \t,") {
		return errs.E(errs.Invalid, "tag %q contains a space or comma; tags are single words such as %q", t, strings.Join(strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return r == ' ' || r == '\t' || r == ',' }), "-"))
	}
	if hasControl(t) || !utf8.ValidString(t) {
		return errs.E(errs.Invalid, "tag %q contains a control character", t)
	}
	if n := utf8.RuneCountInString(t); n > MaxTagChars {
		return errs.E(errs.Invalid, "tag %q… is %d characters long; the limit is %d", t[:20], n, MaxTagChars)
	}
	return nil
}

// normalizeAlias is the form aliases are compared and written in.
func normalizeAlias(a string) string { return norm.NFC.String(strings.TrimSpace(a)) }

// checkSource classifies a `sources` entry a write adds and checks it:
// a file must exist under raw/sources/ (opened confined: a symlink that
// leaves raw/sources/ is refused with the same message whether or not its
// target exists, so the check is no oracle for files outside); a path
// that leaves raw/sources/ is refused; external citations, links, names
// and free text are kept as given. It returns the entry as written to the
// page: a file's vault path, anything else byte for byte.
func checkSource(v *vault.Vault, entry string) (string, error) {
	if len(entry) > MaxSourceChars {
		return "", errs.E(errs.Invalid, "source %q… is %d bytes long; the limit is %d", entry[:40], len(entry), MaxSourceChars)
	}
	if hasControl(entry) {
		return "", errs.E(errs.Invalid, "source %q contains a control character", entry)
	}
	s := markdown.ClassifySource(entry)
	switch s.Kind {
	case markdown.SourceFile:
	case markdown.SourceOutside:
		return "", errs.E(errs.Invalid, "source %q is not a file under %s/; cite a file there as x.md or %s/x.md, a web page by its URL, or an id such as doi:…", entry, vault.SourcesDir, vault.SourcesDir)
	default:
		return s.Raw, nil // an external citation, a link, a name or free text
	}
	rel := strings.TrimPrefix(s.Path, vault.SourcesDir+"/")
	if err := checkNameLengths(rel); err != nil {
		return "", errs.E(errs.Invalid, "source %.60q… cannot be cited: %s", s.Path, errs.Message(err))
	}
	for _, el := range strings.Split(rel, "/") {
		if strings.HasPrefix(el, ".") {
			return "", errs.E(errs.Invalid, "source %q is a hidden file; hidden files under %s/ are not tracked", entry, vault.SourcesDir)
		}
	}
	f, _, err := openSource(v, rel)
	if err != nil {
		switch errs.CodeOf(err) {
		case errs.NotFound:
			return "", errs.E(errs.Invalid, "source %q does not exist (sources are files under %s/)", s.Path, vault.SourcesDir)
		case errs.Forbidden:
			if strings.Contains(err.Error(), "resolves outside") {
				return "", errs.E(errs.Invalid, "source %q resolves outside %s/ (through a symlink); cite files inside it", s.Path, vault.SourcesDir)
			}
		}
		return "", errs.E(errs.Invalid, "source %q cannot be cited: %s", s.Path, errs.Message(err))
	}
	f.Close()
	return s.Path, nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// ---- dates ----

// dateLayouts are the formats of `created`/`updated` values found in
// wikis. A value is rewritten in the layout it matched, so a page keeps
// its own convention (Go's parser accepts a fraction of a second after
// the seconds of any layout; a value written with one keeps one).
var dateLayouts = []string{
	"2006-01-02",
	time.RFC3339,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
	"2006/01/02",
}

// dateLayout returns the layout s is written in ("" when it is not a
// date or timestamp synapse knows) and its time.
func dateLayout(s string) (string, time.Time) {
	s = strings.TrimSpace(s)
	for _, l := range dateLayouts {
		t, err := time.Parse(l, s)
		if err != nil {
			continue
		}
		if strings.Contains(l, "05") && strings.Contains(s[min(len(s), 19):], ".") {
			l = strings.Replace(l, "05", "05.999999999", 1) // a fraction of a second
		}
		return l, t
	}
	return "", time.Time{}
}

// isDate reports whether s is a date or timestamp (any known layout).
func isDate(s string) bool {
	l, _ := dateLayout(s)
	return l != ""
}

// formatLike formats now in the layout (and the zone) of an existing
// value; a value synapse does not recognise gets a plain date.
func formatLike(existing string, now time.Time) string {
	l, t := dateLayout(existing)
	if l == "" {
		return now.Format("2006-01-02")
	}
	if strings.HasSuffix(l, "Z07:00") {
		// keep the page's zone: Z stays UTC, an offset stays that offset
		if strings.HasSuffix(strings.TrimSpace(existing), "Z") {
			now = now.UTC()
		} else {
			now = now.In(t.Location())
		}
	}
	return now.Format(l)
}

// maxPathBytes and maxNameBytes bound a page path a caller chooses (most
// file systems allow 255 bytes per name).
const (
	maxPathBytes = 1024
	maxNameBytes = 255
)

// pathForbidden are the characters a chosen page path may not hold:
// those Windows refuses in file names, and those that cut an Obsidian
// link to the file by name ([[a#b]] is a heading, [[a|b]] a label).
const pathForbidden = "\\<>:\"|?*#^[]"

// checkPagePath checks a page path a caller chooses (write_page --path,
// move --path) and returns it in NFC: a vault path inside wiki/ ending in
// .md, every name visible (no dot file, no control character, none of
// pathForbidden, no Windows device name), not one of the three top files,
// and clean (no "..", "." or empty names): it is confined before the file
// layer is asked. field names the parameter in messages.
func checkPagePath(field, p string) (string, error) {
	p = norm.NFC.String(strings.TrimSpace(p))
	bad := func(why string, a ...any) error {
		return errs.E(errs.Invalid, "%s %q %s", field, p, fmt.Sprintf(why, a...))
	}
	switch {
	case !utf8.ValidString(p):
		return "", errs.E(errs.Invalid, "%s is not valid UTF-8", field)
	case len(p) > maxPathBytes:
		return "", bad("is %d bytes; the limit is %d", len(p), maxPathBytes)
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || len(p) > 1 && p[1] == ':':
		return "", bad("must be a vault path with forward slashes, such as %s/topics/x.md", vault.WikiDir)
	case !strings.HasPrefix(p, vault.WikiDir+"/"):
		return "", bad("is outside %s/: pages live under it (%s)", vault.WikiDir, vault.WikiDir+"/"+strings.TrimPrefix(p, "./"))
	case !strings.HasSuffix(p, ".md"):
		return "", bad("must end in .md")
	case vault.IsReserved(p):
		return "", bad("is one of the files synapse maintains (index.md, log.md, overview.md); choose another")
	}
	for _, name := range strings.Split(p, "/")[1:] {
		switch {
		case name == "" || name == "." || name == "..":
			return "", bad("must be clean: no empty, \".\" or \"..\" names")
		case strings.HasPrefix(name, "."):
			return "", bad("has a hidden name (%q): files and folders starting with a dot are not pages", name)
		case len(name) > maxNameBytes:
			return "", bad("has a name of %d bytes; the limit is %d", len(name), maxNameBytes)
		case strings.ContainsAny(name, pathForbidden):
			return "", bad("holds one of %s, which file systems or links do not allow in names", pathForbidden)
		case strings.HasSuffix(name, " ") || strings.HasSuffix(name, "."):
			return "", bad("has a name ending in a space or a dot, which Windows cannot open")
		case windowsDevices[strings.ToLower(strings.TrimSuffix(name, ".md"))]:
			return "", bad("uses %q, a name Windows reserves", name)
		}
		for _, r := range name {
			if unicode.IsControl(r) || isBidiControl(r) || r == '\u2028' || r == '\u2029' {
				return "", bad("holds a control character (%U)", r)
			}
		}
	}
	if strings.TrimSuffix(path.Base(p), ".md") == "" {
		return "", bad("has no file name before .md")
	}
	return p, nil
}

// looksLikePath reports whether a title looks like a file path (it ends in
// .md): written as a title it would make a page titled with the path.
func looksLikePath(title string) bool {
	return strings.HasSuffix(strings.ToLower(strings.TrimSpace(title)), ".md")
}
