package store

import (
	"encoding/binary"
)

// FileKind tells what a tracked file is.
type FileKind uint8

// File kinds.
const (
	KindPage   FileKind = 1 // a *.md file under wiki/
	KindSource FileKind = 2 // any file under raw/sources/
	// KindAsset is any other file under raw/, and a file under wiki/
	// that is no page: tracked by size and mtime only (never read), so
	// that links reach it by name (index.IsAssetPath).
	KindAsset FileKind = 3
)

// FileRec is what the scanner remembers about a file so that it can skip
// an unchanged one without reading it.
type FileRec struct {
	Kind        FileKind
	Size        int64
	MtimeNS     int64    // modification time, Unix nanoseconds
	SHA256      [32]byte // of the content
	FirstSeen   int64    // Unix nanoseconds: when a scan first saw the file
	LastChanged int64    // Unix nanoseconds: the file's mtime when its hash last changed (so a reindex keeps it)
	Doc         uint32   // internal doc number (pages only)
	HashedNS    int64    // Unix nanoseconds: when the content was last read and hashed
}

// RacyWindow is how close to its mtime a file must have been hashed for
// (size, mtime) not to prove it unchanged: a second write within the
// file system's timestamp granularity can keep both. Such records are
// re-hashed by the next scan (the "racy git" rule).
const RacyWindow = 2 * 1e9

// Racy reports whether the record cannot vouch for the file by size and
// mtime alone.
func (f *FileRec) Racy() bool { return f.HashedNS-f.MtimeNS < RacyWindow }

func (f *FileRec) encode() []byte {
	b := make([]byte, 0, 64)
	b = append(b, byte(f.Kind))
	b = binary.AppendVarint(b, f.Size)
	b = binary.AppendVarint(b, f.MtimeNS)
	b = append(b, f.SHA256[:]...)
	b = binary.AppendVarint(b, f.FirstSeen)
	b = binary.AppendVarint(b, f.LastChanged)
	b = binary.AppendUvarint(b, uint64(f.Doc))
	b = binary.AppendVarint(b, f.HashedNS)
	return b
}

func decodeFileRec(v []byte) (FileRec, error) {
	var f FileRec
	if len(v) < 1 {
		return f, errCorrupt
	}
	f.Kind = FileKind(v[0])
	r := reader{b: v[1:]}
	f.Size = r.varint()
	f.MtimeNS = r.varint()
	copy(f.SHA256[:], r.bytes(32))
	f.FirstSeen = r.varint()
	f.LastChanged = r.varint()
	f.Doc = uint32(r.uvarint())
	f.HashedNS = r.varint()
	return f, r.err
}

// File returns the record of a vault-relative path.
func (tx *Tx) File(path string) (FileRec, bool, error) {
	v := tx.b(bFiles).Get([]byte(path))
	if v == nil {
		return FileRec{}, false, nil
	}
	f, err := decodeFileRec(v)
	return f, err == nil, err
}

// PutFile stores the record of a path.
func (tx *Tx) PutFile(path string, f FileRec) error {
	return tx.b(bFiles).Put([]byte(path), f.encode())
}

// DeleteFile forgets a path.
func (tx *Tx) DeleteFile(path string) error { return tx.b(bFiles).Delete([]byte(path)) }

// HasFiles reports whether any file is tracked.
func (tx *Tx) HasFiles() bool {
	k, _ := tx.b(bFiles).Cursor().First()
	return k != nil
}

// EachFile calls fn for every tracked file whose path starts with prefix,
// in path order. fn returning false stops the walk.
func (tx *Tx) EachFile(prefix string, fn func(path string, f FileRec) bool) error {
	c := tx.b(bFiles).Cursor()
	p := []byte(prefix)
	for k, v := c.Seek(p); k != nil && hasPrefixBytes(k, p); k, v = c.Next() {
		f, err := decodeFileRec(v)
		if err != nil {
			return err
		}
		if !fn(string(k), f) {
			return nil
		}
	}
	return nil
}
