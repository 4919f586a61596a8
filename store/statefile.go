package store

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/synapse-wiki/synapse/errs"
)

// A vault arrives from anywhere, so the files synapse keeps beside its
// store may be a symlink to a file outside the vault (which a write would
// create or overwrite there) or a named pipe (which a read would wait on
// forever). The store file and its holder file are checked before use.

// checkStoreFile refuses a store path that is a symlink or anything but a
// regular file or a folder (forbidden, naming it). A missing file is
// fine: Open creates it. A folder where the file should be is damage,
// moved aside and rebuilt like any (damage.go).
func checkStoreFile(path string) error {
	st, err := os.Lstat(path)
	switch {
	case err != nil:
		return nil // missing, or an error the open reports itself
	case st.Mode()&fs.ModeSymlink != 0:
		to, _ := os.Readlink(path)
		return errs.E(errs.Forbidden, "the vault's store %s is a symlink (to %s); synapse keeps its store inside the vault and never follows it: remove the link (the next command rebuilds the store from the vault's files)", path, to)
	case !st.Mode().IsRegular() && !st.IsDir():
		return errs.E(errs.Forbidden, "the vault's store %s is not a regular file (%s); remove it (the next command rebuilds the store from the vault's files)", path, st.Mode().Type())
	}
	return nil
}

// maxHolderBytes bounds the holder file (a pid, a command and a time).
const maxHolderBytes = 4 << 10

// readHolderFile reads the holder file at p if it is a regular file: not
// through a symlink, never waiting on a named pipe.
func readHolderFile(p string) ([]byte, error) {
	f, err := openNoFollow(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, maxHolderBytes))
}

// writeHolderFile replaces the holder file at p with h: a temporary file
// renamed over it, so that a symlink there is replaced, never followed.
func writeHolderFile(p string, h HolderInfo) {
	data, _ := json.Marshal(h)
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+"-*")
	if err != nil {
		return
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}
