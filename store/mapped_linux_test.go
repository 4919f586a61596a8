//go:build linux

package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rssFileKB is this process's resident file-backed memory.
func rssFileKB(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "RssFile:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// TestStore_ReleaseMapped: reading a store maps its pages into the
// process; ReleaseMapped gives them back (a reindex calls it between
// transactions, so its RSS does not grow with the store) and the data
// reads the same afterwards.
func TestStore_ReleaseMapped(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	val := bytes.Repeat([]byte("x"), 3000)
	for i := 0; i < 8; i++ {
		err := s.Update(func(tx *Tx) error {
			for j := 0; j < 1000; j++ {
				if err := tx.b(bMeta).Put([]byte(strconv.Itoa(i*1000+j)), val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	readAll := func() {
		t.Helper()
		_ = s.View(func(tx *Tx) error {
			n := 0
			c := tx.b(bMeta).Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if len(v) == len(val) && !bytes.Equal(v, val) {
					t.Fatalf("key %s reads back wrong", k)
				}
				n++
			}
			if n < 8000 {
				t.Fatalf("%d keys", n)
			}
			return nil
		})
	}
	readAll()
	before := rssFileKB(t)
	s.ReleaseMapped()
	after := rssFileKB(t)
	if before-after < 16<<10 {
		t.Fatalf("RssFile %d kB after reading ~24 MB of store, %d kB after ReleaseMapped", before, after)
	}
	readAll() // mapped again from the page cache, unchanged
}
