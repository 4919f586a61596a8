//go:build !linux

package main

import (
	"fmt"
	"net"
)

// maxSockPath is the longest socket path bind and connect take (104 bytes
// with the NUL on the BSDs and macOS).
const maxSockPath = 103

// sockAddr returns path when it fits sun_path; longer paths are refused
// (CLI verbs then fail while a server runs, naming it).
func sockAddr(path string) (addr string, release func(), err error) {
	if len(path) > maxSockPath {
		return "", nil, fmt.Errorf("socket path %s is longer than %d bytes", path, maxSockPath)
	}
	return path, func() {}, nil
}

// checkPeer accepts every connection: without SO_PEERCRED the socket's 0600
// mode inside the 0700 .synapse folder is the guard.
func checkPeer(net.Conn) error { return nil }
