//go:build !unix

package vaultfs

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
)

// openNoBlock: systems without named pipes in the file system.
const openNoBlock = 0

// noLinks checks that no element of rel is a symlink (a check, then the
// operation: the portable fallback of the descriptor-based unix version).
func (f *FS) noLinks(rel string, last bool) error {
	if rel == "" || rel == "." {
		return nil
	}
	c, err := cleanWrite(rel)
	if err != nil {
		return err
	}
	parts := strings.Split(c, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		st, err := os.Lstat(f.Abs(sub))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return refuse(sub, Symlink, "a symlink; synapse never writes through a symlink or replaces one")
		}
		if i == len(parts)-1 && last && !st.Mode().IsRegular() {
			return notRegular(sub, st.Mode())
		}
	}
	return nil
}

// CreateTemp creates a new file in the folder dir of the vault.
func (f *FS) CreateTemp(dir, pattern string) (*os.File, error) {
	if err := f.noLinks(dir, false); err != nil {
		return nil, err
	}
	return os.CreateTemp(f.Abs(dir), pattern)
}

// Rename renames oldRel to newRel, refusing to replace a symlink or a
// special file.
func (f *FS) Rename(oldRel, newRel string, noReplace bool) error {
	if err := f.noLinks(oldRel, true); err != nil {
		return err
	}
	if err := f.noLinks(newRel, true); err != nil {
		return err
	}
	if noReplace {
		if _, err := os.Lstat(f.Abs(newRel)); err == nil {
			return &os.LinkError{Op: "rename", Old: oldRel, New: newRel, Err: fs.ErrExist}
		}
	}
	return os.Rename(f.Abs(oldRel), f.Abs(newRel))
}

// Remove removes the file rel.
func (f *FS) Remove(rel string) error {
	d, _ := path.Split(rel)
	if err := f.noLinks(strings.TrimSuffix(d, "/"), false); err != nil {
		return err
	}
	return os.Remove(f.Abs(rel))
}

// MkdirAll creates the folder rel and its missing parents.
func (f *FS) MkdirAll(rel string) ([]string, error) {
	if err := f.noLinks(rel, false); err != nil {
		return nil, err
	}
	var made []string
	c, err := clean(rel)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(c, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		if err := os.Mkdir(f.Abs(sub), 0o755); err == nil {
			made = append(made, sub)
		} else if !errors.Is(err, fs.ErrExist) {
			return made, err
		}
	}
	return made, nil
}

// IsDir reports whether rel is a real folder.
func (f *FS) IsDir(rel string) bool {
	if f.noLinks(rel, false) != nil {
		return false
	}
	st, err := os.Lstat(f.Abs(rel))
	return err == nil && st.IsDir()
}

// CheckWrite reports whether rel could be written now.
func (f *FS) CheckWrite(rel string) error { return f.noLinks(rel, true) }

// SyncDir is a no-op where folders cannot be fsynced.
func (f *FS) SyncDir(rel string) error { return f.noLinks(rel, false) }

// OpenAppend opens the existing regular file rel for appending.
func (f *FS) OpenAppend(rel string) (*os.File, error) {
	if err := f.noLinks(rel, true); err != nil {
		return nil, err
	}
	return os.OpenFile(f.Abs(rel), os.O_WRONLY|os.O_APPEND, 0)
}

// CreateAppend creates the new file rel, opened for appending (an
// existing rel is an error matching fs.ErrExist).
func (f *FS) CreateAppend(rel string) (*os.File, error) {
	if err := f.noLinks(path.Dir(rel), false); err != nil {
		return nil, err
	}
	return os.OpenFile(f.Abs(rel), os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
}
