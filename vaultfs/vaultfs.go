// Package vaultfs is the one way synapse touches the files of a vault
// (docs/vault.md#the-file-layer): every read and write of a page, wiki/log.md, wiki/index.md,
// purpose.md, schema.md and the sources, and the scanner's walk, go
// through an FS. A vault arrives by git clone or a sync tool, so what is in
// it — symlinks, named pipes, sockets, devices — is untrusted input.
//
// The rules:
//
//   - Paths are vault-relative, with forward slashes. An empty path, an
//     absolute one, a ".." element or a NUL byte is refused before anything
//     is opened.
//   - Reads (Open, ReadFile, Stat, Walk) resolve the path with an os.Root on
//     the vault: a symlink is followed only while it stays inside the vault
//     (the Under variants: inside one folder, e.g. raw/sources/); one that
//     leads out is refused.
//   - Only regular files are opened. A named pipe, socket or device is
//     refused after a stat, without being opened; the open itself is
//     non-blocking and the opened file is checked again, so one swapped in
//     meanwhile is never waited on either.
//   - The store and the token in .synapse/ are never read, whatever the
//     path leading to them (a symlink inside the vault, a hard link).
//   - Writes (CreateTemp, Rename, OpenAppend, MkdirAll, Remove, SyncDir)
//     follow no symlink at all: every folder on the path is opened from
//     the vault root with O_NOFOLLOW, and a final name that is a symlink,
//     or anything but a regular file, is refused, never replaced.
//
// Every refusal is a *Refusal naming the path and the reason
// (errors.Is(err, ErrRefused)); a missing file is an error matching
// fs.ErrNotExist, a permission problem one matching fs.ErrPermission.
// Nothing here blocks on anything but the disk, and the reads that can be
// long (ReadFile, Hash) stop when their context is cancelled.
package vaultfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// Names of the vault's private files, relative to the vault root.
const (
	stateDir  = ".synapse"
	dbFile    = ".synapse/synapse.db"
	tokenFile = ".synapse/token"
)

// ErrRefused is matched (errors.Is) by every *Refusal.
var ErrRefused = errors.New("refused by the vault file layer")

// Reason classifies a refusal.
type Reason string

// The reasons of a refusal.
const (
	// NotRegular: a named pipe, socket or device (or another special file).
	NotRegular Reason = "not_regular"
	// Outside: a symlink (the file itself or a folder on the way) that
	// leads outside the vault, or outside the folder the read is confined to.
	Outside Reason = "outside"
	// Symlink: a write would go through a symlink or replace one.
	Symlink Reason = "symlink"
	// Private: the store or the token.
	Private Reason = "private"
	// Loop: too many levels of symlinks.
	Loop Reason = "loop"
	// BadPath: the path itself is malformed (absolute, "..", NUL).
	BadPath Reason = "bad_path"
	// TooLarge: larger than the limit the caller gave.
	TooLarge Reason = "too_large"
	// Unreadable: a folder or file the walk cannot read (permissions).
	Unreadable Reason = "unreadable"
)

// Refusal is the error for a file the layer will not touch. Its message
// names the path and says why; it never holds a byte of any file, nor the
// target of a symlink.
type Refusal struct {
	Path   string // vault-relative, forward slashes
	Reason Reason
	Detail string // "a named pipe", "a symlink that leads outside raw/sources/", …
}

func (r *Refusal) Error() string { return r.Path + " is " + r.Detail }

// Is makes errors.Is(err, ErrRefused) true for every refusal.
func (r *Refusal) Is(target error) bool { return target == ErrRefused }

// AsRefusal returns the refusal in err's chain, if any.
func AsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	ok := errors.As(err, &r)
	return r, ok
}

func refuse(p string, reason Reason, format string, args ...any) *Refusal {
	return &Refusal{Path: p, Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// FS is the file layer of one vault: the zero value is not usable (see
// New). It keeps one open os.Root on the vault for its reads.
type FS struct {
	root string // absolute, clean

	mu       sync.Mutex
	sharedR  *Reader     // see shared
	sharedSt fs.FileInfo // the vault folder sharedR is on
}

// New returns the file layer of the vault rooted at root (an absolute,
// clean path, as vault.Vault.Root). Its owner keeps it and passes it to
// what reads and writes the vault's files (vault.Vault.Files): nothing
// finds a layer by path. Two layers on one vault may coexist, in one
// process or two: a layer holds no lock and no state but its reader's
// open os.Root (see shared); every write opens its folders from the vault
// root again.
func New(root string) *FS { return &FS{root: filepath.Clean(root)} }

// Root returns the vault's absolute root.
func (f *FS) Root() string { return f.root }

// Abs returns the absolute OS path of a vault-relative path (for messages
// and for file names that os.File reports).
func (f *FS) Abs(rel string) string { return filepath.Join(f.root, filepath.FromSlash(rel)) }

// clean checks a vault-relative path lexically and returns it clean.
func clean(p string) (string, error) {
	switch {
	case p == "" || p == ".":
		return "", refuse(p, BadPath, "not a file path")
	case strings.IndexByte(p, 0) >= 0:
		return "", refuse(strings.ReplaceAll(p, "\x00", `\0`), BadPath, "a path with a NUL byte")
	case strings.HasPrefix(p, "/") || filepath.IsAbs(filepath.FromSlash(p)) || strings.IndexByte(p, '\\') >= 0:
		return "", refuse(p, BadPath, "not a vault-relative path")
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return "", refuse(p, BadPath, `a path with ".."`)
		}
	}
	c := path.Clean(p)
	if c == "." {
		return "", refuse(p, BadPath, "not a file path")
	}
	return c, nil
}

// cleanWrite is clean for a path to write: nothing under .synapse/.
func cleanWrite(p string) (string, error) {
	c, err := clean(p)
	if err != nil {
		return "", err
	}
	if c == stateDir || strings.HasPrefix(c, stateDir+"/") {
		return "", refuse(c, Private, "synapse's private state; it is never written through the file layer")
	}
	return c, nil
}

// kindOf names a special file's type.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a folder"
	}
	return "a special file"
}

// notRegular is the refusal of a special file.
func notRegular(p string, m fs.FileMode) *Refusal {
	return refuse(p, NotRegular, "%s, not a regular file; synapse opens only regular files", kindOf(m))
}

// isEscape reports os.Root's refusal of a path that leaves the root.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes")
}
