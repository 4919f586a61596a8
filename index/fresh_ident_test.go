package index

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/synapse-wiki/synapse/store"
)

// TestTrustWritten: the record of a file a write renamed into place is
// trusted while the file stats as it did right after the rename, and no
// longer once anyone changes it, even keeping its size and mtime: an
// in-place write (ctime moves), a rename-save of the same bytes (a new
// inode), a chmod; nor for another path or another record.
func TestTrustWritten(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("file identity is read on Linux only")
	}
	dir := t.TempDir()
	s, err := store.Open(filepath.Join(dir, "db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	abs := filepath.Join(dir, "index.md")
	data := []byte("# Index\n\nsome catalogue\n")
	put := func() store.FileRec {
		t.Helper()
		tmp := abs + ".tmp"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, abs); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(abs)
		if err != nil {
			t.Fatal(err)
		}
		f := store.FileRec{Kind: store.KindPage, Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano(), SHA256: sha256.Sum256(data)}
		if err := s.Update(func(tx *store.Tx) error { return RecordWritten(tx, "wiki/index.md", fi, f.SHA256) }); err != nil {
			t.Fatal(err)
		}
		return f
	}
	trusted := func(p string, f store.FileRec) (ok bool) {
		_ = s.View(func(tx *store.Tx) error { ok = trustWritten(tx, p, abs, &f); return nil })
		return ok
	}
	f := put()
	if !trusted("wiki/index.md", f) {
		t.Fatal("the file as written is not trusted")
	}
	if trusted("wiki/log.md", f) {
		t.Fatal("another path is trusted")
	}
	other := f
	other.SHA256[0] ^= 1
	if trusted("wiki/index.md", other) {
		t.Fatal("another record is trusted")
	}

	// an in-place edit keeping the size, its mtime put back
	mt := fi(t, abs).ModTime()
	if err := os.WriteFile(abs, []byte("# Index\n\nsome catalogUE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(abs, mt, mt); err != nil {
		t.Fatal(err)
	}
	if trusted("wiki/index.md", f) {
		t.Fatal("an in-place edit (same size and mtime) is trusted")
	}

	// a rename-save of the same bytes, its mtime put back
	f = put()
	mt = fi(t, abs).ModTime()
	if err := os.WriteFile(abs+".new", data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(abs+".new", mt, mt); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(abs+".new", abs); err != nil {
		t.Fatal(err)
	}
	if trusted("wiki/index.md", f) {
		t.Fatal("another file renamed into place is trusted")
	}

	// a chmod
	f = put()
	if err := os.Chmod(abs, 0o600); err != nil {
		t.Fatal(err)
	}
	if trusted("wiki/index.md", f) {
		t.Fatal("a chmod'ed file is trusted")
	}
}

func fi(t *testing.T, p string) os.FileInfo {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
