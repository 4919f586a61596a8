package ops

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

// tarEntries lists an archive's entries: name → link target for a
// symlink, "dir" for a folder, the content for a file.
func tarEntries(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			out[h.Name] = "dir"
		case tar.TypeSymlink:
			out[h.Name] = "-> " + h.Linkname
		default:
			b, _ := io.ReadAll(tr)
			out[h.Name] = string(b)
		}
	}
}

// pageList is every page's id, path and sha256, sorted.
func pageList(t *testing.T, e *Env) []string {
	t.Helper()
	out, err := listPages(context.Background(), e, &ListPagesIn{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, p := range out.Pages {
		g := getPageOut(t, e, p.ID)
		s = append(s, p.ID+" "+p.Path+" "+g.SHA256)
	}
	sort.Strings(s)
	return s
}

func TestBackup_RestoredByTarAndReindex(t *testing.T) {
	if _, err := exec.LookPath("tar"); err != nil {
		t.Skip("no tar program")
	}
	v := testvault.New(t)
	testvault.Write(t, v, "raw/sources/heron.md", "field notes\n")
	testvault.Write(t, v, ".obsidian/app.json", `{"theme":"dark"}`+"\n")
	testvault.Write(t, v, "attachments/map.txt", "a map\n")
	testvault.Write(t, v, "NOTES.txt", "top-level file\n")
	testvault.Write(t, v, vault.ConfigFile, "history:\n  page_revisions: 50\n")
	testvault.Write(t, v, ".git/HEAD", "ref: refs/heads/main\n")
	testvault.Write(t, v, vault.TokenFile, "secret-token\n")
	testvault.Write(t, v, ".synapse/serve.pid", "123\n")
	e := newTestEnv(t, v)
	write(t, e, &WritePageIn{Title: "Heron", Content: "# Heron\n\nFirst.\n", Sources: []string{"heron.md"}})
	w := write(t, e, &WritePageIn{Title: "Heron", Content: "# Heron\n\nSecond, with [[Egret]].\n"})
	write(t, e, &WritePageIn{Title: "Egret", Content: "# Egret\n\nSee [[Heron]].\n"})
	if err := os.Symlink("heron.md", v.Abs("wiki/concepts/heron-link.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(v.Abs("wiki/pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	rescanT(t, e)
	before := pageList(t, e)
	histBefore := historyOf(t, e, "Heron")

	archive := filepath.Join(t.TempDir(), "wiki.tar.gz")
	var last BackupProgress
	out, err := Backup(context.Background(), v, archive, func(p BackupProgress) { last = p })
	if err != nil {
		t.Fatal(err)
	}
	if last.Files != last.TotalFiles || last.Bytes != last.TotalBytes || last.Files != out.Files {
		t.Errorf("progress ended at %+v, archived %d", last, out.Files)
	}
	if len(out.Skipped) != 1 || !strings.HasPrefix(out.Skipped[0], "wiki/pipe.md: ") {
		t.Errorf("skipped %v, want the named pipe", out.Skipped)
	}
	got := tarEntries(t, archive)
	for _, name := range []string{"wiki/" + strings.TrimPrefix(w.Path, "wiki/"), "wiki/index.md", "wiki/log.md", "raw/sources/heron.md",
		".obsidian/app.json", "attachments/map.txt", "NOTES.txt", "schema.md", "purpose.md", vault.ConfigFile, ".synapse/.gitignore",
		".synapse/history/recent.jsonl", ".synapse/", ".synapse/history/"} {
		if _, ok := got[name]; !ok {
			t.Errorf("the archive lacks %s", name)
		}
	}
	if got["wiki/concepts/heron-link.md"] != "-> heron.md" {
		t.Errorf("the symlink is archived as %q", got["wiki/concepts/heron-link.md"])
	}
	for name := range got {
		if name == vault.DBFile || name == vault.TokenFile || name == ".synapse/serve.pid" || strings.HasPrefix(name, ".git/") || name == "wiki/pipe.md" {
			t.Errorf("the archive holds %s", name)
		}
	}

	// restore: tar x into an empty folder, reindex, compare
	dst := filepath.Join(t.TempDir(), "restored")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("tar", "-xzf", archive, "-C", dst).CombinedOutput(); err != nil {
		t.Fatalf("tar x: %v\n%s", err, b)
	}
	v2, err := vault.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	e2 := newTestEnv(t, v2)
	if _, err := reindex(context.Background(), e2, &ReindexIn{}); err != nil {
		t.Fatal(err)
	}
	if after := pageList(t, e2); !reflect.DeepEqual(after, before) {
		t.Fatalf("pages after the restore:\n%v\nbefore:\n%v", after, before)
	}
	histAfter := historyOf(t, e2, "Heron")
	if !reflect.DeepEqual(histAfter.Revisions, histBefore.Revisions) || histAfter.Current != histBefore.Current {
		t.Fatalf("history after the restore:\n%+v\nbefore:\n%+v", histAfter, histBefore)
	}
	if st, _ := os.Stat(v2.Abs(vault.StateDir)); st.Mode().Perm() != 0o700 {
		t.Errorf(".synapse restored with mode %v", st.Mode().Perm())
	}
	if h := e2.History.Limits(); h.PageRevisions != 50 {
		t.Errorf("the config was not restored: %+v", h)
	}
}

func TestBackup_Refusals(t *testing.T) {
	v := testvault.New(t)
	for _, dst := range []string{
		v.Abs("wiki/backup.tar.gz"), v.Abs("wiki/concepts/b.tgz"), v.Abs("raw/sources/b.tar.gz"), v.Abs("raw/b.tar.gz"),
		filepath.Join(t.TempDir(), "b.zip"), "", filepath.Join(t.TempDir(), "missing", "b.tar.gz"),
	} {
		if _, err := Backup(context.Background(), v, dst, nil); errs.CodeOf(err) != errs.Invalid {
			t.Errorf("backup to %q: %v, want invalid", dst, err)
		}
	}
	// elsewhere in the vault is allowed; the archive is not in itself
	testvault.Write(t, v, "backups/.keep", "")
	dst := v.Abs("backups/b.tar.gz")
	if _, err := Backup(context.Background(), v, dst, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Backup(context.Background(), v, dst, nil); err != nil {
		t.Fatal(err)
	}
	got := tarEntries(t, dst)
	if _, ok := got["backups/b.tar.gz"]; ok {
		t.Error("the archive holds its previous self")
	}
	if _, ok := got["backups/.keep"]; !ok {
		t.Error("the folder beside the archive was left out")
	}
}

func TestBackup_CancelledLeavesNothing(t *testing.T) {
	v := testvault.New(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Backup(ctx, v, filepath.Join(dir, "b.tar.gz"), func(p BackupProgress) {
		if p.Files == 2 {
			cancel()
		}
	})
	if err == nil {
		t.Fatal("a cancelled backup succeeded")
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}
