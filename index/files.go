package index

import (
	"strings"

	"github.com/synapse-wiki/synapse/vault"
)

// IsAssetPath reports whether a vault path is an asset: a file that is
// neither a page nor a raw source but that links may name — any file
// under raw/ outside raw/sources/ (raw/assets/ holds images and
// attachments), any file under wiki/ that is no page (an attachment
// beside its note), and the vault's schema.md and purpose.md. Paths with a
// hidden part are never assets. The scanner tracks assets by size and
// mtime only, never reading them, so that a link reaches an attachment by
// name as in Obsidian, and one naming a file that does not exist is
// reported (lint's broken file links). Other files of the vault (other
// top-level files and folders) are not tracked.
func IsAssetPath(rel string) bool {
	if rel == vault.SchemaFile || rel == vault.PurposeFile {
		return true
	}
	if vault.IsPagePath(rel) || vault.IsSourcePath(rel) {
		return false
	}
	if !strings.HasPrefix(rel, vault.WikiDir+"/") && !strings.HasPrefix(rel, "raw/") {
		return false
	}
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}

// rawDir is the folder of the raw sources and assets.
const rawDir = "raw"

// trackedFile reports whether a path outside wiki/ is one the scanner
// tracks (a raw source or an asset), so that a link naming it by path can
// be resolved; a link to anywhere else is not kept.
func trackedFile(p string) bool { return vault.IsSourcePath(p) || IsAssetPath(p) }
