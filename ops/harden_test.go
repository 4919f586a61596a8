//go:build unix

package ops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

// Hostile-vault reproductions at the domain level (no server): a named pipe
// or a symlink out of the vault where synapse reads or writes. Each
// operation answers at once, names what it refused (forbidden) and
// touches nothing outside the vault.

// answers fails the test when fn has not returned within seconds: a hang
// detector (today's main blocks forever on these), not a timing assertion.
func answers(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatalf("%s hangs", what)
	}
}

func mkfifo(t *testing.T, abs string) {
	t.Helper()
	if err := os.Remove(abs); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(abs, 0o644); err != nil {
		t.Fatal(err)
	}
}

// outsideDir is a folder beside the vault with one secret file.
func outsideDir(t *testing.T, v *vault.Vault) string {
	t.Helper()
	out := filepath.Join(filepath.Dir(v.Root), "outside")
	must(t, os.MkdirAll(out, 0o755))
	must(t, os.WriteFile(filepath.Join(out, "secret.md"), []byte("OUTSIDE-SECRET\n"), 0o644))
	return out
}

func listDir(t *testing.T, dir string) string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != dir {
			data, _ := os.ReadFile(p)
			names = append(names, strings.TrimPrefix(p, dir)+"="+string(data))
		}
		return nil
	})
	return strings.Join(names, "\n")
}

func TestHarden_FifoAtPage(t *testing.T) {
	v := testvault.New(t)
	e := newTestEnv(t, v)
	out := write(t, e, &WritePageIn{Title: "Piped", Content: "# Piped\n\nzebra words\n"})
	mkfifo(t, v.Abs(out.Path))
	answers(t, "get_page of a fifo", func() {
		_, err := getPage(context.Background(), e, &GetPageIn{Title: "Piped"})
		wantCode(t, err, errs.Forbidden, out.Path, "named pipe")
	})
	answers(t, "search over a fifo", func() {
		if _, err := searchWiki(context.Background(), e, &SearchIn{Query: `"zebra words"`, K: 5}); err != nil {
			t.Errorf("search: %v", err)
		}
	})
	answers(t, "write_page to a fifo", func() {
		_, err := WritePage(context.Background(), e, &WritePageIn{Title: "Piped", Content: "new\n"})
		wantCode(t, err, errs.Forbidden, out.Path, "named pipe")
	})
	// the scan skips it, says so, and status lists it
	answers(t, "rescan over a fifo", func() {
		rep, err := e.Index.Scan(context.Background(), index.ScanOptions{})
		must(t, err)
		if rep.RefusedCount != 1 || rep.Refused[0].Path != out.Path || rep.Refused[0].Reason != "not_regular" {
			t.Errorf("report refused: %+v", rep.Refused)
		}
	})
	st, err := status(context.Background(), e, &StatusIn{})
	must(t, err)
	if st.RefusedCount != 1 || len(st.Refused) != 1 || !strings.Contains(st.Refused[0].Message, "named pipe") {
		t.Errorf("status refused: %d %+v", st.RefusedCount, st.Refused)
	}
	// and lint lists it too, as a finding of its own
	li := &LintIn{Limit: 50}
	lo, err := lint(context.Background(), e, li)
	must(t, err)
	if lo.Counts.RefusedFiles != 1 || len(lo.RefusedFiles) != 1 || lo.RefusedFiles[0].Path != out.Path || lo.RefusedFiles[0].Reason != "not_regular" {
		t.Errorf("lint refused_files: %d %+v", lo.Counts.RefusedFiles, lo.RefusedFiles)
	}
	// once it is a file again, the next scan forgets the refusal
	must(t, os.Remove(v.Abs(out.Path)))
	testvault.Write(t, v, out.Path, "# Piped\n\nback\n")
	_, err = e.Index.Scan(context.Background(), index.ScanOptions{})
	must(t, err)
	if st, _ := status(context.Background(), e, &StatusIn{}); st.RefusedCount != 0 {
		t.Errorf("status still lists %+v", st.Refused)
	}
	if lo, err := lint(context.Background(), e, li); err != nil || lo.Counts.RefusedFiles != 0 || len(lo.RefusedFiles) != 0 {
		t.Errorf("lint still lists %+v (%v)", lo.RefusedFiles, err)
	}
}

func TestHarden_FifoAtLogAndIndex(t *testing.T) {
	for _, p := range []string{vault.LogPage, vault.IndexPage} {
		t.Run(p, func(t *testing.T) {
			v := testvault.New(t)
			e, _ := openEnv(t, v)
			write(t, e, &WritePageIn{Title: "Before", Content: "x\n"})
			mkfifo(t, v.Abs(p))
			for i := 0; i < 2; i++ { // and the write after it does not hang either
				answers(t, "write_page with a fifo at "+p, func() {
					_, err := WritePage(context.Background(), e, &WritePageIn{Title: "After", Content: "y\n"})
					wantCode(t, err, errs.Forbidden, p, "named pipe")
				})
			}
			if _, err := os.Stat(v.Abs("wiki/concepts/after.md")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused write wrote its page: %v", err)
			}
			if st, _ := os.Lstat(v.Abs(p)); st.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("%s was replaced", p)
			}
		})
	}
}

func TestHarden_SymlinkedFolderIsNotWrittenThrough(t *testing.T) {
	v := testvault.New(t)
	out := outsideDir(t, v)
	before := listDir(t, out)
	must(t, os.RemoveAll(v.Abs("wiki/concepts")))
	must(t, os.Symlink("../../outside", v.Abs("wiki/concepts")))
	e, _ := openEnv(t, v)
	_, err := WritePage(context.Background(), e, &WritePageIn{Title: "Sym Concept", Content: "body\n"})
	wantCode(t, err, errs.Forbidden, "wiki/concepts", "symlink")
	if got := listDir(t, out); got != before {
		t.Fatalf("a write landed outside the vault:\n%s", got)
	}
	// the outside files are not indexed either
	if _, err := getPage(context.Background(), e, &GetPageIn{Title: "secret"}); errs.CodeOf(err) != errs.NotFound {
		t.Errorf("get_page of an outside file: %v", err)
	}
}

func TestHarden_SymlinkedPageLogPurpose(t *testing.T) {
	v := testvault.New(t)
	out := outsideDir(t, v)
	e, _ := openEnv(t, v)
	page := write(t, e, &WritePageIn{Title: "Linked", Content: "# Linked\n\nmine\n"})
	before := listDir(t, out)

	// a page replaced by a symlink to an outside file is not returned
	must(t, os.Remove(v.Abs(page.Path)))
	must(t, os.Symlink(filepath.Join(out, "secret.md"), v.Abs(page.Path)))
	got, err := getPage(context.Background(), e, &GetPageIn{Title: "Linked"})
	wantCode(t, err, errs.Forbidden, page.Path, "outside the vault")
	if got != nil || strings.Contains(errs.Message(err), "OUTSIDE-SECRET") {
		t.Fatalf("get_page returned outside content: %+v %v", got, err)
	}
	// nor written through
	_, err = WritePage(context.Background(), e, &WritePageIn{Title: "Linked", Content: "overwrite\n"})
	wantCode(t, err, errs.Forbidden, page.Path)

	// log.md a symlink to an outside file: the next write appends nothing
	must(t, os.Remove(v.Abs(vault.LogPage)))
	must(t, os.Symlink(filepath.Join(out, "secret.md"), v.Abs(vault.LogPage)))
	_, err = WritePage(context.Background(), e, &WritePageIn{Title: "Other", Content: "x\n"})
	wantCode(t, err, errs.Forbidden, vault.LogPage, "symlink")
	// review decisions are logged: they refuse on it too
	it := add(t, e, TypeSuggestion, "Decide me")
	_, err = callJSON(t, opResolveReview, e, map[string]any{"id": it.ID, "action": "dismiss"})
	wantCode(t, err, errs.Forbidden, vault.LogPage, "symlink")
	if it2 := item(t, e, it.ID); it2.Status != StatusPending {
		t.Errorf("a decision refused on log.md changed the item: %s", it2.Status)
	}
	must(t, os.Remove(v.Abs(vault.LogPage))) // synapse makes a new one

	// purpose.md a symlink: review create neither copies the outside text in
	// nor writes through it
	must(t, os.Remove(v.Abs(vault.PurposeFile)))
	must(t, os.Symlink(filepath.Join(out, "secret.md"), v.Abs(vault.PurposeFile)))
	it = add(t, e, TypePurposeSuggestion, "Widen the purpose")
	_, err = callJSON(t, opResolveReview, e, map[string]any{"id": it.ID, "action": "create"})
	wantCode(t, err, errs.Forbidden, vault.PurposeFile)
	if strings.Contains(errs.Message(err), "OUTSIDE-SECRET") {
		t.Fatal("the refusal carries the outside file")
	}
	if it2 := item(t, e, it.ID); it2.Status != StatusPending {
		t.Errorf("the refused create changed the item: %s", it2.Status)
	}
	// a purpose.md symlink inside the vault is read, but never written through
	must(t, os.Remove(v.Abs(vault.PurposeFile)))
	testvault.Write(t, v, "notes/purpose-real.md", "# Purpose\n")
	must(t, os.Symlink("notes/purpose-real.md", v.Abs(vault.PurposeFile)))
	_, err = callJSON(t, opResolveReview, e, map[string]any{"id": it.ID, "action": "create"})
	wantCode(t, err, errs.Forbidden, vault.PurposeFile, "symlink")
	if data, _ := os.ReadFile(v.Abs("notes/purpose-real.md")); string(data) != "# Purpose\n" {
		t.Errorf("written through an inside symlink: %q", data)
	}

	if got := listDir(t, out); got != before {
		t.Fatalf("files outside the vault changed:\n%s", got)
	}
}

// A symlink that stays inside the vault is followed for reads.
func TestHarden_InsideSymlinkIsRead(t *testing.T) {
	v := testvault.New(t)
	testvault.Write(t, v, "notes/shared.md", "# Shared\n\nsymlinked words\n")
	must(t, os.Symlink("../notes/shared.md", v.Abs("wiki/shared.md")))
	e, _ := openEnv(t, v)
	got := getPageOut(t, e, "shared")
	if !strings.Contains(got.Content, "symlinked words") || got.Path != "wiki/shared.md" {
		t.Fatalf("get_page: %+v", got)
	}
}
