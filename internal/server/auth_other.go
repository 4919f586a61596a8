//go:build !unix

package server

import (
	"errors"
	"io/fs"
	"os"

	"github.com/synapse-wiki/synapse/errs"
)

// readToken reads the token file (no owner or mode bits to check here);
// see the unix version for what it returns.
func readToken(path string) (tok, why string, err error) {
	if st, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return "", "", nil
	} else if err == nil && !st.Mode().IsRegular() {
		return "", "it is not a regular file", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", "", errs.Wrap(errs.Internal, err, "open the token file %s: %v", path, err)
	}
	defer f.Close()
	return tokenIn(f, path)
}
