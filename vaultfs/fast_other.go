//go:build !linux

package vaultfs

import (
	"context"
	"io/fs"
	"os"
)

// No fast path here: os.Root does every step.

func (r *Reader) openFast(c, in string) (*os.File, fs.FileInfo, bool, error) {
	return nil, nil, false, nil
}

func (r *Reader) statFast(c, in string) (fs.FileInfo, bool, error) { return nil, false, nil }

func (r *Reader) readFast(ctx context.Context, c, in string, limit int64) ([]byte, fs.FileInfo, bool, error) {
	return nil, nil, false, nil
}

func rootFD(root *os.Root) (*os.File, int) { return nil, -1 }
