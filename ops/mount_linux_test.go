package ops

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/vault"
)

// tmpfsVault makes a vault on a tmpfs of size bytes mounted for the test
// (root only: skipped otherwise), with a few pages written.
func tmpfsVault(t *testing.T, size string) (*vault.Vault, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a file system needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("no tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	v, _, err := vault.Init(filepath.Join(dir, "vault"))
	must(t, err)
	e, err := OpenEnv(context.Background(), v, OpenOptions{})
	must(t, err)
	for _, title := range []string{"Alpha", "Beta"} {
		write(t, e, &WritePageIn{Title: title, Content: "zebu, see [[Alpha]] and [[Gamma]].\n"})
	}
	must(t, e.Close())
	return v, dir
}

// cliOpen opens the vault as a CLI verb does for op.
func cliOpen(v *vault.Vault, op *Op, writes bool) (*Env, error) {
	return OpenEnv(context.Background(), v, OpenOptions{
		ReadOnly: !writes && !op.Rescans, ReadOnlyFallback: op.Rescans && !writes,
		NoInitialScan: op.Scans, Fresh: !op.Scans && !op.Rescans,
	})
}

// TestReadOnlyMount: on a vault whose file system is mounted read-only,
// the read verbs answer (before: every verb exited 1) and a write is
// refused as forbidden or unavailable, never internal.
func TestReadOnlyMount(t *testing.T) {
	v, dir := tmpfsVault(t, "8m")
	must(t, unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""))
	for _, c := range []struct {
		op    *Op
		input map[string]any
	}{
		{opStatus, nil}, {opSearch, obj{"query": "zebu"}}, {opGetPage, obj{"title": "Alpha"}},
		{opListPages, nil}, {opListReviews, nil}, {opMissing, nil}, {opLint, nil},
	} {
		e, err := cliOpen(v, c.op, false)
		if err != nil {
			t.Errorf("%s: open: %v", c.op.Name, err)
			continue
		}
		if _, err := callJSON(t, c.op, e, c.input); err != nil {
			t.Errorf("%s: %v", c.op.Name, err)
		}
		e.Close()
	}
	e, err := cliOpen(v, opWritePage, true)
	if err == nil {
		_, err = WritePage(context.Background(), e, &WritePageIn{Title: "Delta", Content: "x\n"})
		e.Close()
	}
	if c := errs.CodeOf(err); c != errs.Forbidden && c != errs.Unavailable {
		t.Errorf("a write on a read-only mount: %v", err)
	}
}

// TestWritePage_FullDisk: on a file system really full, a write refuses
// before it changes anything (unavailable, saying how much is free) and
// the vault's pages and review queue are as they were.
func TestWritePage_FullDisk(t *testing.T) {
	v, dir := tmpfsVault(t, "4m")
	e, err := OpenEnv(context.Background(), v, OpenOptions{})
	must(t, err)
	defer e.Close()
	// fill the disk, but for a few KiB
	f, err := os.Create(filepath.Join(dir, "filler"))
	must(t, err)
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	f.Close()
	var st unix.Statfs_t
	must(t, unix.Statfs(dir, &st))
	snap := snapshot(t, v)
	before, _ := callJSON(t, opListReviews, e, nil)
	_, err = WritePage(context.Background(), e, &WritePageIn{Title: "Full", Content: "y [[Nowhere]]\n"})
	if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "free") {
		t.Fatalf("write with %d bytes free: %v", int64(st.Bavail)*st.Bsize, err)
	}
	if after := snapshot(t, v); !reflect.DeepEqual(after, snap) {
		t.Error("a refused write changed the vault")
	}
	if after, _ := callJSON(t, opListReviews, e, nil); after.(*ListReviewsOut).Total != before.(*ListReviewsOut).Total {
		t.Error("a refused write filed review items")
	}
}
