package ops

import (
	"path"
	"regexp"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/vault"
)

// sourcePathMatcher is source list's path filter (nil: every path). A
// pattern without * ? or [ is a case-insensitive substring of the path;
// with them it is a glob, matched case-insensitively against the whole
// vault path, the path under raw/sources/ and the file name, where *
// also crosses folders (an agent looking for a source rarely knows how
// deep it lies).
func sourcePathMatcher(pattern string) (func(string) bool, error) {
	pattern = strings.TrimSpace(pattern)
	if pattern == "" {
		return nil, nil
	}
	if len(pattern) > 500 {
		return nil, errs.E(errs.Invalid, "path filter is %d bytes, over 500", len(pattern))
	}
	if !strings.ContainsAny(pattern, "*?[") {
		want := strings.ToLower(pattern)
		return func(p string) bool { return strings.Contains(strings.ToLower(p), want) }, nil
	}
	re, err := globRegexp("path filter", pattern)
	if err != nil {
		return nil, err
	}
	return func(p string) bool {
		return re.MatchString(p) || re.MatchString(strings.TrimPrefix(p, vault.SourcesDir+"/")) || re.MatchString(path.Base(p))
	}, nil
}

// globRegexp turns a glob into an anchored, case-insensitive regexp: *
// is any run of characters (slashes too), ? one character, [...] a
// class ([!...] or [^...] negated). what names the filter in errors.
func globRegexp(what, glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("(?is)^")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				return nil, errs.E(errs.Invalid, "%s %q: [ without a closing ]", what, glob)
			}
			class := glob[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, errs.E(errs.Invalid, "%s %q: %v", what, glob, err)
	}
	return re, nil
}
