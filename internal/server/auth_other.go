//go:build !unix

package server

import "os"

// openToken opens the token file (no owner or mode bits to check here).
func openToken(path string) (*os.File, error) { return os.Open(path) }
