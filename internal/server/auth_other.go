//go:build !unix

package server

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

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
	data, err := io.ReadAll(io.LimitReader(f, maxTokenBytes))
	if err != nil {
		return "", "", errs.Wrap(errs.Internal, err, "read the token file %s: %v", path, err)
	}
	if tok = strings.TrimSpace(string(data)); tok == "" {
		return "", "it is empty", nil
	}
	return tok, "", nil
}
