//go:build unix

package vaultfs

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fixture lays out a vault with every kind of hostile entry:
//
//	outside/secret.md, outside/dir/x.md    beside the vault
//	vault/.synapse/token, synapse.db       private
//	vault/wiki/a.md                        a page
//	vault/wiki/sub/b.md                    a page in a folder
//	vault/wiki/fifo.md                     a named pipe
//	vault/wiki/sock.md                     a socket
//	vault/wiki/in.md -> sub/b.md           a symlink that stays inside
//	vault/wiki/out.md -> ../../outside/secret.md
//	vault/wiki/outdir -> ../../outside/dir a folder symlink out
//	vault/wiki/indir -> ../raw/sources     a folder symlink inside
//	vault/wiki/loop.md -> loop.md          a loop
//	vault/wiki/tok.md -> ../.synapse/token a symlink to the token
//	vault/wiki/hard.md                     a hard link to the token
//	vault/raw/sources/s.md                 a source
//	vault/raw/sources/up.md -> ../../wiki/a.md  leaves raw/sources/
func fixture(t testing.TB) (*FS, string) {
	t.Helper()
	base := t.TempDir()
	v := filepath.Join(base, "vault")
	w := func(rel, body string) {
		p := filepath.Join(base, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(v, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
	w("outside/secret.md", "SECRET\n")
	w("outside/dir/x.md", "SECRET X\n")
	w("vault/.synapse/token", "TOKEN\n")
	w("vault/.synapse/synapse.db", "DB\n")
	w("vault/wiki/a.md", "page a\n")
	w("vault/wiki/sub/b.md", "page b\n")
	w("vault/raw/sources/s.md", "source s\n")
	if err := syscall.Mkfifo(filepath.Join(v, "wiki/fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(v, "wiki/sock.md"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ln("sub/b.md", "wiki/in.md")
	ln("../../outside/secret.md", "wiki/out.md")
	ln("../../outside/dir", "wiki/outdir")
	ln("../raw/sources", "wiki/indir")
	ln("loop.md", "wiki/loop.md")
	ln("../.synapse/token", "wiki/tok.md")
	ln("../../wiki/a.md", "raw/sources/up.md")
	if err := os.Link(filepath.Join(v, ".synapse/token"), filepath.Join(v, "wiki/hard.md")); err != nil {
		t.Fatal(err)
	}
	return New(v), base
}

// within fails the test when fn has not returned in a few seconds: a
// hang detector, not a timing assertion.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s hangs", what)
	}
}

func reason(err error) Reason {
	if r, ok := AsRefusal(err); ok {
		return r.Reason
	}
	return ""
}

func TestRead_Confinement(t *testing.T) {
	f, _ := fixture(t)
	ctx := context.Background()
	cases := []struct {
		path   string
		want   string // content, or ""
		reason Reason
		nf     bool // not found
	}{
		{path: "wiki/a.md", want: "page a\n"},
		{path: "wiki/sub/b.md", want: "page b\n"},
		{path: "wiki/in.md", want: "page b\n"},
		{path: "wiki/indir/s.md", want: "source s\n"},
		{path: "wiki/fifo.md", reason: NotRegular},
		{path: "wiki/sock.md", reason: NotRegular},
		{path: "wiki/out.md", reason: Outside},
		{path: "wiki/outdir/x.md", reason: Outside},
		{path: "wiki/loop.md", reason: Loop},
		{path: "wiki/tok.md", reason: Private},
		{path: "wiki/hard.md", reason: Private},
		{path: ".synapse/token", reason: Private},
		{path: "../outside/secret.md", reason: BadPath},
		{path: "/etc/passwd", reason: BadPath},
		{path: "wiki/a.md\x00", reason: BadPath},
		{path: "wiki/none.md", nf: true},
		{path: "wiki/a.md/x", nf: true},
	}
	for _, c := range cases {
		within(t, "read "+c.path, func() {
			data, _, err := f.ReadFile(ctx, c.path, 1<<20)
			switch {
			case c.want != "":
				if err != nil || string(data) != c.want {
					t.Errorf("%s: %q %v", c.path, data, err)
				}
			case c.nf:
				if !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s: want not found, got %v", c.path, err)
				}
			default:
				if reason(err) != c.reason || data != nil {
					t.Errorf("%s: want %s, got %q %v", c.path, c.reason, data, err)
				}
				if err != nil && strings.Contains(err.Error(), "SECRET") {
					t.Errorf("%s: the refusal leaks content: %v", c.path, err)
				}
			}
		})
	}
	// a folder is neither content nor a refusal
	if _, _, err := f.ReadFile(ctx, "wiki/sub", 1<<20); !errors.Is(err, ErrIsDir) {
		t.Errorf("folder: %v", err)
	}
	// the size limit is checked before reading
	if _, _, err := f.ReadFile(ctx, "wiki/a.md", 3); reason(err) != TooLarge {
		t.Errorf("limit: %v", err)
	}
}

func TestReaderUnder_StaysInFolder(t *testing.T) {
	f, _ := fixture(t)
	r, err := f.ReaderUnder("raw/sources")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	if data, _, err := r.ReadFile(ctx, "raw/sources/s.md", 100); err != nil || string(data) != "source s\n" {
		t.Fatalf("s.md: %q %v", data, err)
	}
	if _, _, err := r.ReadFile(ctx, "raw/sources/up.md", 100); reason(err) != Outside {
		t.Fatalf("up.md leaves raw/sources/: %v", err)
	}
	if _, _, err := r.ReadFile(ctx, "wiki/a.md", 100); reason(err) != Outside {
		t.Fatalf("a path outside the folder: %v", err)
	}
	// a raw/sources/ that is itself a symlink out is refused as a whole
	v := f.Root()
	if err := os.Rename(filepath.Join(v, "raw/sources"), filepath.Join(v, "raw/real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../outside/dir", filepath.Join(v, "raw/sources")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReaderUnder("raw/sources"); reason(err) != Outside {
		t.Fatalf("raw/sources -> outside: %v", err)
	}
}

func TestRead_Cancelled(t *testing.T) {
	f, _ := fixture(t)
	big := filepath.Join(f.Root(), "raw/sources/big.jsonl")
	fh, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// sparse: 8 GiB of nothing on disk
	if err := fh.Truncate(8 << 30); err != nil {
		t.Skip("no sparse files here:", err)
	}
	fh.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	within(t, "a cancelled read of 8 GiB", func() {
		if _, _, err := f.ReadFile(ctx, "raw/sources/big.jsonl", 16<<30); !errors.Is(err, context.Canceled) {
			t.Errorf("read: %v", err)
		}
		o, _, err := f.Open("raw/sources/big.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		if _, _, err := Hash(ctx, nil, o); !errors.Is(err, context.Canceled) {
			t.Errorf("hash: %v", err)
		}
	})
}

func TestWrite_NeverThroughSymlinks(t *testing.T) {
	f, base := fixture(t)
	v := f.Root()
	outside := func() []string {
		var out []string
		filepath.WalkDir(filepath.Join(base, "outside"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
		sort.Strings(out)
		return out
	}
	before := outside()
	// temporary files and folders: never in or through a symlinked folder
	if _, err := f.CreateTemp("wiki/outdir", ".x.*.tmp"); reason(err) != Symlink {
		t.Errorf("create in a symlinked folder: %v", err)
	}
	if _, err := f.CreateTemp("wiki/indir", ".x.*.tmp"); reason(err) != Symlink {
		t.Errorf("create in a symlinked folder inside: %v", err)
	}
	if _, err := f.MkdirAll("wiki/outdir/new"); reason(err) != Symlink {
		t.Errorf("mkdir through a symlink: %v", err)
	}
	// a symlink is never replaced, nor appended through
	tmp, err := f.CreateTemp("wiki", ".t.*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	tmp.WriteString("new\n")
	tmp.Close()
	tmpRel := "wiki/" + filepath.Base(tmp.Name())
	for _, p := range []string{"wiki/out.md", "wiki/in.md", "wiki/fifo.md", "wiki/sock.md", "wiki/outdir"} {
		if err := f.Rename(tmpRel, p, false); reason(err) == "" {
			t.Errorf("rename over %s: %v", p, err)
		}
	}
	for _, p := range []string{"wiki/out.md", "wiki/in.md"} {
		if st, err := os.Lstat(filepath.Join(v, p)); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink", p)
		}
	}
	within(t, "append to a fifo", func() {
		for _, p := range []string{"wiki/out.md", "wiki/in.md", "wiki/fifo.md", "wiki/sock.md", "wiki/hard.md", ".synapse/token"} {
			if _, err := f.OpenAppend(p); reason(err) == "" {
				t.Errorf("append to %s: %v", p, err)
			}
		}
	})
	// what is allowed works
	if err := f.Rename(tmpRel, "wiki/a.md", false); err != nil {
		t.Fatal(err)
	}
	if err := f.Rename(tmpRel, "wiki/a.md", false); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("rename of a gone file: %v", err)
	}
	a, err := f.OpenAppend("wiki/a.md")
	if err != nil {
		t.Fatal(err)
	}
	a.WriteString("more\n")
	a.Close()
	if data, _ := os.ReadFile(filepath.Join(v, "wiki/a.md")); string(data) != "new\nmore\n" {
		t.Fatalf("a.md: %q", data)
	}
	made, err := f.MkdirAll("wiki/x/y")
	if err != nil || strings.Join(made, ",") != "wiki/x,wiki/x/y" {
		t.Fatalf("mkdir: %v %v", made, err)
	}
	if err := f.SyncDir("wiki/x"); err != nil {
		t.Fatal(err)
	}
	// no-replace
	t2, _ := f.CreateTemp("wiki", ".t.*.tmp")
	t2.Close()
	t2Rel := "wiki/" + filepath.Base(t2.Name())
	if err := f.Rename(t2Rel, "wiki/a.md", true); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("no-replace over a file: %v", err)
	}
	if err := f.Rename(t2Rel, "wiki/c.md", true); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove("wiki/c.md"); err != nil {
		t.Fatal(err)
	}
	if got := outside(); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Fatalf("files outside the vault changed: %v", got)
	}
	if data, _ := os.ReadFile(filepath.Join(base, "outside/secret.md")); string(data) != "SECRET\n" {
		t.Fatalf("secret.md: %q", data)
	}
}

func TestWalk_ReportsAndConfines(t *testing.T) {
	f, _ := fixture(t)
	r, err := f.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []string
	within(t, "walk", func() {
		err = r.Walk(context.Background(), []string{"wiki", "wiki/none"}, func(e Entry) error {
			switch {
			case e.Refused != nil:
				got = append(got, e.Path+" refused "+string(e.Refused.Reason))
			case e.Info.IsDir():
				got = append(got, e.Path+"/")
			case e.Link:
				got = append(got, e.Path+" link")
			default:
				got = append(got, e.Path)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"wiki/a.md", "wiki/fifo.md refused not_regular", "wiki/hard.md", "wiki/in.md link",
		"wiki/indir/", "wiki/loop.md refused loop", "wiki/out.md refused outside",
		"wiki/outdir refused outside", "wiki/sock.md refused not_regular", "wiki/sub/", "wiki/sub/b.md",
		"wiki/tok.md link", "wiki/indir/s.md link", "wiki/indir/up.md link",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("walk:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// a folder reached both really and through a link is walked once
	var n int
	r.Walk(context.Background(), []string{"wiki", "raw"}, func(e Entry) error {
		if strings.HasSuffix(e.Path, "/s.md") {
			n++
		}
		return nil
	})
	if n != 1 {
		t.Fatalf("s.md met %d times", n)
	}
}

// TestNew_LayersCoexist: two layers on one vault (two Envs of one
// process) see each other's writes at once and keep the same
// confinement; neither depends on the other being open.
func TestNew_LayersCoexist(t *testing.T) {
	f, _ := fixture(t)
	g := New(f.Root())
	if g == f || g.Root() != f.Root() {
		t.Fatalf("New gave %p %s for %p %s", g, g.Root(), f, f.Root())
	}
	if _, _, err := g.ReadFile(context.Background(), "wiki/a.md", 1<<20); err != nil {
		t.Fatal(err)
	}
	tmp, err := f.CreateTemp("wiki", ".n.*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmp.Write([]byte("new\n")); err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	rel := "wiki/" + filepath.Base(tmp.Name())
	if err := f.Rename(rel, "wiki/n.md", true); err != nil {
		t.Fatal(err)
	}
	if data, _, err := g.ReadFile(context.Background(), "wiki/n.md", 1<<20); err != nil || string(data) != "new\n" {
		t.Fatalf("the other layer read %q %v", data, err)
	}
	if _, _, err := g.ReadFile(context.Background(), "wiki/out.md", 1<<20); reason(err) != Outside {
		t.Fatalf("the other layer followed a symlink out: %v", err)
	}
	if _, err := g.CreateTemp("wiki/outdir", ".x.*.tmp"); reason(err) != Symlink {
		t.Fatalf("the other layer wrote through a symlink: %v", err)
	}
}

// BenchmarkReadFile: a page read through the layer against os.ReadFile
// (the cost of the confinement: a stat through the root, an open through
// it, a second stat).
func BenchmarkReadFile(b *testing.B) {
	f, _ := fixture(b)
	ctx := context.Background()
	b.Run("vaultfs", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, _, err := f.ReadFile(ctx, "wiki/sub/b.md", 1<<20); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("os", func(b *testing.B) {
		p := f.Abs("wiki/sub/b.md")
		for i := 0; i < b.N; i++ {
			if _, err := os.ReadFile(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A vault folder removed and made again at the same path is read afresh,
// not through the layer's view of the old one.
func TestRead_VaultRecreated(t *testing.T) {
	f, _ := fixture(t)
	ctx := context.Background()
	if data, _, err := f.ReadFile(ctx, "wiki/a.md", 100); err != nil || string(data) != "page a\n" {
		t.Fatalf("before: %q %v", data, err)
	}
	if err := os.RemoveAll(f.Root()); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.Root(), "wiki"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(f.Root(), "wiki/a.md"), []byte("new a\n"), 0o644)
	if data, _, err := f.ReadFile(ctx, "wiki/a.md", 100); err != nil || string(data) != "new a\n" {
		t.Fatalf("after: %q %v", data, err)
	}
}
