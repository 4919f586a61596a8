//go:build linux

package store

import (
	"syscall"
	"unsafe"
)

// releaseMapped tells the kernel that this process no longer needs the
// store's memory-mapped file pages (MADV_DONTNEED): they leave the
// process's resident set and stay in the page cache, so the next read
// maps them again without disk I/O. The mapping is read-only and shared,
// so nothing is lost, even under a transaction that is reading.
func (s *Store) releaseMapped() {
	info := s.db.Info()
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
