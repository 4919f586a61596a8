package vault

import (
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Outside is what MarkdownOutsideWiki found: markdown files in the vault
// that are no page because they are not under wiki/.
type Outside struct {
	Count    int      `json:"count"`    // markdown files found (at least this many when Partial)
	Folders  []string `json:"folders"`  // the top-level folders holding them ("." for the vault's top), sorted
	Examples []string `json:"examples"` // up to three vault-relative paths
	Partial  bool     `json:"partial"`  // the walk stopped at its bound (a very large folder)
	// AttachmentFolders are the top-level folders outside wiki/ and raw/
	// that hold other files and no markdown (an Obsidian vault's
	// attachments/), sorted; Attachments counts their files. Links to
	// them (![[pic.png]]) reach them only once they are under wiki/ or
	// raw/.
	AttachmentFolders []string `json:"attachment_folders,omitempty"`
	Attachments       int      `json:"attachments,omitempty"`
}

// repoDocs are top-level files a repository or an agent keeps beside a
// wiki, never notes: README.md, AGENTS.md (upper-cased names).
var repoDocs = map[string]bool{
	"README.MD": true, "CHANGELOG.MD": true, "LICENSE.MD": true, "CONTRIBUTING.MD": true,
	"AGENTS.MD": true, "CLAUDE.MD": true, "GEMINI.MD": true,
}

// maxOutsideEntries bounds the walk: init in a home folder must not read
// the whole disk to give a hint.
const maxOutsideEntries = 20000

// MarkdownOutsideWiki finds the *.md files of the vault outside wiki/ (an
// existing Obsidian vault's notes at the top, say): synapse indexes only
// wiki/, so init says how to use them. It skips raw/ (inputs), .synapse/,
// hidden folders (.obsidian/, .git/, .trash/), node_modules/, the files
// init writes (schema.md, purpose.md) and a repository's README.md and
// the like (repoDocs), and follows no symlink. It reads
// folder entries only, never a file.
func MarkdownOutsideWiki(root string) Outside {
	var out Outside
	folders := map[string]bool{}
	others := map[string]int{} // top-level folder → files that are not markdown
	out.Partial = !walkOutside(root, func(rel string) bool {
		if !strings.EqualFold(path.Ext(rel), ".md") {
			if top, _, ok := strings.Cut(rel, "/"); ok {
				others[top]++
			}
			return true
		}
		if rel == SchemaFile || rel == PurposeFile || repoDocs[strings.ToUpper(rel)] {
			return true
		}
		out.Count++
		if len(out.Examples) < 3 {
			out.Examples = append(out.Examples, rel)
		}
		top := "."
		if i := strings.IndexByte(rel, '/'); i >= 0 {
			top = rel[:i]
		}
		folders[top] = true
		return true
	})
	for f := range folders {
		out.Folders = append(out.Folders, f)
	}
	sort.Strings(out.Folders)
	for f, n := range others {
		if !folders[f] {
			out.AttachmentFolders = append(out.AttachmentFolders, f)
			out.Attachments += n
		}
	}
	sort.Strings(out.AttachmentFolders)
	return out
}

// FilesOutside finds, for each wanted file name (compared
// case-insensitively, as Obsidian matches an attachment's name), a file of
// that name in the vault outside wiki/ and raw/, where synapse does not
// look: an Obsidian vault's attachments/ folder left at the top when its
// notes moved into wiki/. It walks as MarkdownOutsideWiki does (the same
// folders skipped, the same bound, no symlink followed, no file read) and
// returns the first path found per name, in walk order, keyed by the
// lower-cased name.
func FilesOutside(root string, names []string) map[string]string {
	found := map[string]string{}
	want := map[string]bool{}
	for _, n := range names {
		want[strings.ToLower(n)] = true
	}
	if len(want) == 0 {
		return found
	}
	walkOutside(root, func(rel string) bool {
		if k := strings.ToLower(path.Base(rel)); want[k] && found[k] == "" {
			found[k] = rel
		}
		return len(found) < len(want)
	})
	return found
}

// walkOutside calls file with the vault-relative path of each regular
// file of the vault outside wiki/, raw/ and .synapse/, hidden folders and
// node_modules/, following no symlink and reading no file, until file
// returns false. It reports false when it stopped at its bound
// (maxOutsideEntries) rather than at the end or at file's word.
func walkOutside(root string, file func(rel string) bool) bool {
	seen, bounded := 0, false
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != root {
				return fs.SkipDir
			}
			return nil
		}
		if seen++; seen > maxOutsideEntries {
			bounded = true
			return fs.SkipAll
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (rel == WikiDir || rel == "raw" || rel == StateDir || strings.HasPrefix(name, ".") || name == "node_modules") {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !file(rel) {
			return fs.SkipAll
		}
		return nil
	})
	return !bounded
}
