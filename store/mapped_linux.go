//go:build linux

package store

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

// releaseMapped tells the kernel that this process no longer needs the
// store's memory-mapped file pages (MADV_DONTNEED): they leave the
// process's resident set and stay in the page cache, so the next read
// maps them again without disk I/O. The mapping is read-only and shared,
// so nothing is lost, even under a transaction that is reading.
func (s *Store) releaseMapped() {
	db := s.db.Load()
	if db == nil {
		return
	}
	info := db.Info()
	if info == nil || info.Data == 0 {
		return
	}
	size := s.SizeBytes()
	if size <= 0 {
		return
	}
	// Data is the address of a mapping outside the Go heap
	p := *(*unsafe.Pointer)(unsafe.Pointer(&info.Data))
	_ = syscall.Madvise(unsafe.Slice((*byte)(p), int(size)), syscall.MADV_DONTNEED)
}

// GovernMapped keeps this process's resident set under about limit bytes,
// as far as the store's mapped pages make it up, until the returned stop
// is called. A bulk
// write (a reindex) reads pages all over the file, and the kernel maps up
// to 16 neighbours of each page it faults in (fault-around), most of them
// of other buckets: within one transaction that is 10 times what it reads
// (160 MB to move 16 MB of staged postings). Releasing between
// transactions (ReleaseMapped) cannot bound that; this does, from a
// goroutine that looks at the process's resident pages every 10 ms and
// releases the mapped ones when the total passes limit (so that a phase
// that reads one bucket at random, as link resolution does, keeps its
// pages while the heap leaves room: releasing them at a fixed size cost
// it half its time again in page faults). The release runs in a
// read transaction, so that bbolt cannot remap the file meanwhile (a remap
// waits for read transactions).
func (s *Store) GovernMapped(limit int64) (stop func()) {
	f, err := os.Open("/proc/self/statm")
	if s == nil || s.db.Load() == nil || err != nil {
		return func() {}
	}
	page := int64(os.Getpagesize())
	buf := make([]byte, 128)
	statm := func() (resident, shared int64) {
		// size resident shared text lib data dt, in pages; shared is
		// RssFile + RssShmem
		n, _ := f.ReadAt(buf, 0)
		fields := bytes.Fields(buf[:n])
		if len(fields) < 3 {
			return 0, 0
		}
		r, _ := strconv.ParseInt(string(fields[1]), 10, 64)
		sh, _ := strconv.ParseInt(string(fields[2]), 10, 64)
		return r * page, sh * page
	}
	s.releaseMapped()
	_, base := statm() // this binary's own pages, and the store's few hot ones
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer f.Close()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			// nothing to gain below 16 MB mapped (the heap alone is over)
			if r, sh := statm(); r > limit && sh-base > 16<<20 {
				if db := s.db.Load(); db != nil {
					_ = db.View(func(*bolt.Tx) error { s.releaseMapped(); return nil })
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
