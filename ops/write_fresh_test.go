package ops

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// TestWrite_KeepsFolderStamps: a page write brings forward the freshness
// stamps of the folders it changed (index.FolderMark), so the next CLI
// verb's check finds nothing to list or record, in both check modes; a
// file another process created in a folder before the write is still
// found by the next check (the write does not vouch for a folder that
// was not as remembered).
func TestWrite_KeepsFolderStamps(t *testing.T) {
	for _, mode := range []struct {
		name     string
		maxFiles int
	}{{"files", 0}, {"folders", -1}} {
		t.Run(mode.name, func(t *testing.T) {
			ctx := context.Background()
			v := testvault.New(t)
			testvault.Write(t, v, "wiki/concepts/loom.md", "# Loom\nA weaving machine.\n")
			testvault.Write(t, v, "wiki/concepts/warp.md", "# Warp\nThe lengthwise threads of a [[Loom]].\n")
			e, err := OpenEnv(ctx, v, OpenOptions{Holder: "test"})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { e.Close() }()
			// the folders as a long-settled vault's (not racy), then
			// remembered by a check and its reconcile
			check := settledCheck(t, func() *Env { return e }, v, mode.maxFiles)
			if st := check(); st.NeedsWrite() {
				t.Fatalf("check after a reconcile: %+v needs a write", st)
			}
			// the write's own stat of its folders is a moment after its
			// rename; a clock a second on keeps it clear of the racy window
			e.Now = func() time.Time { return time.Now().Add(time.Second) }
			write := func(title, body string) {
				t.Helper()
				if _, err := WritePage(ctx, e, &WritePageIn{Title: title, Content: body, Type: "concept"}); err != nil {
					t.Fatal(err)
				}
			}
			write("Loom", "# Loom\nA weaving machine with a [[Shuttle]].\n")
			write("Shuttle", "# Shuttle\nCarries the weft across a [[Loom]].\n")
			if st := check(); st.NeedsWrite() || st.Count() != 0 {
				t.Fatalf("check after two writes: %d changed, needs a write (%+v); want the folders' stamps brought forward by the writes", st.Count(), st)
			}
			if mode.maxFiles < 0 {
				var hot string
				_ = e.Store.View(func(tx *store.Tx) error { hot = string(tx.Meta("fresh_hot")); return nil })
				for _, p := range []string{"wiki/concepts/loom.md", "wiki/concepts/shuttle.md"} {
					if !slices.Contains(strings.Split(hot, "\n"), p) {
						t.Errorf("%s is not among the recently modified files the folder check stats: %q", p, hot)
					}
				}
			}

			// what the next CLI write verb does: open read-write with the
			// check on; it finds nothing to index or remember, so opening
			// commits nothing (no reconcile transaction)
			e.Close()
			e2, err := OpenEnv(ctx, v, OpenOptions{Holder: "test write verb", Fresh: true})
			if err != nil {
				t.Fatal(err)
			}
			if n := e2.Store.Commits(); n != 0 || e2.Fresh == nil || e2.Fresh.Mode != index.CheckFolders {
				t.Fatalf("a write verb's open after two writes committed %d transactions, freshness %+v; want 0, in mode folders", n, e2.Fresh)
			}
			e2.Close()
			if e, err = OpenEnv(ctx, v, OpenOptions{Holder: "test"}); err != nil {
				t.Fatal(err)
			}
			e.Now = func() time.Time { return time.Now().Add(time.Second) }

			// a file created by hand, then a write in the same folder: the
			// folder was not as remembered, so its stamp is left for the
			// check, which finds the file
			testvault.Write(t, v, "wiki/concepts/heddle.md", "# Heddle\nLifts the warp.\n")
			write("Warp", "# Warp\nThe lengthwise threads of a [[Loom]], lifted by heddles.\n")
			st := check()
			if st.New != 1 || !slices.Contains(st.Paths, "wiki/concepts/heddle.md") {
				t.Fatalf("check after a file made by hand and a write beside it: %+v; want wiki/concepts/heddle.md new", st)
			}
			if _, err := e.Index.Reconcile(ctx, st); err != nil {
				t.Fatal(err)
			}
			var doc uint32
			_ = e.Store.View(func(tx *store.Tx) error { doc = tx.DocByPath("wiki/concepts/heddle.md"); return nil })
			if doc == 0 {
				t.Fatal("heddle.md not indexed by the reconcile")
			}
		})
	}
}

// TestWrite_IndexMDEditAfterWriteSeen: the next check trusts the index.md
// a write renamed into place without hashing it (index.RecordWritten),
// but still finds a hand edit made right after the write that keeps its
// size and mtime, in place or by renaming another file over it.
func TestWrite_IndexMDEditAfterWriteSeen(t *testing.T) {
	for _, how := range []string{"in place", "rename"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			v, e := loomEnv(t)
			for _, title := range []string{"Shuttle", "Warp"} {
				if _, err := WritePage(ctx, e, &WritePageIn{Title: title, Content: "# " + title + "\nPart of a [[Loom]].\n", Type: "concept"}); err != nil {
					t.Fatal(err)
				}
			}
			abs := v.Abs("wiki/index.md")
			st, err := os.Stat(abs)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(abs)
			if err != nil {
				t.Fatal(err)
			}
			// the record the next check trusts is of these bytes
			var rec store.FileRec
			_ = e.Store.View(func(tx *store.Tx) error { rec, _, _ = tx.File("wiki/index.md"); return nil })
			if rec.SHA256 != sha256.Sum256(data) || rec.Size != int64(len(data)) || rec.MtimeNS != st.ModTime().UnixNano() {
				t.Fatalf("index.md's record (size %d, mtime %d, sum %x) is not of the file written (size %d, mtime %d)", rec.Size, rec.MtimeNS, rec.SHA256, len(data), st.ModTime().UnixNano())
			}
			edited := []byte(strings.Replace(string(data), "|Shuttle]]", "|SHUTTLE]]", 1))
			if string(edited) == string(data) {
				t.Fatalf("index.md %q has no Shuttle entry to edit", data)
			}
			if how == "in place" {
				err = os.WriteFile(abs, edited, 0o644)
			} else {
				err = os.WriteFile(abs+".new", edited, 0o644)
				if err == nil {
					err = os.Rename(abs+".new", abs)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(abs, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
			for _, maxFiles := range []int{0, -1} {
				got, err := e.Index.Check(ctx, index.CheckOptions{MaxFiles: maxFiles})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(got.Paths, "wiki/index.md") {
					t.Fatalf("check (max files %d) after a hand edit of index.md keeping its size and mtime: changed %v, want wiki/index.md", maxFiles, got.Paths)
				}
			}
		})
	}
}

// TestWrite_StampsNotRacyRightAfterItsRename: a write stamps its folders a
// few milliseconds after its rename, within the clock tick of the change;
// it waits out the tick and stats again, so the next command's check does
// not list the folder again (at 100k pages a type folder of 14k entries:
// +40 ms and 9 MB to every write made right after another).
func TestWrite_StampsNotRacyRightAfterItsRename(t *testing.T) {
	ctx := context.Background()
	v, e := loomEnv(t)
	check := settledCheck(t, func() *Env { return e }, v, -1)
	// the real clock: the stamps are taken right after the rename
	for i, body := range []string{"# Loom\nA weaving machine with a [[Shuttle]].\n", "# Loom\nA weaving machine, of wood.\n"} {
		if _, err := WritePage(ctx, e, &WritePageIn{Title: "Loom", Content: body, Type: "concept"}); err != nil {
			t.Fatal(err)
		}
		if st := check(); st.NeedsWrite() || st.Count() != 0 {
			t.Fatalf("check right after write %d: %d changed, needs a write (%+v); want its folders' stamps clear of the racy window", i+1, st.Count(), st)
		}
	}
}

// loomEnv is a new vault holding the page Loom, opened (closed when the
// test ends).
func loomEnv(t *testing.T) (*vault.Vault, *Env) {
	t.Helper()
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/concepts/loom.md", "# Loom\nA weaving machine.\n")
	e, err := OpenEnv(context.Background(), v, OpenOptions{Holder: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return v, e
}

// settledCheck gives the vault's folders the mtimes of a long-settled vault
// (not racy), has a check and its reconcile remember them, and returns the
// check (index.CheckOptions.MaxFiles maxFiles) a CLI verb runs, on the
// environment env returns at the time (a test may open it again).
func settledCheck(t *testing.T, env func() *Env, v *vault.Vault, maxFiles int) func() *index.Staleness {
	t.Helper()
	ctx := context.Background()
	old := time.Now().Add(-time.Hour)
	_ = filepath.WalkDir(v.Root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() != ".synapse" {
			_ = os.Chtimes(p, old, old)
		}
		return err
	})
	check := func() *index.Staleness {
		t.Helper()
		st, err := env().Index.Check(ctx, index.CheckOptions{MaxFiles: maxFiles})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if _, err := env().Index.Reconcile(ctx, check()); err != nil {
		t.Fatal(err)
	}
	return check
}
