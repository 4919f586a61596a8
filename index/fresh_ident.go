package index

import (
	"encoding/binary"
	"io/fs"
	"os"

	"github.com/synapse-wiki/synapse/store"
)

// metaWrittenIdent is the store's meta key for the identity of the file a
// write just renamed into place (index.md): WrittenIdent.
const metaWrittenIdent = "fresh_written"

// A file synapse writes and records in the same command (index.md, 6.9 MB
// at 100k pages) is hashed within RacyWindow of its mtime, so the next
// check cannot trust its size and mtime: a hand edit in the same mtime
// tick keeps both. Re-reading and re-hashing it costs the next write
// ~8 ms. The write knows the bytes it renamed into place, so it records,
// with the file's record, the identity it stat'ed right after the rename:
// inode, device, ctime, size and mtime (RecordWritten). The next check
// trusts the record without hashing when the file stats the same
// (TrustWritten), because every change to the file after that stat moves
// one of them:
//   - a writer that saves by rename (editors, synapse itself) puts a new
//     inode in place (ours still exists when the new file is created, so
//     its number cannot be reused), with a new ctime;
//   - an in-place write, truncate, chmod or utimes changes the ctime, which
//     no program can set; ctime needs sub-second precision (a whole-second
//     ctime is not trusted: the file is hashed as before), and since Linux
//     6.13 (multigrain timestamps on ext4, XFS, Btrfs, tmpfs) a ctime that
//     was queried — our stat — makes the next change take a fine-grained,
//     strictly later timestamp.
//
// What this cannot see, all keeping the size and within one timestamp
// tick of the rename (a jiffy, 1–10 ms): an in-place edit made between the
// rename and the stat (microseconds), or on a kernel without multigrain
// timestamps after it; a save that deletes the file and creates another
// that happens to get the freed inode number. `synapse source rescan`
// re-hashes everything. Device numbers that change across a reboot or a
// copy elsewhere only make the file hashed again.
type WrittenIdent struct {
	Path                   string
	Dev, Ino               uint64
	CtimeNS, Size, MtimeNS int64
	SHA256                 [32]byte
}

func (w *WrittenIdent) encode() []byte {
	b := binary.AppendUvarint(nil, uint64(len(w.Path)))
	b = append(b, w.Path...)
	b = binary.AppendUvarint(b, w.Dev)
	b = binary.AppendUvarint(b, w.Ino)
	b = binary.AppendVarint(b, w.CtimeNS)
	b = binary.AppendVarint(b, w.Size)
	b = binary.AppendVarint(b, w.MtimeNS)
	return append(b, w.SHA256[:]...)
}

func decodeWritten(b []byte) (w WrittenIdent, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return w, false
	}
	w.Path, b = string(b[k:k+int(n)]), b[k+int(n):]
	u := func(p *uint64) bool {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return false
		}
		*p, b = v, b[k:]
		return true
	}
	s := func(p *int64) bool {
		v, k := binary.Varint(b)
		if k <= 0 {
			return false
		}
		*p, b = v, b[k:]
		return true
	}
	if !u(&w.Dev) || !u(&w.Ino) || !s(&w.CtimeNS) || !s(&w.Size) || !s(&w.MtimeNS) || len(b) != 32 {
		return w, false
	}
	copy(w.SHA256[:], b)
	return w, true
}

// RecordWritten, in the transaction that stores the record of vault path
// p (size, mtime and sum of the bytes just renamed into place at abs),
// remembers the identity fi (stat'ed right after the rename) so the next
// check can trust the record without hashing (see WrittenIdent). With fi
// nil, or an identity the platform does not give, it forgets any.
func RecordWritten(tx *store.Tx, p string, fi fs.FileInfo, sum [32]byte) error {
	if fi != nil {
		if dev, ino, ctime, ok := fileIdent(fi); ok && ctime%1e9 != 0 {
			w := WrittenIdent{Path: p, Dev: dev, Ino: ino, CtimeNS: ctime, Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano(), SHA256: sum}
			return tx.SetMeta(metaWrittenIdent, w.encode())
		}
	}
	if tx.Meta(metaWrittenIdent) == nil {
		return nil
	}
	return tx.DeleteMeta(metaWrittenIdent)
}

// trustWritten reports whether the racy record f of vault path p (abs on
// disk) is the file a write recorded and still stats as it did then.
func trustWritten(tx *store.Tx, p, abs string, f *store.FileRec) bool {
	w, ok := decodeWritten(tx.Meta(metaWrittenIdent))
	if !ok || w.Path != p || w.Size != f.Size || w.MtimeNS != f.MtimeNS || w.SHA256 != f.SHA256 {
		return false
	}
	fi, err := os.Lstat(abs)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != w.Size || fi.ModTime().UnixNano() != w.MtimeNS {
		return false
	}
	dev, ino, ctime, ok := fileIdent(fi)
	return ok && dev == w.Dev && ino == w.Ino && ctime == w.CtimeNS
}
