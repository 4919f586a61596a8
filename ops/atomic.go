package ops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/synapse-wiki/synapse/vaultfs"
)

// fileSystem is every file-system step the write path takes. The real one
// is osFS; tests set one on the Env (Env.fsys) that fails (or "crashes")
// at a chosen step to prove that a write leaves the old file or the new
// one, never a mix, and no temporary file.
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
	// Layer is the vault's file layer the steps go through (mkdirDurable
	// asks it which folders exist).
	Layer() *vaultfs.FS
}

// tempFile is the part of *os.File the write path uses.
type tempFile interface {
	Name() string
	Write(p []byte) (int, error)
	Chmod(mode os.FileMode) error
	Sync() error
	Close() error
}

// osFS is the real file system of the write path: every step goes through
// the vault's confined file layer (package vaultfs), the absolute paths
// it is given mapped to the layer's vault paths. No step follows a
// symlink; a symlink, named pipe or other special file where a page,
// log.md or index.md goes is refused with a vaultfs.Refusal, never
// replaced or written through (fileError makes it forbidden). An Env's is
// Env.writeFS; tests set Env.fsys to one that fails at a chosen step.
type osFS struct{ l *vaultfs.FS }

// rel maps an absolute path inside the layer's vault to its vault path.
// The mapping is lexical: abs must be spelled under the root as the vault
// was opened (vault.Vault.Abs does).
func (o osFS) rel(abs string) (string, error) {
	r, err := filepath.Rel(o.l.Root(), filepath.Clean(abs))
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside the vault %s", abs, o.l.Root())
	}
	return filepath.ToSlash(r), nil
}

// Layer returns the vault's file layer.
func (o osFS) Layer() *vaultfs.FS { return o.l }

func (o osFS) CreateTemp(dir, pattern string) (tempFile, error) {
	rel, err := o.rel(dir)
	if err != nil {
		return nil, err
	}
	f, err := o.l.CreateTemp(rel, pattern)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (o osFS) Rename(oldpath, newpath string) error          { return o.rename(oldpath, newpath, false) }
func (o osFS) RenameNoReplace(oldpath, newpath string) error { return o.rename(oldpath, newpath, true) }

func (o osFS) rename(oldpath, newpath string, noReplace bool) error {
	from, err := o.rel(oldpath)
	if err != nil {
		return err
	}
	to, err := o.rel(newpath)
	if err != nil {
		return err
	}
	return o.l.Rename(from, to, noReplace)
}

func (o osFS) Remove(name string) error {
	rel, err := o.rel(name)
	if err != nil {
		return err
	}
	return o.l.Remove(rel)
}

func (o osFS) MkdirAll(dir string) error {
	rel, err := o.rel(dir)
	if err != nil {
		return err
	}
	_, err = o.l.MkdirAll(rel)
	return err
}

func (o osFS) SyncDir(dir string) error {
	rel, err := o.rel(dir)
	if err != nil {
		return err
	}
	return o.l.SyncDir(rel)
}

func (o osFS) OpenAppend(name string) (tempFile, error) {
	rel, err := o.rel(name)
	if err != nil {
		return nil, err
	}
	f, err := o.l.OpenAppend(rel)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// statVaultFile is os.Stat of an absolute path of the vault of l, through
// the layer: a symlink is followed only while it stays inside the vault;
// one that leads out is refused.
func statVaultFile(l *vaultfs.FS, abs string) (fs.FileInfo, error) {
	rel, err := osFS{l}.rel(abs)
	if err != nil {
		return nil, err
	}
	return l.Stat(rel)
}

// readVaultFile is os.ReadFile of a page of the vault of l, through the
// layer: a regular file inside the vault (never a named pipe, never
// through a symlink out), at most index.MaxPageBytes.
func readVaultFile(l *vaultfs.FS, abs string) ([]byte, error) {
	rel, err := osFS{l}.rel(abs)
	if err != nil {
		return nil, err
	}
	data, _, err := l.ReadFile(context.Background(), rel, index.MaxPageBytes)
	return data, err
}

// checkReservedWritable refuses a write_page before it changes anything
// when log.md or index.md, which the write appends to and regenerates, is
// a symlink, a named pipe or another special file (or a folder on the way
// to them is a symlink).
func checkReservedWritable(l *vaultfs.FS) error {
	for _, p := range []string{vault.LogPage, vault.IndexPage} {
		if err := l.CheckWrite(p); err != nil {
			return fileError(err, "cannot write pages: %v; replace it with a regular file (or remove it: synapse creates a new one)", err)
		}
	}
	return nil
}

// fileError is the error of a failed file step, formatted like
// errs.Wrap: forbidden when the file layer refused the file (a symlink, a
// named pipe, a path out of the vault: the message names it and says why)
// or the system denied permission, internal otherwise.
func fileError(err error, format string, args ...any) error {
	if _, ok := vaultfs.AsRefusal(err); ok || errors.Is(err, fs.ErrPermission) {
		return errs.Wrap(errs.Forbidden, err, format, args...)
	}
	return errs.Wrap(errs.Internal, err, format, args...)
}

// errExists reports that a file to be created already exists.
var errExists = fs.ErrExist

// writeAtomic writes data to the file abs, through fsys, so that a crash at any moment
// leaves either the previous file (or no file) or the complete new one:
// a temporary file in the same folder is written, fsynced and closed, then
// renamed over abs, and the folder is fsynced. With create set, an
// existing abs is never replaced: the write fails with errExists and
// nothing changes. The temporary file is removed on every failure.
func writeAtomic(fsys fileSystem, abs string, data []byte, perm os.FileMode, create bool) error {
	_, err := writeAtomicStat(fsys, abs, [][]byte{data}, perm, create)
	return err
}

// writeAtomicStat is writeAtomic of the pieces of data joined (written in
// turn, never copied into one buffer) that also returns abs stat'ed right
// after the rename, before the folder's fsync (nil when that stat failed):
// the identity index.RecordWritten remembers.
func writeAtomicStat(fsys fileSystem, abs string, data [][]byte, perm os.FileMode, create bool) (fs.FileInfo, error) {
	return writeAtomicHook(fsys, abs, data, perm, create, nil)
}

// writeAtomicHook is writeAtomicStat calling flushing, when set, as the
// temporary file's flush starts, and the function it returns before the
// file is renamed into place: the page history flushes the version being
// replaced meanwhile, and the rename waits for it. Started together, the
// two flushes are one commit of the file system's journal, where one
// started earlier would have its own commit and the other wait for the
// next.
func writeAtomicHook(fsys fileSystem, abs string, data [][]byte, perm os.FileMode, create bool, flushing func() (wait func())) (fi fs.FileInfo, err error) {
	dir, base := filepath.Split(abs)
	dir = filepath.Clean(dir)
	// a hidden name ending in .tmp: the scanner and the watcher skip it
	f, err := fsys.CreateTemp(dir, "."+truncateName(base)+".*.tmp")
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if !renamed {
			_ = f.Close() // a second Close is harmless
			_ = fsys.Remove(tmp)
		}
	}()
	for _, p := range data {
		if _, err := f.Write(p); err != nil {
			return nil, err
		}
	}
	if err := f.Chmod(perm); err != nil {
		return nil, err
	}
	wait := func() {}
	if flushing != nil {
		wait = flushing()
	}
	err = f.Sync()
	if err == nil {
		err = f.Close()
	}
	wait() // even on an error: the flush must not outlive the write
	if err != nil {
		return nil, err
	}
	if create {
		err = fsys.RenameNoReplace(tmp, abs)
	} else {
		err = fsys.Rename(tmp, abs)
	}
	if err != nil {
		return nil, err
	}
	renamed = true
	if st, err := os.Lstat(abs); err == nil {
		fi = st
	}
	return fi, fsys.SyncDir(dir)
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

// appendSyncing appends data to the existing file abs in one write and
// fsyncs it meanwhile: data is appended before it returns, and wait
// returns once it is on disk (the fsync's error, or the close's). An
// append is not atomic the way writeAtomic is: a crash in the middle can
// leave a torn last line, which is acceptable for the append-only log (the
// lines before it are never touched). A page write fsyncs
// log.md while it re-indexes the page, and waits before it answers.
func appendSyncing(fsys fileSystem, abs string, data []byte) (wait func() error, err error) {
	f, err := fsys.OpenAppend(abs)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	done := make(chan error, 1)
	go func() {
		err := f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	var once sync.Once
	var res error
	return func() error {
		once.Do(func() { res = <-done })
		return res
	}, nil
}

// mkdirDurable creates dir (and parents) and fsyncs the parent of every
// folder it created, so that a new page's folder survives a crash. No
// folder on the way may be a symlink (vaultfs refuses it).
func mkdirDurable(fsys fileSystem, dir string) error {
	l := fsys.Layer()
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		r, _ := filepath.Rel(l.Root(), d)
		if l.IsDir(filepath.ToSlash(r)) {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d || d == l.Root() {
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
