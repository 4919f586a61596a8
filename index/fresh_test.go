package index

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// freshVault is an indexed vault whose files and folders are an hour old
// (so no record or folder is racy) with the folder mtimes (and in mode
// folders the recent files) remembered by a reconcile in the mode that
// max gives.
func freshVault(t *testing.T, max int) (*vault.Vault, *Indexer) {
	t.Helper()
	v := testvault.New(t)
	for p, body := range map[string]string{
		"wiki/entities/ada.md":    "---\ntitle: Ada\n---\nAda wrote [[Engine]].\n",
		"wiki/concepts/engine.md": "---\ntitle: Engine\n---\nThe analytical engine.\n",
		"raw/sources/paper.md":    "a source\n",
	} {
		write(t, v, p, body)
	}
	ageAll(t, v)
	ix := openIndexer(t, v)
	if _, err := ix.Scan(context.Background(), ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	st := check(t, ix, max)
	if st.Count() != 0 {
		t.Fatalf("after a scan: %d differ (%v)", st.Count(), st.Paths)
	}
	if _, err := ix.Reconcile(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return v, ix
}

func write(t *testing.T, v *vault.Vault, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(v.Abs(p)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v.Abs(p), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ageAll sets every file and folder under wiki/ and raw/ an hour back.
func ageAll(t *testing.T, v *vault.Vault) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	for _, root := range []string{"wiki", "raw"} {
		var dirs []string
		err := filepath.WalkDir(v.Abs(root), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				dirs = append(dirs, p) // after their entries are done
				return nil
			}
			return os.Chtimes(p, old, old)
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range slices.Backward(dirs) {
			if err := os.Chtimes(d, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chtimes(v.Root, old, old); err != nil {
		t.Fatal(err)
	}
}

func check(t *testing.T, ix *Indexer, max int) *Staleness {
	t.Helper()
	st, err := ix.Check(context.Background(), CheckOptions{MaxFiles: max})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestCheck_FindsChanges: what each kind of change by hand looks like to
// the check in both modes, and that a reconcile indexes it and leaves
// nothing to find. (An in-place edit is found in mode folders only among
// the recent files: TestCheck_FoldersColdEdit.)
func TestCheck_FindsChanges(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, v *vault.Vault)
		// what the check finds, in either mode
		n, c, d int
		paths   []string
	}{
		{name: "edit in place", change: func(t *testing.T, v *vault.Vault) {
			write(t, v, "wiki/entities/ada.md", "---\ntitle: Ada\n---\nAda wrote [[Engine]] and more.\n")
		}, c: 1, paths: []string{"wiki/entities/ada.md"}},
		{name: "new page", change: func(t *testing.T, v *vault.Vault) {
			write(t, v, "wiki/concepts/loom.md", "# Loom\n")
		}, n: 1, paths: []string{"wiki/concepts/loom.md"}},
		{name: "new folder", change: func(t *testing.T, v *vault.Vault) {
			write(t, v, "wiki/people/math/babbage.md", "# Babbage\n")
			write(t, v, "wiki/people/lovelace.md", "# Lovelace\n")
		}, n: 2, paths: []string{"wiki/people/lovelace.md", "wiki/people/math/babbage.md"}},
		{name: "deleted page", change: func(t *testing.T, v *vault.Vault) {
			rm(t, v, "wiki/concepts/engine.md")
		}, d: 1, paths: []string{"wiki/concepts/engine.md"}},
		{name: "deleted folder", change: func(t *testing.T, v *vault.Vault) {
			if err := os.RemoveAll(v.Abs("wiki/concepts")); err != nil {
				t.Fatal(err)
			}
		}, d: 1, paths: []string{"wiki/concepts/engine.md"}},
		{name: "renamed across folders", change: func(t *testing.T, v *vault.Vault) {
			mv(t, v, "wiki/entities/ada.md", "wiki/concepts/ada.md")
		}, n: 1, d: 1, paths: []string{"wiki/concepts/ada.md", "wiki/entities/ada.md"}},
		{name: "new source", change: func(t *testing.T, v *vault.Vault) {
			write(t, v, "raw/sources/2024/notes.txt", "notes\n")
		}, n: 1, paths: []string{"raw/sources/2024/notes.txt"}},
		{name: "symlink loop", change: func(t *testing.T, v *vault.Vault) {
			if err := os.Symlink("..", v.Abs("wiki/concepts/loop")); err != nil {
				t.Fatal(err)
			}
		}, n: 1, paths: []string{"wiki/concepts/loop"}},
		{name: "untracked files", change: func(t *testing.T, v *vault.Vault) {
			write(t, v, "wiki/.obsidian/workspace.json", "{}")
			write(t, v, "wiki/concepts/.engine.md.swp", "x")
			write(t, v, "wiki/concepts/engine.md~", "x")
			write(t, v, "notes.txt", "outside the tracked trees")
			if err := syscall.Mkfifo(v.Abs("wiki/concepts/pipe.md"), 0o644); err != nil {
				t.Skip("no named pipes here:", err)
			}
		}},
	}
	for _, tc := range cases {
		for _, mode := range []struct {
			name string
			max  int
		}{{CheckFiles, 0}, {CheckFolders, -1}} {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				v, ix := freshVault(t, mode.max)
				tc.change(t, v)
				st := check(t, ix, mode.max)
				if st.Mode != mode.name {
					t.Fatalf("mode %q, want %q", st.Mode, mode.name)
				}
				n, c, d, paths := tc.n, tc.c, tc.d, tc.paths
				if st.New != n || st.Changed != c || st.Deleted != d || !slices.Equal(st.Paths, paths) {
					t.Fatalf("found %d new, %d changed, %d deleted %v; want %d, %d, %d %v", st.New, st.Changed, st.Deleted, st.Paths, n, c, d, paths)
				}
				if _, err := ix.Reconcile(context.Background(), st); err != nil {
					t.Fatal(err)
				}
				for _, p := range paths {
					if tc.name == "symlink loop" {
						break // a folder: no record
					}
					_, on := os.Stat(v.Abs(p))
					var rec bool
					_ = ix.Store.View(func(tx *store.Tx) error { _, rec, _ = tx.File(p); return nil })
					if rec != (on == nil) {
						t.Errorf("%s: on disk %v, recorded %v after the reconcile", p, on == nil, rec)
					}
				}
				if again := check(t, ix, mode.max); again.Count() != 0 {
					t.Fatalf("after the reconcile: %d differ (%v)", again.Count(), again.Paths)
				}
			})
		}
	}
}

// TestCheck_ReadOnly: the check runs on a store opened read-only and
// changes nothing in it.
func TestCheck_ReadOnly(t *testing.T) {
	v, ix := freshVault(t, 0)
	ix.Store.Close()
	write(t, v, "wiki/concepts/loom.md", "# Loom\n")
	before, err := os.ReadFile(v.Abs(vault.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ro := &Indexer{Vault: v, Store: s}
	if st := check(t, ro, 0); st.New != 1 || !st.NeedsWrite() {
		t.Fatalf("found %d new (needs write %v), want 1", st.New, st.NeedsWrite())
	}
	after, err := os.ReadFile(v.Abs(vault.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Fatal("the check changed the store file")
	}
}

// TestCheck_RacyRecord: a file rewritten with the same size within the
// mtime granularity of its last scan is caught by its hash.
func TestCheck_RacyRecord(t *testing.T) {
	v := testvault.New(t)
	write(t, v, "wiki/a.md", "# A\nalpha\n")
	ix := openIndexer(t, v)
	if _, err := ix.Scan(context.Background(), ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	var rec store.FileRec
	_ = ix.Store.View(func(tx *store.Tx) error { rec, _, _ = tx.File("wiki/a.md"); return nil })
	write(t, v, "wiki/a.md", "# A\nomega\n") // same size
	mt := time.Unix(0, rec.MtimeNS)
	if err := os.Chtimes(v.Abs("wiki/a.md"), mt, mt); err != nil { // same mtime
		t.Fatal(err)
	}
	if st := check(t, ix, 0); st.Changed != 1 {
		t.Fatalf("found %d changed %v, want the racy rewrite", st.Changed, st.Paths)
	}
	write(t, v, "wiki/a.md", "# A\nalpha\n")
	if err := os.Chtimes(v.Abs("wiki/a.md"), mt, mt); err != nil {
		t.Fatal(err)
	}
	if st := check(t, ix, 0); st.Count() != 0 {
		t.Fatalf("found %d differ %v; the bytes are the recorded ones", st.Count(), st.Paths)
	}
}

// TestCheck_FoldersColdEdit: above freshness.max_files (mode folders) a
// file edited in place is found when it is among the hotFiles modified
// most lately, and not otherwise (its folder's mtime does not change):
// the documented limit of the tripwire.
func TestCheck_FoldersColdEdit(t *testing.T) {
	v := testvault.New(t)
	for i := range hotFiles + 10 {
		write(t, v, fmt.Sprintf("wiki/notes/n%03d.md", i), fmt.Sprintf("# N%d\n", i))
	}
	ageAll(t, v)
	// n000 the oldest (cold), n299 the newest (hot)
	for i := range hotFiles + 10 {
		mt := time.Now().Add(-2 * time.Hour).Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(v.Abs(fmt.Sprintf("wiki/notes/n%03d.md", i)), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	ix := openIndexer(t, v)
	if _, err := ix.Scan(context.Background(), ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Reconcile(context.Background(), check(t, ix, -1)); err != nil {
		t.Fatal(err)
	}
	last := fmt.Sprintf("wiki/notes/n%03d.md", hotFiles+9)
	write(t, v, "wiki/notes/n000.md", "# N0\nedited\n")
	write(t, v, last, "# Newest\nedited\n")
	st := check(t, ix, -1)
	if st.Mode != CheckFolders || !slices.Equal(st.Paths, []string{last}) || st.Files != hotFiles {
		t.Fatalf("mode %s, %d files stat'ed, found %v; want only the hot edit %s among %d", st.Mode, st.Files, st.Paths, last, hotFiles)
	}
	if st := check(t, ix, 0); !slices.Equal(st.Paths, []string{"wiki/notes/n000.md", last}) {
		t.Fatalf("mode files found %v, want both edits", st.Paths)
	}
}
