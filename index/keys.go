// Package index keeps the store in step with the vault's files: the
// incremental scanner, link resolution and the persisted, incrementally
// maintained graph (docs/vault.md). It never prints;
// progress goes to an optional callback.
package index

import (
	"path"
	"slices"
	"strings"

	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// LinkKey returns the folded resolution key of a link target (see
// store.LinkKey).
func LinkKey(target string) string { return store.LinkKey(target) }

// SourceKey returns the vault path of the file under raw/sources/ that a
// `sources` entry names ("raw/sources/x.md", "x.md", "sources/x.md"), or ""
// for an entry that names no such file: an external citation, a wikilink,
// free text, a bare name or a path outside raw/sources/ (see
// markdown.ClassifySource, the one place entries are classified).
func SourceKey(s string) string { return markdown.ClassifySource(s).Path }

// ParseVersion names how files are parsed into page records. Bump it when
// a change to parsing or to link classification leaves the records of an
// existing store stale: the next scan of a store holding pages parsed by
// another version re-parses every file (a full scan, as reindex), once.
// 2: links in frontmatter, link lines counted from the top of the file,
// links to files outside wiki/ (no page links; raw/sources/ ones cite).
// 3: sources entries classified (markdown.ClassifySource: only files are
// source keys), open types normalized, FMError as "line N: …".
// 4: links to files that are no page: page links that reach a raw source
// or an attachment by name, file links (attachments, explicit paths into
// raw/) kept and resolved, links to the reserved top files filed as
// off-graph links; tracked files indexed by name.
// 5: markdown links to attachments (![d](../raw/assets/d.png)) are file
// links; schema.md and purpose.md are tracked files.
// 6: records say whether the frontmatter declares the type
// (PageRec.TypeDeclared: only declared notes place a new note).
// 7: a page whose frontmatter is not valid YAML keeps the title, type,
// aliases and tags of its plain lines (markdown recoverKeys).
// 8: a page over the write cap (MaxWriteBytes) is listed among the
// capped pages.
const ParseVersion = "8"

const metaParseVersion = "parse_version"

// parseStale reports whether the store holds pages parsed by another
// ParseVersion. A store without pages is marked with this version.
func (ix *Indexer) parseStale() (bool, error) {
	var mismatch, pages bool
	err := ix.Store.View(func(tx *store.Tx) error {
		mismatch = string(tx.Meta(metaParseVersion)) != ParseVersion
		pages = tx.PageCount() > 0
		return nil
	})
	if err != nil || !mismatch {
		return false, err
	}
	if pages {
		return true, nil
	}
	return false, ix.Store.Update(func(tx *store.Tx) error {
		return tx.SetMeta(metaParseVersion, []byte(ParseVersion))
	})
}

// typeAffinity is the type term of the edge weight (docs/vault.md#links).
func typeAffinity(a, b string) float64 {
	if a > b {
		a, b = b, a
	}
	switch a + "|" + b {
	case "concept|entity", "concept|synthesis":
		return 1.2
	case "entity|source", "entity|synthesis", "concept|source", "concept|query",
		"source|synthesis", "query|synthesis":
		return 1.0
	case "entity|entity", "entity|query", "concept|concept", "query|source",
		"synthesis|synthesis":
		return 0.8
	}
	return 0.5
}

// pageNames returns the folded names under which links can reach a page:
// its file stem, title and aliases.
func pageNames(r *store.PageRec) []string {
	names := append([]string{store.Stem(r.Path), r.Title}, r.Aliases...)
	for i, n := range names {
		names[i] = store.Fold(n)
	}
	return names
}

func sameNames(a, b *store.PageRec) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := pageNames(a), pageNames(b)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return a.Path == b.Path
}

// LinkRecs converts parsed links into stored ones (unresolved), keeping
// only page links, exactly as the scanner stores them (write_page uses it
// for the index.md it generates).
func LinkRecs(ls []markdown.Link) []store.LinkRec {
	pl, _ := linkRecs(vault.IndexPage, ls)
	return pl
}

// linkRecs converts the parsed links of the page at srcPath into stored
// ones (unresolved): page links, and file links — those that can name
// only a file that is no page: an attachment ([[diagram.png]]) or an
// explicit path outside wiki/ (FileTarget). A file link never dangles; a
// page link dangles only when neither a page nor a file answers to its
// name. An explicit path outside wiki/ to a file synapse does not track
// (see IsAssetPath: another top-level file or folder) is not kept at all.
func linkRecs(srcPath string, ls []markdown.Link) (pages, files []store.LinkRec) {
	pages = make([]store.LinkRec, 0, len(ls))
	for _, l := range ls {
		k := LinkKey(l.Target)
		if k == "" {
			continue
		}
		rec := store.LinkRec{
			Target: l.Target, Key: k, Heading: l.Heading,
			Embed: l.Embed, Markdown: l.Kind == markdown.MarkdownLink, Line: l.Line,
		}
		switch ft := FileTarget(srcPath, l); {
		case ft != "":
			if trackedFile(ft) {
				files = append(files, rec)
			}
		case !l.IsPageLink():
			files = append(files, rec)
		default:
			pages = append(pages, rec)
		}
	}
	return pages, files
}

// FileTarget returns the vault path of the file a link in the page at
// srcPath names when that file lies outside wiki/, where no page can be:
// a raw source (`[[../../raw/sources/x.md|original]]`), an asset, a
// top-level file. The link's path is taken relative to the linking page
// when it is a markdown link or starts with "./" or "../", and relative to
// the vault when it starts with "raw/"; ".." never climbs above the vault
// (joinInVault: "../../raw/sources/x.md" written one folder too deep still
// names raw/sources/x.md). A wikilink without an extension names a .md
// file, as in Obsidian. "" for every other link. The rule is by path alone
// (no file is looked at), so it cannot change when files come and go;
// whether the file exists is the link's resolution (ResolveFileLink).
func FileTarget(srcPath string, l markdown.Link) string {
	return fileTarget(srcPath, l.Target, l.Kind == markdown.MarkdownLink)
}

// NamedFile is FileTarget for a stored link.
func NamedFile(srcPath string, l store.LinkRec) string {
	return fileTarget(srcPath, l.Target, l.Markdown)
}

func fileTarget(srcPath, target string, markdownLink bool) string {
	t := strings.TrimSpace(strings.ReplaceAll(target, "\\", "/"))
	if t == "" {
		return ""
	}
	p := ""
	if markdownLink || strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../") {
		p = joinInVault(path.Dir(srcPath), t)
		if isWikiPath(p) && strings.HasPrefix(t, ".") {
			return "" // an explicit relative path into wiki/: a page link
		}
	}
	if p == "" || isWikiPath(p) {
		if v := strings.TrimLeft(t, "/"); strings.HasPrefix(v, "raw/") {
			p = path.Clean(v)
		} else {
			return ""
		}
	}
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || isWikiPath(p) {
		return ""
	}
	if !markdownLink && path.Ext(p) == "" {
		p += ".md"
	}
	return p
}

// joinInVault joins a relative path to a vault folder as a URL path is
// resolved (RFC 3986): ".." at the vault root stays at the root, so the
// result never leaves the vault.
func joinInVault(dir, rel string) string {
	return strings.TrimPrefix(path.Join("/"+dir, rel), "/")
}

func isWikiPath(p string) bool { return p == vault.WikiDir || strings.HasPrefix(p, vault.WikiDir+"/") }

// sourceKeys returns the raw sources a page cites (docs/vault.md#sources), from its
// record: the files its frontmatter `sources` name, then those its links
// point into — an explicit path into raw/sources/ cites the file whether or
// not it exists (so a missing one is reported), a link that reached a file
// under raw/sources/ by name cites that file while it does.
func sourceKeys(rec *store.PageRec) []string {
	keys := markdown.CitedFiles(rec.Sources) // files only: never a URL, id, link or free text
	if rec.Reserved {
		return keys
	}
	add := func(k string) {
		if k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, l := range rec.Links {
		if l.File != "" && vault.IsSourcePath(l.File) {
			add(SourceKey(l.File))
		}
	}
	for _, l := range rec.FileLinks {
		if f := fileTarget(rec.Path, l.Target, l.Markdown); f != "" {
			if vault.IsSourcePath(f) {
				add(SourceKey(f))
			}
		} else if l.File != "" && vault.IsSourcePath(l.File) {
			add(SourceKey(l.File))
		}
	}
	return keys
}
