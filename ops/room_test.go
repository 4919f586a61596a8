package ops

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

// fullAfterPage is a disk that fills once the page is written: index.md's
// temporary file, and the append to log.md, fail with ENOSPC.
type fullAfterPage struct {
	osFS
	log, index bool
}

func (f fullAfterPage) CreateTemp(dir, pattern string) (tempFile, error) {
	if f.index && strings.Contains(pattern, "index.md") {
		return nil, &os.PathError{Op: "write", Path: filepath.Join(dir, pattern), Err: syscall.ENOSPC}
	}
	return f.osFS.CreateTemp(dir, pattern)
}

func (f fullAfterPage) OpenAppend(name string) (tempFile, error) {
	if f.log {
		return nil, &os.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
	}
	return f.osFS.OpenAppend(name)
}

// TestWritePage_SideFilesFailAfterThePage: when log.md or index.md cannot
// be written after the page was (a disk that filled meanwhile), the write
// completes its page — indexed, its missing-page items filed — and says
// what failed as a warning; before, it failed as an internal error with
// its items never filed. The next source rescan regenerates index.md.
func TestWritePage_SideFilesFailAfterThePage(t *testing.T) {
	for _, tc := range []struct {
		name       string
		fs         fullAfterPage
		logMissing bool
	}{
		{"index.md", fullAfterPage{index: true}, false},
		{"log.md", fullAfterPage{log: true}, true},
		{"both", fullAfterPage{index: true, log: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := testvault.New(t)
			e := newTestEnv(t, v)
			write(t, e, &WritePageIn{Title: "Before", Content: "x\n"})
			withFS(e, tc.fs)
			out := write(t, e, &WritePageIn{Title: "Full disk", Content: "It links [[Nowhere yet]].\n"})
			if len(out.Notes) == 0 || (tc.fs.index && !strings.Contains(strings.Join(out.Notes, " "), "index.md was not regenerated")) {
				t.Fatalf("warnings %q", out.Notes)
			}
			if len(out.Filed) != 1 || out.Filed[0] != "Nowhere yet" {
				t.Errorf("filed %v", out.Filed)
			}
			if g := getPageOut(t, e, "Full disk"); g.SHA256 != out.SHA256 {
				t.Errorf("not indexed: %+v", g)
			}
			log, _ := os.ReadFile(v.Abs(vault.LogPage))
			if strings.Contains(string(log), "Full disk") == tc.logMissing {
				t.Errorf("log.md: %q", log)
			}
			withFS(e, nil)
			index, _ := os.ReadFile(v.Abs(vault.IndexPage))
			if tc.fs.index == strings.Contains(string(index), "Full disk") {
				t.Fatalf("index.md before the rescan: %q", index)
			}
			if _, err := callJSON(t, opRescan, e, nil); err != nil {
				t.Fatal(err)
			}
			index, _ = os.ReadFile(v.Abs(vault.IndexPage))
			if !strings.Contains(string(index), "full-disk") {
				t.Errorf("index.md after the rescan: %q", index)
			}
		})
	}
}

// TestWritePage_RefusedWhenTheDiskIsFull: with less room left than the
// page, a second index.md and the store's growth need, a write refuses
// before it changes anything (unavailable, saying how much is free).
func TestWritePage_RefusedWhenTheDiskIsFull(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	write(t, e, &WritePageIn{Title: "Before", Content: "x\n"})
	snap := snapshot(t, v)
	old := freeSpace
	freeSpace = func(string) (int64, bool) { return 40 << 10, true }
	defer func() { freeSpace = old }()
	_, err := WritePage(context.Background(), e, &WritePageIn{Title: "After", Content: "y [[Z]]\n"})
	if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "has 40 KiB free") {
		t.Fatalf("write: %v", err)
	}
	if after := snapshot(t, v); !reflect.DeepEqual(after, snap) {
		t.Fatalf("a refused write changed the vault")
	}
	if r, _ := callJSON(t, opListReviews, e, nil); r.(*ListReviewsOut).Total != 0 {
		t.Error("a refused write filed review items")
	}
}

// TestWritePage_RefusedWithoutRoom: a write refuses before it changes
// anything when log.md cannot be written (a permission; root writes
// anyway, so this runs as another user only).
func TestWritePage_RefusedWithoutRoom(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes where permissions forbid it (the quick suite's disk-full row covers a real full disk)")
	}
	v := testvault.New(t)
	e := newTestEnv(t, v)
	write(t, e, &WritePageIn{Title: "Before", Content: "x\n"})
	snap := snapshot(t, v)
	must(t, os.Chmod(v.Abs(vault.LogPage), 0o444))
	defer os.Chmod(v.Abs(vault.LogPage), 0o644)
	_, err := WritePage(context.Background(), e, &WritePageIn{Title: "After", Content: "y\n"})
	if err == nil || !strings.Contains(err.Error(), "wiki/log.md cannot be written") {
		t.Fatalf("write: %v", err)
	}
	if after := snapshot(t, v); len(after) != len(snap) {
		t.Fatalf("a refused write changed the vault")
	}
}
