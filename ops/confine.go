package ops

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// Path confinement for read_source_file (docs/vault.md#the-file-layer).
//
// A source path is accepted in one of three spellings, all naming a file
// under raw/sources/:
//
//	x.md                      relative to raw/sources/
//	raw/sources/x.md          relative to the vault root (the prefix is stripped once)
//	/abs/vault/raw/sources/x.md  absolute, lexically inside the vault's raw/sources/
//
// The rules, checked before any file is touched (each refusal is an
// *errs.Error that names the problem and carries no byte of any file;
// leading and trailing spaces were trimmed by Normalize):
//
//	empty, "." or the raw/sources/ folder itself        invalid
//	longer than MaxSourcePathBytes                       invalid
//	an element longer than 255 bytes (no such file)      invalid
//	a NUL byte, another control character, invalid UTF-8 invalid
//	a backslash (never a separator, never taken literally) invalid
//	a ".." element anywhere                              forbidden
//	an absolute path outside raw/sources/                forbidden
//	an element starting with "." (hidden, e.g. .git)     forbidden
//	an extension not on the text allow-list              invalid
//
// The remaining relative path is opened through the vault's file layer
// (vaultfs.ReaderUnder): raw/sources/ itself is opened inside the vault (a
// raw/sources/ that is a symlink out of the vault is refused), and the path
// is resolved confined to it (openat2 RESOLVE_BENEATH on Linux, else an
// os.Root): symlinks are followed, but one that resolves outside
// raw/sources/ (to a file or through a folder) is refused — forbidden. A
// missing file (or a path through a regular file) is not_found; a folder
// is invalid; anything but a regular file (fifo, socket, device) is
// forbidden, refused after a stat and never opened or blocked on.
// Finally the file is compared with the store and the token file (device
// and inode), so even a hard link cannot expose them.
//
// Percent-encoding is never decoded here: "%2e%2e%2f" is the literal file
// name "%2e%2e%2f" inside raw/sources/ (REST decodes a query string once,
// before the operation sees it).

// MaxSourcePathBytes bounds the length of a requested source path.
const MaxSourcePathBytes = 4096

// textExtensions are the file extensions read_source_file serves (lower
// case, with the dot). A file without an extension is served when its
// first bytes sniff as text.
var textExtensions = map[string]bool{}

func init() {
	for _, e := range strings.Fields(`
		.md .markdown .mdown .mkd .mdx .txt .text .rst .adoc .asciidoc .org .tex .bib .ris
		.csv .tsv .json .jsonl .ndjson .yaml .yml .toml .xml .html .htm .xhtml .svg .rss .atom
		.srt .vtt .sbv .log .ini .cfg .conf .properties .eml .mbox .vcf .ics
		.py .go .js .mjs .cjs .ts .tsx .jsx .c .h .cc .cpp .hpp .cs .java .kt .kts .scala .swift
		.rs .rb .php .pl .lua .r .jl .sh .bash .zsh .fish .ps1 .sql .css .scss .less .graphql
		.proto .ipynb .diff .patch .mk .cmake .gradle .el .clj .hs .ml
		.ex .exs .erl .dart .vue .svelte .nix .tf .hcl`) {
		textExtensions[e] = true
	}
}

// sourceRel validates a requested source path lexically and returns it
// relative to raw/sources/ (clean, forward slashes).
func sourceRel(v *vault.Vault, p string) (rel string, err error) {
	if p == "" {
		return "", errs.E(errs.Invalid, "path is required: a file under %s/, e.g. notes.md or %s/notes.md", vault.SourcesDir, vault.SourcesDir)
	}
	if len(p) > MaxSourcePathBytes {
		return "", errs.E(errs.Invalid, "path is %d bytes long; the limit is %d", len(p), MaxSourcePathBytes)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", errs.E(errs.Invalid, "path %q contains a NUL byte", p)
	}
	if !utf8.ValidString(p) {
		return "", errs.E(errs.Invalid, "path %q is not valid UTF-8", p)
	}
	if i := strings.IndexFunc(p, unicode.IsControl); i >= 0 {
		return "", errs.E(errs.Invalid, "path %q contains a control character", p)
	}
	if strings.IndexByte(p, '\\') >= 0 {
		return "", errs.E(errs.Invalid, "path %q contains a backslash; separate folders with forward slashes", p)
	}
	if err := checkNameLengths(p); err != nil {
		return "", err
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return "", errs.E(errs.Forbidden, "path %q contains \"..\"; name a file inside %s/, relative to it (notes.md) or from the vault root (%s/notes.md)", p, vault.SourcesDir, vault.SourcesDir)
		}
	}
	rest := p
	switch {
	case isAbsPath(rest):
		r, ok := underSources(v, rest)
		if !ok {
			return "", errs.E(errs.Forbidden, "absolute path %q is outside %s/; only files under %s can be read", p, vault.SourcesDir, v.Abs(vault.SourcesDir))
		}
		rest = r
	case rest == vault.SourcesDir || rest == vault.SourcesDir+"/":
		rest = "."
	case strings.HasPrefix(rest, vault.SourcesDir+"/"):
		rest = strings.TrimPrefix(rest, vault.SourcesDir+"/")
	}
	rel = path.Clean(strings.TrimLeft(rest, "/"))
	if rel == "." || rel == "" {
		return "", errs.E(errs.Invalid, "path %q names the %s/ folder itself, not a file; `%s` lists the sources", p, vault.SourcesDir, errs.Cmd("source.list"))
	}
	for _, el := range strings.Split(rel, "/") {
		if strings.HasPrefix(el, ".") {
			return "", errs.E(errs.Forbidden, "path %q has a hidden element %q; hidden files and folders are not sources", p, el)
		}
	}
	if ext := strings.ToLower(path.Ext(rel)); ext != "" && !textExtensions[ext] {
		return "", errs.E(errs.Invalid, "%s/%s is not a text file (extension %s); only text files are served", vault.SourcesDir, rel, ext)
	}
	return rel, nil
}

// isAbsPath reports whether p is absolute on this OS or starts with a
// slash (a rooted path on Windows).
func isAbsPath(p string) bool {
	return strings.HasPrefix(p, "/") || filepath.IsAbs(filepath.FromSlash(p))
}

// underSources returns the part of an absolute path below the vault's
// raw/sources/ folder (as spelled, or with symlinks in the vault's own
// location resolved), or false when it lies elsewhere.
func underSources(v *vault.Vault, abs string) (string, bool) {
	abs = filepath.ToSlash(filepath.Clean(filepath.FromSlash(abs)))
	roots := []string{filepath.ToSlash(v.Abs(vault.SourcesDir))}
	if real, err := filepath.EvalSymlinks(v.Abs(vault.SourcesDir)); err == nil {
		roots = append(roots, filepath.ToSlash(real))
	}
	for _, r := range roots {
		if abs == r {
			return ".", true
		}
		if strings.HasPrefix(abs, r+"/") {
			return abs[len(r)+1:], true
		}
	}
	return "", false
}

// openSource opens rel (from sourceRel) inside raw/sources/ through the
// vault's file layer (an os.Root on raw/sources/, itself opened inside the
// vault) and returns the open regular file and its info.
func openSource(v *vault.Vault, rel string) (*os.File, fs.FileInfo, error) {
	display := vault.SourcesDir + "/" + rel
	r, err := v.Files().ReaderUnder(vault.SourcesDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, errs.E(errs.NotFound, "the vault has no %s/ folder", vault.SourcesDir)
		}
		if _, ok := vaultfs.AsRefusal(err); ok {
			return nil, nil, errs.Wrap(errs.Forbidden, err, "%s/ cannot be read: %v", vault.SourcesDir, err)
		}
		return nil, nil, errs.Wrap(errs.Internal, err, "open %s/: %v", vault.SourcesDir, err)
	}
	defer r.Close()
	f, info, err := r.Open(display)
	if err != nil {
		return nil, nil, openError(display, err)
	}
	return f, info, nil
}

// checkNameLengths refuses a path with a file or folder name longer than
// a file system holds (invalid, naming the length, not the path).
func checkNameLengths(p string) error {
	for _, el := range strings.Split(p, "/") {
		if len(el) > maxNameBytes {
			return errs.E(errs.Invalid, "path has a name %d bytes long (%.40q…); a file or folder name is at most %d bytes", len(el), el, maxNameBytes)
		}
	}
	return nil
}

// openError maps a refusal or failure of the file layer to an error naming
// the problem (never the target of a symlink, never file content).
func openError(display string, err error) error {
	if rf, ok := vaultfs.AsRefusal(err); ok {
		switch rf.Reason {
		case vaultfs.Outside:
			return errs.Wrap(errs.Forbidden, err, "%s resolves outside %s/ (a symlink pointing out); only files inside it can be read", display, vault.SourcesDir)
		case vaultfs.Loop:
			return errs.Wrap(errs.Forbidden, err, "%s cannot be resolved: too many levels of symlinks", display)
		case vaultfs.NotRegular:
			return errs.Wrap(errs.Forbidden, err, "%s is %s", display, rf.Detail)
		case vaultfs.Private:
			return errs.Wrap(errs.Forbidden, err, "%s is synapse's private state; it is never served", display)
		}
		return errs.Wrap(errs.Forbidden, err, "%v", err)
	}
	switch {
	case errors.Is(err, vaultfs.ErrIsDir):
		return errs.E(errs.Invalid, "%s is a folder, not a file; `%s` lists the sources", display, errs.Cmd("source.list"))
	case errors.Is(err, fs.ErrNotExist):
		return errs.E(errs.NotFound, "no source file %s; `%s` lists the sources", display, errs.Cmd("source.list"))
	case errors.Is(err, fs.ErrPermission):
		return errs.E(errs.Forbidden, "%s cannot be read: permission denied", display)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is display, said once
	}
	return errs.Wrap(errs.Internal, err, "%s cannot be opened: %v", display, err)
}
