package ops

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// fileSystem is every file-system step the write path takes. The real one
// is osFS; tests swap in one that fails (or "crashes") at a chosen step to
// prove that a write leaves the old file or the new one, never a mix, and
// no temporary file.
type fileSystem interface {
	// CreateTemp creates a new temporary file in dir (os.CreateTemp).
	CreateTemp(dir, pattern string) (tempFile, error)
	// Rename atomically replaces newpath with oldpath.
	Rename(oldpath, newpath string) error
	// RenameNoReplace renames oldpath to newpath unless newpath exists, in
	// which case it fails with an error matching fs.ErrExist.
	RenameNoReplace(oldpath, newpath string) error
	// Remove removes a file.
	Remove(name string) error
	// MkdirAll creates dir and its missing parents.
	MkdirAll(dir string) error
	// SyncDir flushes a folder's entries (a rename or a new file in it) to
	// stable storage.
	SyncDir(dir string) error
	// OpenAppend opens an existing file for appending.
	OpenAppend(name string) (tempFile, error)
}

// tempFile is the part of *os.File the write path uses.
type tempFile interface {
	Name() string
	Write(p []byte) (int, error)
	Chmod(mode os.FileMode) error
	Sync() error
	Close() error
}

// fsys is the file system of the write path (swapped by tests).
var fsys fileSystem = osFS{}

type osFS struct{}

func (osFS) CreateTemp(dir, pattern string) (tempFile, error) { return os.CreateTemp(dir, pattern) }
func (osFS) Rename(oldpath, newpath string) error             { return os.Rename(oldpath, newpath) }
func (osFS) RenameNoReplace(oldpath, newpath string) error    { return renameNoReplace(oldpath, newpath) }
func (osFS) Remove(name string) error                         { return os.Remove(name) }
func (osFS) MkdirAll(dir string) error                        { return os.MkdirAll(dir, 0o755) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	// some file systems cannot fsync a folder; the rename is still atomic
	if errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	return err
}

func (osFS) OpenAppend(name string) (tempFile, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
}

// errExists reports that a file to be created already exists.
var errExists = fs.ErrExist

// writeAtomic writes data to the file abs so that a crash at any moment
// leaves either the previous file (or no file) or the complete new one:
// a temporary file in the same folder is written, fsynced and closed, then
// renamed over abs, and the folder is fsynced. With create set, an
// existing abs is never replaced: the write fails with errExists and
// nothing changes. The temporary file is removed on every failure.
func writeAtomic(abs string, data []byte, perm os.FileMode, create bool) (err error) {
	dir, base := filepath.Split(abs)
	dir = filepath.Clean(dir)
	// a hidden name ending in .tmp: the scanner and the watcher skip it
	f, err := fsys.CreateTemp(dir, "."+truncateName(base)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if !renamed {
			_ = f.Close() // a second Close is harmless
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if create {
		err = fsys.RenameNoReplace(tmp, abs)
	} else {
		err = fsys.Rename(tmp, abs)
	}
	if err != nil {
		return err
	}
	renamed = true
	return fsys.SyncDir(dir)
}

// truncateName keeps temporary file names within the 255-byte limit.
func truncateName(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	for i := max; i > 0; i-- {
		if s[i]&0xC0 != 0x80 { // a rune boundary
			return s[:i]
		}
	}
	return s[:max]
}

// appendDurable appends data to the existing file abs in one write and
// fsyncs it. An append is not atomic the way writeAtomic is: a crash in
// the middle can leave a torn last line, which is acceptable for the
// append-only log (the lines before it are never touched).
func appendDurable(abs string, data []byte) error {
	f, err := fsys.OpenAppend(abs)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// mkdirDurable creates dir (and parents) and fsyncs the parent of every
// folder it created, so that a new page's folder survives a crash.
func mkdirDurable(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return err
	}
	for _, d := range missing {
		if err := fsys.SyncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

// renameIfAbsent renames oldpath to newpath after checking that newpath
// does not exist; the portable fallback of renameNoReplace (a file created
// between the check and the rename would be replaced).
func renameIfAbsent(oldpath, newpath string) error {
	if _, err := os.Lstat(newpath); err == nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fs.ErrExist}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(oldpath, newpath)
}
