package markdown

import (
	"path"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// SourceKind is what one `sources` entry names (docs/vault.md#sources). Every place
// that derives cited files (the scanner's source keys, `source list`
// states, lint, the write path) classifies entries with ClassifySource,
// so they cannot disagree.
type SourceKind uint8

// Source kinds. Only SourceFile is a file: it is checked when a write adds
// it, tracked by `source list`, and can be `missing`. Every other kind is
// kept byte for byte, never checked against raw/, never tracked and never
// reported missing.
const (
	// SourceEmpty is a blank entry (dropped).
	SourceEmpty SourceKind = iota
	// SourceFile names a file under raw/sources/: "raw/sources/x.md",
	// "x.md", "sources/x.md", "papers/x.pdf", "../../raw/sources/x.md",
	// "My Notes (2020).pdf" (a name with a file extension, spaces or not).
	SourceFile
	// SourceExternal is an external citation: a URL ("https://…") or any
	// "scheme:value" id ("web:https://…", "kb:…", "doi:…", "isbn:…",
	// "guide:…", "arxiv:…"): a scheme of two or more letters, digits, '+',
	// '.' or '-' starting with a letter, then ':' and a value that does not
	// start with a blank.
	SourceExternal
	// SourceLink is a wikilink "[[Page]]" (also "[[Page|label]]",
	// "[[Page#Heading]]"): a link from the page, not a file.
	SourceLink
	// SourceName is a bare name: one word without a folder, a blank or a
	// known file extension ("karpathy-llm-wiki", "nature.com"). Wikis
	// written by agents use these for the slug of a source *page*; it is
	// not plausibly a file under raw/sources/, so it is never missing.
	SourceName
	// SourceText is a free-text citation: words with blanks, parentheses
	// or commas and no file extension ("Smith J. (2020) Deep learning",
	// "Interview with the team, May 2024", "Title: subtitle" from a stray
	// colon).
	SourceText
	// SourceOutside is a path that leaves raw/sources/: another raw/
	// folder ("raw/assets/x.png", "raw/x.md"), wiki/, a Windows drive
	// path, or a ".." that climbs out. It is kept on pages that have it
	// but never tracked; a write that adds one is refused.
	SourceOutside
)

var sourceKindNames = [...]string{"empty", "file", "external", "link", "name", "text", "outside"}

func (k SourceKind) String() string {
	if int(k) < len(sourceKindNames) {
		return sourceKindNames[k]
	}
	return "unknown"
}

// Source is a classified `sources` entry.
type Source struct {
	Kind SourceKind
	// Raw is the entry as written, without surrounding blanks.
	Raw string
	// Path is the vault path of a SourceFile entry ("raw/sources/…",
	// clean, forward slashes); "" for other kinds.
	Path string
	// Target is the link target of a SourceLink entry (without |label or
	// #heading); "" for other kinds.
	Target string
}

// sourcesPrefix is the vault's source folder (vault.SourcesDir; this
// package does not import vault).
const sourcesPrefix = "raw/sources/"

// ClassifySource classifies one `sources` entry. It is pure (no file is
// looked at) and total: every string gets exactly one kind. The rules, in
// order:
//
//	blank                                  SourceEmpty
//	[[Target]] (|label, #heading allowed)  SourceLink
//	scheme://… or scheme:value             SourceExternal (scheme ≥ 2 chars, value not starting with a blank)
//	C:\… or C:/… (a drive path)            SourceOutside
//	raw/sources/… , sources/… (after ./ / and ../ are stripped; \ read as /)
//	                                       SourceFile, or SourceOutside if ".." climbs out
//	raw/… , wiki/… or ../ not followed by raw/
//	                                       SourceOutside
//	last element has a known file extension (x.md, My Notes (2020).pdf)
//	                                       SourceFile (raw/sources/ + entry)
//	blanks, parentheses, brackets, quotes, commas or semicolons
//	                                       SourceText
//	a folder path without blanks (papers/x) SourceFile
//	anything else (one bare word)           SourceName
func ClassifySource(entry string) Source {
	s := strings.TrimSpace(entry)
	src := Source{Raw: s}
	if s == "" {
		return src
	}
	if t, ok := wikilinkEntry(s); ok {
		src.Kind, src.Target = SourceLink, t
		return src
	}
	if isExternalID(s) {
		src.Kind = SourceExternal
		return src
	}
	p := strings.ReplaceAll(s, "\\", "/")
	if len(p) >= 3 && p[1] == ':' && p[2] == '/' && isASCIILetter(p[0]) {
		src.Kind = SourceOutside // a Windows drive path
		return src
	}
	explicit := false // spelled as a path from the vault root
	for {
		switch {
		case strings.HasPrefix(p, "./"):
			p = p[2:]
			continue
		case strings.HasPrefix(p, "/"):
			p, explicit = p[1:], true
			continue
		}
		break
	}
	if strings.HasPrefix(p, "../") {
		for strings.HasPrefix(p, "../") || strings.HasPrefix(p, "./") {
			p = p[strings.IndexByte(p, '/')+1:]
		}
		if !strings.HasPrefix(p, "raw/") {
			src.Kind = SourceOutside
			return src
		}
	}
	var full string
	switch {
	case strings.HasPrefix(p, sourcesPrefix):
		full = p
	case strings.HasPrefix(p, "sources/"):
		full = "raw/" + p
	case p == "raw" || p == "wiki" || strings.HasPrefix(p, "raw/") || strings.HasPrefix(p, "wiki/"):
		src.Kind = SourceOutside
		return src
	case knownExtension(path.Base(p)):
		full = sourcesPrefix + p
	case strings.ContainsFunc(p, isProse):
		src.Kind = SourceText
		return src
	case strings.Contains(strings.TrimSuffix(p, "/"), "/") || explicit:
		full = sourcesPrefix + p
	default:
		src.Kind = SourceName
		return src
	}
	c := path.Clean(full)
	if !strings.HasPrefix(c, sourcesPrefix) || c == strings.TrimSuffix(sourcesPrefix, "/") {
		src.Kind = SourceOutside
		return src
	}
	src.Kind, src.Path = SourceFile, c
	return src
}

// wikilinkEntry reports whether s is exactly one [[wikilink]] and returns
// its target.
func wikilinkEntry(s string) (string, bool) {
	s = strings.TrimPrefix(s, "!")
	if !strings.HasPrefix(s, "[[") || !strings.HasSuffix(s, "]]") || len(s) < 5 {
		return "", false
	}
	inner := s[2 : len(s)-2]
	if strings.Contains(inner, "[[") || strings.Contains(inner, "]]") {
		return "", false
	}
	if i := strings.IndexAny(inner, "|#"); i >= 0 {
		inner = inner[:i]
	}
	inner = strings.TrimSpace(inner)
	return inner, inner != ""
}

// isExternalID reports whether s is a URL or a scheme:value id.
func isExternalID(s string) bool {
	i := strings.IndexByte(s, ':')
	if i < 2 || i == len(s)-1 {
		return false
	}
	if !isASCIILetter(s[0]) {
		return false
	}
	for j := 1; j < i; j++ {
		c := s[j]
		if !(isASCIILetter(c) || '0' <= c && c <= '9' || c == '+' || c == '.' || c == '-') {
			return false
		}
	}
	v := s[i+1:]
	return v[0] != ' ' && v[0] != '\t'
}

func isASCIILetter(c byte) bool { return 'A' <= c&^0x20 && c&^0x20 <= 'Z' }

// isProse reports a character that file names in a wiki's raw/sources/
// rarely hold but citations in prose do.
func isProse(r rune) bool {
	switch r {
	case '(', ')', '[', ']', '{', '}', '<', '>', '"', '\'', ',', ';', '“', '”', '«', '»':
		return true
	}
	return unicode.IsSpace(r)
}

// sourceExtensions are the extensions that make a bare entry a file name.
var sourceExtensions = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`md markdown mdown mkd mdx txt text rst adoc asciidoc org tex bib ris
		pdf epub djvu mobi html htm xhtml mhtml webarchive json jsonl ndjson csv tsv xml yaml yml toml
		doc docx odt rtf pages ppt pptx odp key xls xlsx ods numbers srt vtt sbv log eml mbox msg
		ipynb py go js ts rs java c h cpp sql sh png jpg jpeg gif webp svg tif tiff heic
		mp3 mp4 m4a wav ogg opus flac webm mov avi mkv zip gz tgz tar 7z`) {
		sourceExtensions[e] = true
	}
}

func knownExtension(base string) bool {
	ext := path.Ext(base)
	return len(ext) > 1 && ext != base && sourceExtensions[strings.ToLower(ext[1:])]
}

// SourceEntries returns the entries of a `sources`-style frontmatter key
// as strings, in order, as the wiki meant them even where YAML read them
// otherwise:
//
//   - a list of strings: one entry per item;
//   - an unquoted [[Page]] item, which YAML reads as a nested list: the
//     entry "[[Page]]";
//   - a mapping item (a stray colon: `- Smith: Title`): the entry
//     "Smith: Title";
//   - a single string: one entry, or one per comma-separated part when
//     every part is a file, an external citation or a link ("a.md, b.md").
//
// Blank entries are dropped; duplicates are kept (callers dedupe by kind).
func (f *Frontmatter) SourceEntries(key string) []string {
	n := f.lookup(key)
	if n == nil {
		return nil
	}
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return nil
		}
		parts := strings.Split(n.Value, ",")
		split := len(parts) > 1
		for _, p := range parts {
			if k := ClassifySource(p).Kind; k != SourceEmpty && k != SourceFile && k != SourceExternal && k != SourceLink {
				split = false
				break
			}
		}
		if !split {
			add(n.Value)
			break
		}
		for _, p := range parts {
			add(p)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			add(entryText(c))
		}
	case yaml.MappingNode:
		add(entryText(n))
	}
	return out
}

// entryText renders one list item of a sources list as the text the
// author wrote.
func entryText(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return ""
		}
		return n.Value
	case yaml.SequenceNode:
		// [[Page]] unquoted: YAML reads a flow list in a flow list
		var parts []string
		var walk func(*yaml.Node)
		walk = func(m *yaml.Node) {
			for _, c := range m.Content {
				if c.Kind == yaml.ScalarNode {
					parts = append(parts, c.Value)
				} else {
					walk(c)
				}
			}
		}
		walk(n)
		if len(parts) == 0 {
			return ""
		}
		return "[[" + strings.Join(parts, ", ") + "]]"
	case yaml.MappingNode:
		var parts []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind == yaml.ScalarNode && v.ShortTag() != "!!null" {
				parts = append(parts, k.Value+": "+v.Value)
			} else {
				parts = append(parts, k.Value)
			}
		}
		return strings.Join(parts, "; ")
	case yaml.AliasNode:
		if n.Alias != nil {
			return entryText(n.Alias)
		}
	}
	return ""
}

// CitedFiles returns the vault paths of the files under raw/sources/ that
// entries name, each once, in order (the page's source keys).
func CitedFiles(entries []string) []string {
	var out []string
	for _, e := range entries {
		s := ClassifySource(e)
		if s.Kind != SourceFile {
			continue
		}
		dup := false
		for _, x := range out {
			if x == s.Path {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, s.Path)
		}
	}
	return out
}
