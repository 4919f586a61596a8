package hostile

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
)

// Damage is one way a store file gets damaged (a disk, a sync tool, a
// crash of something else, a hand): Apply does it to the bbolt file at
// path.
type Damage struct {
	Name  string
	What  string
	Apply func(path string) error
	// Lossy marks damage that destroys what the review queue could be read
	// back from (both meta pages, the root, the whole file): the queue is
	// then said to be lost, loudly.
	Lossy bool
}

// bbolt's layout: a 16-byte page header (id u64, flags u16, count u16,
// overflow u32), and in the two meta pages, after it: magic u32, version
// u32, page size u32, flags u32, root pgid u64 and sequence u64, freelist
// pgid u64, high-water pgid u64, txid u64, checksum u64.
const (
	pageSize   = 4096
	branchPage = 0x01
	leafPage   = 0x02
)

type meta struct{ root, freelist, pgid, txid uint64 }

// current reads the meta page with the highest txid (of those with
// bbolt's magic number).
func current(b []byte) (meta, bool) {
	var best meta
	ok := false
	for p := 0; p < 2 && (p+1)*pageSize <= len(b); p++ {
		m := b[p*pageSize+16:]
		if binary.LittleEndian.Uint32(m) != 0xED0CDAED {
			continue
		}
		x := meta{root: binary.LittleEndian.Uint64(m[16:]), freelist: binary.LittleEndian.Uint64(m[32:]),
			pgid: binary.LittleEndian.Uint64(m[40:]), txid: binary.LittleEndian.Uint64(m[48:])}
		if !ok || x.txid > best.txid {
			best, ok = x, true
		}
	}
	return best, ok
}

// used is how far the file's pages reach (its high-water mark).
func used(b []byte) int {
	if m, ok := current(b); ok && int(m.pgid)*pageSize <= len(b) {
		return int(m.pgid) * pageSize
	}
	return len(b)
}

// pagesOf lists the pages of a kind (branch or leaf) below the
// high-water mark.
func pagesOf(b []byte, flag uint16) []int {
	var out []int
	for p := 2; (p+1)*pageSize <= used(b); p++ {
		if binary.LittleEndian.Uint16(b[p*pageSize+8:]) == flag {
			out = append(out, p)
		}
	}
	return out
}

func garbage(rnd *rand.Rand, n int) []byte {
	g := make([]byte, n)
	rnd.Read(g)
	return g
}

func rewrite(path string, fn func(b []byte, rnd *rand.Rand) ([]byte, error)) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if b, err = fn(b, rand.New(rand.NewSource(7))); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

func cut(n func(b []byte) int) func(string) error {
	return func(path string) error {
		return rewrite(path, func(b []byte, _ *rand.Rand) ([]byte, error) { return b[:n(b)], nil })
	}
}

func overwrite(at func(b []byte) (int, int), with func(rnd *rand.Rand, n int) []byte) func(string) error {
	return func(path string) error {
		return rewrite(path, func(b []byte, rnd *rand.Rand) ([]byte, error) {
			from, n := at(b)
			if from < 0 || from+n > len(b) {
				return nil, fmt.Errorf("no such part in a file of %d bytes", len(b))
			}
			copy(b[from:from+n], with(rnd, n))
			return b, nil
		})
	}
}

func zeros(_ *rand.Rand, n int) []byte { return make([]byte, n) }

func metaField(off int, v uint32) func(string) error {
	return func(path string) error {
		return rewrite(path, func(b []byte, _ *rand.Rand) ([]byte, error) {
			for p := 0; p < 2; p++ {
				binary.LittleEndian.PutUint32(b[p*pageSize+16+off:], v)
			}
			return b, nil
		})
	}
}

func flip(flag uint16, pages, from, to, step int, mask byte) func(string) error {
	return func(path string) error {
		return rewrite(path, func(b []byte, _ *rand.Rand) ([]byte, error) {
			ps := pagesOf(b, flag)
			if len(ps) == 0 {
				return nil, fmt.Errorf("no page of kind %d", flag)
			}
			for _, p := range ps[:min(pages, len(ps))] {
				for k := from; k < to; k += step {
					b[p*pageSize+k] ^= mask
				}
			}
			return b, nil
		})
	}
}

// Damages are the 18 damaged store files synapse must answer from or heal.
func Damages() []Damage {
	return []Damage{
		{Name: "zero-length", What: "truncated to 0 bytes", Lossy: true, Apply: cut(func([]byte) int { return 0 })},
		{Name: "directory", What: "a folder in place of the file", Lossy: true, Apply: func(path string) error {
			if err := os.Remove(path); err != nil {
				return err
			}
			return os.Mkdir(path, 0o700)
		}},
		{Name: "trunc-4k", What: "truncated to its first meta page", Lossy: true, Apply: cut(func([]byte) int { return pageSize })},
		{Name: "trunc-8k", What: "truncated to its two meta pages", Lossy: true, Apply: cut(func([]byte) int { return 2 * pageSize })},
		{Name: "trunc-half", What: "truncated to half of what its pages use", Apply: cut(func(b []byte) int { return used(b) / 2 / pageSize * pageSize })},
		{Name: "trunc-last-page", What: "its last used page cut off", Apply: cut(func(b []byte) int { return used(b) - pageSize })},
		{Name: "trunc-odd", What: "cut 1000 bytes short of its last used page's end", Apply: cut(func(b []byte) int { return used(b) - 1000 })},
		{Name: "meta0-zero", What: "meta page 0 zeroed", Apply: overwrite(func([]byte) (int, int) { return 0, pageSize }, zeros)},
		{Name: "meta1-zero", What: "meta page 1 zeroed", Apply: overwrite(func([]byte) (int, int) { return pageSize, pageSize }, zeros)},
		{Name: "metas-zero", What: "both meta pages zeroed", Lossy: true, Apply: overwrite(func([]byte) (int, int) { return 0, 2 * pageSize }, zeros)},
		{Name: "bad-magic", What: "a wrong magic number in both meta pages", Apply: metaField(0, 0xDEADBEEF)},
		{Name: "wrong-version", What: "format version 99 in both meta pages", Apply: metaField(4, 99)},
		{Name: "garbage-middle", What: "16 pages of random bytes in the middle of its used pages", Apply: overwrite(func(b []byte) (int, int) {
			return used(b) / 2 / pageSize * pageSize, 16 * pageSize
		}, garbage)},
		{Name: "flip-branch", What: "every 97th byte flipped in its first 40 branch pages", Apply: flip(branchPage, 40, 16, pageSize, 97, 0xff)},
		{Name: "flip-leaf", What: "bytes flipped in the headers of its first 200 leaf pages", Apply: flip(leafPage, 200, 16, 200, 7, 0x5a)},
		{Name: "garbage-freelist", What: "random bytes over its freelist page", Apply: overwrite(func(b []byte) (int, int) {
			m, _ := current(b)
			return int(m.freelist) * pageSize, pageSize
		}, garbage)},
		{Name: "garbage-root", What: "random bytes over its root bucket page", Lossy: true, Apply: overwrite(func(b []byte) (int, int) {
			m, _ := current(b)
			return int(m.root) * pageSize, pageSize
		}, garbage)},
		{Name: "all-random", What: "every byte random", Lossy: true, Apply: overwrite(func(b []byte) (int, int) { return 0, len(b) }, garbage)},
	}
}
