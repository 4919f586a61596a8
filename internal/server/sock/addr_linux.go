//go:build linux

package sock

import (
	"fmt"
	"os"
	"path/filepath"
)

// MaxPath is the longest socket path bind and connect take (sun_path
// holds 108 bytes with the terminating NUL).
const MaxPath = 107

// Addr returns an address for the socket file at path that fits
// sun_path. A longer path is reached through /proc/self/fd/N/NAME, N being
// its folder held open until release is called (after bind or connect).
func Addr(path string) (addr string, release func(), err error) {
	if len(path) <= MaxPath {
		return path, func() {}, nil
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return "", nil, err
	}
	return fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), filepath.Base(path)), func() { d.Close() }, nil
}
