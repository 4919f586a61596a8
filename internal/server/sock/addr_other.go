//go:build !linux

package sock

import "fmt"

// MaxPath is the longest socket path bind and connect take (104 bytes
// with the NUL on the BSDs and macOS).
const MaxPath = 103

// Addr returns path when it fits sun_path; longer paths are refused
// (CLI verbs then fail while a server runs, naming it).
func Addr(path string) (addr string, release func(), err error) {
	if len(path) > MaxPath {
		return "", nil, fmt.Errorf("socket path %s is longer than %d bytes", path, MaxPath)
	}
	return path, func() {}, nil
}
