package vaultfs

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// chunk is how much a cancellable read takes at a time: a cancelled
// context stops a read or a hash within one chunk.
const chunk = 1 << 20

// initialRead bounds the buffer a whole-file read starts with (it grows
// past it as the file is read): a huge limit never allocates up front.
const initialRead = 64 << 20

// Reader reads the files of one vault through one open os.Root, confined
// to the vault or to one folder of it (ReaderUnder). A scan uses one for
// all its reads; Close it when done. It is safe for concurrent use.
type Reader struct {
	fs    *FS
	root  *os.Root
	base  string   // "" for the vault root, else the folder the root is on
	dir   *os.File // the root's folder, for the Linux fast path (nil without)
	dirfd int
}

// Reader opens a reader confined to the vault.
func (f *FS) Reader() (*Reader, error) {
	root, err := os.OpenRoot(f.root)
	if err != nil {
		return nil, err
	}
	return f.newReader(root, ""), nil
}

// ReaderUnder opens a reader confined to the folder dir of the vault (for
// raw/sources/: a symlink in it that leads elsewhere, even elsewhere in
// the vault, is refused). dir itself may be a symlink that stays inside
// the vault.
func (f *FS) ReaderUnder(dir string) (*Reader, error) {
	dir, err := clean(dir)
	if err != nil {
		return nil, err
	}
	vroot, err := os.OpenRoot(f.root)
	if err != nil {
		return nil, err
	}
	defer vroot.Close()
	root, err := vroot.OpenRoot(filepath.FromSlash(dir))
	if err != nil {
		return nil, openError(dir, "", err)
	}
	return f.newReader(root, dir), nil
}

func (f *FS) newReader(root *os.Root, base string) *Reader {
	r := &Reader{fs: f, root: root, base: base}
	r.dir, r.dirfd = rootFD(root)
	return r
}

// privateFiles returns the store and the token as they are now (stat'ed
// on every check: an identity remembered could be a dead file's, whose
// inode a page has since been given, or miss a token just created).
func (f *FS) privateFiles() []fs.FileInfo {
	var priv []fs.FileInfo
	for _, p := range []string{dbFile, tokenFile} {
		if st, err := os.Stat(f.Abs(p)); err == nil {
			priv = append(priv, st)
		}
	}
	return priv
}

// shared is the reader FS.Open, ReadFile and Stat use: one os.Root on
// the vault, opened on first use and kept (an os.Root is safe for
// concurrent use), so a read costs no open of the vault folder. A vault
// folder removed and made again at the same path (a fresh clone, a
// restore) is noticed by its identity and opened again; the reader of the
// old one is left to the garbage collector, as calls in flight may hold it.
func (f *FS) shared() (*Reader, error) {
	st, err := os.Stat(f.root)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sharedR == nil || !os.SameFile(st, f.sharedSt) {
		root, err := os.OpenRoot(f.root)
		if err != nil {
			return nil, err
		}
		r := f.newReader(root, "")
		f.sharedR, f.sharedSt = r, st
		if r.dir != nil {
			if ds, err := r.dir.Stat(); err == nil {
				f.sharedSt = ds // what was opened, should the path have moved meanwhile
			}
		}
	}
	return f.sharedR, nil
}

// Close releases the reader's root.
func (r *Reader) Close() error {
	if r.dir != nil {
		r.dir.Close()
	}
	return r.root.Close()
}

// Base returns the folder the reader is confined to ("" for the vault).
func (r *Reader) Base() string { return r.base }

// inRoot checks a vault-relative path and returns it relative to the
// reader's root, in OS form.
func (r *Reader) inRoot(p string) (string, string, error) {
	c, err := clean(p)
	if err != nil {
		return "", "", err
	}
	if c == stateDir || strings.HasPrefix(c, stateDir+"/") {
		return "", "", refuse(c, Private, "synapse's private state; it is never read")
	}
	if r.base == "" {
		return c, filepath.FromSlash(c), nil
	}
	if c == r.base {
		return c, ".", nil
	}
	if !strings.HasPrefix(c, r.base+"/") {
		return "", "", refuse(c, Outside, "outside %s/", r.base)
	}
	return c, filepath.FromSlash(c[len(r.base)+1:]), nil
}

// where names what a read is confined to, for refusals.
func (r *Reader) where() string {
	if r.base == "" {
		return "the vault"
	}
	return r.base + "/"
}

// openError maps an os.Root failure on p to a refusal, or to a path error
// matching fs.ErrNotExist or fs.ErrPermission.
func openError(p, where string, err error) error {
	if where == "" {
		where = "the vault"
	}
	switch {
	case isEscape(err):
		return refuse(p, Outside, "a symlink (or leads through one) that points outside %s; synapse never reads or writes outside it through a symlink", where)
	case errors.Is(err, syscall.ELOOP):
		return refuse(p, Loop, "a symlink loop (too many levels of symlinks)")
	case errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.EOPNOTSUPP):
		return refuse(p, NotRegular, "a socket or device, not a regular file; synapse opens only regular files")
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	case errors.Is(err, fs.ErrPermission):
		return &fs.PathError{Op: "open", Path: p, Err: fs.ErrPermission}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: p, Err: pe.Err}
	}
	return err
}

// Stat returns the file p leads to (symlinks inside the reader's root
// followed; one out refused).
func (r *Reader) Stat(p string) (fs.FileInfo, error) {
	c, in, err := r.inRoot(p)
	if err != nil {
		return nil, err
	}
	if st, ok, err := r.statFast(c, in); ok {
		return st, err
	}
	st, err := r.root.Stat(in)
	if err != nil {
		return nil, openError(c, r.where(), err)
	}
	return st, nil
}

// Lstat returns the file p names itself (a symlink is not followed, but
// the folders on the way are resolved inside the root).
func (r *Reader) Lstat(p string) (fs.FileInfo, error) {
	c, in, err := r.inRoot(p)
	if err != nil {
		return nil, err
	}
	st, err := r.root.Lstat(in)
	if err != nil {
		return nil, openError(c, r.where(), err)
	}
	return st, nil
}

// Open opens the regular file p for reading. A special file is refused
// after a stat, without being opened; the open is non-blocking and its
// result checked again, so a file swapped in meanwhile is never waited on.
// A folder is an error matching ErrIsDir.
func (r *Reader) Open(p string) (*os.File, fs.FileInfo, error) {
	c, in, err := r.inRoot(p)
	if err != nil {
		return nil, nil, err
	}
	if f, st, ok, err := r.openFast(c, in); ok {
		return f, st, err
	}
	st, err := r.root.Stat(in)
	if err != nil {
		return nil, nil, openError(c, r.where(), err)
	}
	if err := r.check(c, st); err != nil {
		return nil, nil, err
	}
	f, err := r.root.OpenFile(in, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, nil, openError(c, r.where(), err)
	}
	st, err = f.Stat()
	if err == nil {
		err = r.check(c, st)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// ErrIsDir is returned (wrapped in a path error) for a folder where a file
// was expected.
var ErrIsDir = errors.New("is a folder, not a file")

// check refuses anything but a regular file that is not private.
func (r *Reader) check(p string, st fs.FileInfo) error {
	if st.IsDir() {
		return &fs.PathError{Op: "open", Path: p, Err: ErrIsDir}
	}
	if !st.Mode().IsRegular() {
		return notRegular(p, st.Mode())
	}
	for _, pi := range r.fs.privateFiles() {
		if sameFile(st, pi) {
			return refuse(p, Private, "synapse's private %s (through a link); it is never read", filepath.Base(pi.Name()))
		}
	}
	return nil
}

// ReadFile reads the regular file p whole, stopping when ctx is cancelled.
// A file larger than limit bytes is refused (TooLarge) without reading
// past the limit.
func (r *Reader) ReadFile(ctx context.Context, p string, limit int64) ([]byte, fs.FileInfo, error) {
	if c, in, err := r.inRoot(p); err != nil {
		return nil, nil, err
	} else if data, st, ok, err := r.readFast(ctx, c, in, limit); ok {
		return data, st, err
	}
	f, st, err := r.Open(p)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, nil, refuse(p, TooLarge, "%d bytes; the limit is %d", st.Size(), limit)
	}
	data, err := ReadUpTo(ctx, f, make([]byte, 0, min(st.Size()+1, initialRead)), limit+1)
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) > limit {
		return nil, nil, refuse(p, TooLarge, "more than %d bytes (it grew while read)", limit)
	}
	return data, st, nil
}

// ReadUpTo appends up to n bytes of rd to buf, a chunk at a time, and
// stops early with ctx's error when ctx is cancelled.
func ReadUpTo(ctx context.Context, rd io.Reader, buf []byte, n int64) ([]byte, error) {
	for int64(len(buf)) < n {
		if err := ctx.Err(); err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		end := min(int64(cap(buf)), n, int64(len(buf))+chunk)
		m, err := rd.Read(buf[len(buf):end])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

var hashBufs = sync.Pool{New: func() any { b := make([]byte, chunk); return &b }}

// Hash returns the SHA-256 and the length of what remains of rd after the
// prefix already read (hashed first), a chunk at a time, stopping with
// ctx's error when ctx is cancelled.
func Hash(ctx context.Context, prefix []byte, rd io.Reader) ([32]byte, int64, error) {
	h := sha256.New()
	h.Write(prefix)
	n := int64(len(prefix))
	// the chunk buffer is reused: a scan hashes every source, and a fresh
	// 1 MiB buffer per file was half of what a reindex allocated
	bp := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(bp)
	buf := *bp
	for {
		if err := ctx.Err(); err != nil {
			return [32]byte{}, n, err
		}
		m, err := io.ReadFull(rd, buf)
		h.Write(buf[:m])
		n += int64(m)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return [32]byte{}, n, err
		}
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, n, nil
}

// Open opens the regular file p of the vault for reading (see
// Reader.Open).
func (f *FS) Open(p string) (*os.File, fs.FileInfo, error) {
	r, err := f.shared()
	if err != nil {
		return nil, nil, err
	}
	return r.Open(p)
}

// ReadFile reads the regular file p of the vault (see Reader.ReadFile).
func (f *FS) ReadFile(ctx context.Context, p string, limit int64) ([]byte, fs.FileInfo, error) {
	r, err := f.shared()
	if err != nil {
		return nil, nil, err
	}
	return r.ReadFile(ctx, p, limit)
}

// Stat returns what p of the vault leads to (see Reader.Stat).
func (f *FS) Stat(p string) (fs.FileInfo, error) {
	r, err := f.shared()
	if err != nil {
		return nil, err
	}
	return r.Stat(p)
}
