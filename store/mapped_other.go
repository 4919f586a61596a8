//go:build !linux

package store

// releaseMapped is a no-op where MADV_DONTNEED of a file mapping is not
// known to keep the data (see mapped_linux.go).
func (s *Store) releaseMapped() {}

// GovernMapped does nothing where releaseMapped does nothing.
func (s *Store) GovernMapped(limit int64) (stop func()) { return func() {} }
