package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// A page write that is killed after its file is in place but before the
// commit that indexes it and files its missing-page items (SIGKILL, a
// crash) would leave a page whose dangling links have no items: the next
// scan indexes the file like any saved by hand, and hand edits file no
// items. So a write leaves a note, .synapse/write-intent, from just
// before it writes the page until that commit: the next command that
// opens the store read-write and finds the note finishes the write's
// bookkeeping (the page indexed, its items filed, as the write would
// have) and removes it. The note is a plain file, not synced: a kill
// loses nothing of what the kernel holds (a power failure may lose it,
// and with it the items of that one write).

// intentFile is the note of a write in progress.
const (
	intentName = "write-intent"
	intentFile = vault.StateDir + "/" + intentName
)

// maxIntent bounds the note read back: a title is at most a few KiB.
const maxIntent = 64 << 10

type writeIntent struct {
	Title string    `json:"title"`          // as the write was given it
	Path  string    `json:"path,omitempty"` // the page's, when it existed
	Type  string    `json:"type,omitempty"` // a new page's: its folder
	PID   int       `json:"pid"`
	At    time.Time `json:"at"`
}

// noteIntent records that a write of title (to the page at path, "" for a
// new page of type typ) is about to write its page; the returned func removes the
// note once the write is recorded (or wrote nothing). The note is
// written whole (a new file renamed into place) and never through a
// symlink (stateRoot); it is not fsynced: a kill loses nothing the kernel
// holds.
func (e *Env) noteIntent(title, path, typ string) (done func()) {
	r, err := stateRoot(e.Vault)
	if err != nil {
		return func() {} // no .synapse to write to: the write fails on its own
	}
	data, _ := json.Marshal(writeIntent{Title: title, Path: path, Type: typ, PID: os.Getpid(), At: e.now().UTC()})
	tmp := fmt.Sprintf(".%s.%d.tmp", intentName, os.Getpid())
	_ = r.Remove(tmp) // one of a killed process with the same id
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = r.Rename(tmp, intentName)
		}
	}
	if err != nil {
		_ = r.Remove(tmp)
		r.Close()
		return func() {}
	}
	return func() { _ = r.Remove(intentName); r.Close() }
}

// stateRoot opens the vault's .synapse folder as a root: a name in it is
// never resolved through a symlink leading out. A .synapse that is itself
// a symlink is not opened.
func stateRoot(v *vault.Vault) (*os.Root, error) {
	abs := v.Abs(vault.StateDir)
	if st, err := os.Lstat(abs); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", vault.StateDir)
	}
	return os.OpenRoot(abs)
}

// finishInterruptedWrite completes the bookkeeping of a write killed
// after its page was written (see above): with the store open read-write
// and the page indexed, its dangling links file their missing-page items
// and the items it satisfies are resolved, as the write's commit does;
// then the note goes. A note whose page is not there (the write was killed
// before it) just goes. Holding the store read-write, no other process is
// writing; callers in a process that writes call it under writeMu.
func (e *Env) finishInterruptedWrite(ctx context.Context) error {
	if e.Store.ReadOnly() {
		return nil
	}
	r, err := stateRoot(e.Vault)
	if err != nil {
		return nil
	}
	defer r.Close()
	st, err := r.Lstat(intentName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var in writeIntent
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxIntent {
		_ = r.Remove(intentName) // not a note of ours (a symlink is removed, not followed)
		return nil
	}
	if data, err := r.ReadFile(intentName); err != nil || json.Unmarshal(data, &in) != nil || in.Title == "" {
		_ = r.Remove(intentName)
		return nil
	}
	path, err := e.intentPath(ctx, in)
	if err != nil {
		return err
	}
	if path != "" && e.pageWritten != nil {
		// the page as it is on disk now, indexed first
		if _, err := e.Index.Scan(ctx, index.ScanOptions{Paths: []string{path}}); err != nil {
			return err
		}
		err := e.Store.Update(func(tx *store.Tx) error {
			rec, err := pageAt(tx, path)
			if err != nil {
				return err
			}
			dangling, _ := linkTargets(rec)
			_, err = e.pageWritten(tx, rec, dangling, "", e.now())
			return err
		})
		if err != nil {
			return err
		}
	}
	return r.Remove(intentName)
}

// intentPath finds the page an interrupted write wrote: its path when it
// replaced a page; for a new page, the page its title resolves to once
// the folder new pages of its type go to is scanned (the command that
// finishes the write may not have indexed it yet). "" when there is none.
func (e *Env) intentPath(ctx context.Context, in writeIntent) (string, error) {
	if in.Path != "" {
		return in.Path, nil
	}
	var dir string
	_ = e.Store.View(func(tx *store.Tx) error {
		dir = newPageDir(tx, in.Type)
		return nil
	})
	if _, err := e.Index.Scan(ctx, index.ScanOptions{Paths: []string{dir}}); err != nil {
		return "", err
	}
	path := ""
	_ = e.Store.View(func(tx *store.Tx) error {
		if r := index.Resolve(tx, index.LinkKey(in.Title), "", false); r.Doc != 0 {
			if h, ok, _ := tx.Head(r.Doc); ok {
				path = h.Path
			}
		}
		return nil
	})
	return path, nil
}
