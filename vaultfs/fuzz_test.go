//go:build unix

package vaultfs

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzConfined throws arbitrary paths at every operation of the layer over
// a vault full of symlinks out, a fifo, a socket and private files: no
// read returns a byte from outside the vault or of a private file, no
// write creates or changes anything outside, nothing hangs or panics.
func FuzzConfined(f *testing.F) {
	for _, s := range []string{
		"wiki/a.md", "wiki/out.md", "wiki/outdir/x.md", "wiki/outdir", "wiki/tok.md", "wiki/hard.md",
		"wiki/fifo.md", "wiki/sock.md", "wiki/loop.md", "wiki/indir/up.md", "../outside/secret.md",
		"wiki/../../outside/secret.md", "/etc/passwd", ".synapse/token", "wiki//in.md", "wiki/./sub/b.md",
		"wiki/sub/../out.md", "raw/sources/up.md", "wiki/outdir/../in.md", "", ".", "wiki\x00",
	} {
		for op := byte(0); op < 6; op++ {
			f.Add(s, op)
		}
	}
	fsys, base := fixture(f)
	outside := filepath.Join(base, "outside")
	snapshot := func() string {
		var b strings.Builder
		filepath.WalkDir(outside, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			b.WriteString(p + "\n")
			if !d.IsDir() {
				data, _ := os.ReadFile(p)
				b.Write(data)
			}
			return nil
		})
		return b.String()
	}
	before := snapshot()
	forbidden := []string{"SECRET", "TOKEN", "DB\n"}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, p string, op byte) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			switch op % 6 {
			case 0:
				data, _, err := fsys.ReadFile(ctx, p, 1<<20)
				for _, bad := range forbidden {
					if strings.Contains(string(data), bad) || (err != nil && strings.Contains(err.Error(), bad)) {
						t.Errorf("ReadFile(%q) leaked %q", p, bad)
					}
				}
			case 1:
				r, err := fsys.ReaderUnder("raw/sources")
				if err != nil {
					t.Error(err) // not Fatal: this runs in its own goroutine
					return
				}
				data, _, err := r.ReadFile(ctx, p, 1<<20)
				r.Close()
				if err == nil && string(data) != "source s\n" {
					t.Errorf("ReaderUnder(raw/sources).ReadFile(%q) = %q", p, data)
				}
			case 2:
				if tf, err := fsys.CreateTemp(p, ".fz.*.tmp"); err == nil {
					name := tf.Name()
					tf.Close()
					real, _ := filepath.EvalSymlinks(filepath.Dir(name))
					if !strings.HasPrefix(real+"/", fsys.Root()+"/") {
						t.Errorf("CreateTemp(%q) made %s", p, name)
					}
					os.Remove(name)
				}
			case 3:
				fsys.MkdirAll(p)
			case 4:
				if a, err := fsys.OpenAppend(p); err == nil {
					a.Close() // nothing written: the check is where it opened
					real, _ := filepath.EvalSymlinks(a.Name())
					if !strings.HasPrefix(real, fsys.Root()+"/") || strings.Contains(real, "/.synapse/") {
						t.Errorf("OpenAppend(%q) opened %s", p, real)
					}
				}
			case 5:
				r, err := fsys.Reader()
				if err != nil {
					t.Error(err) // not Fatal: this runs in its own goroutine
					return
				}
				r.Walk(ctx, []string{p}, func(e Entry) error {
					if e.Info != nil && !e.Info.IsDir() && !strings.HasPrefix(e.Path, "wiki/") && !strings.HasPrefix(e.Path, "raw/") {
						t.Errorf("Walk(%q) met %s", p, e.Path)
					}
					return nil
				})
				r.Close()
			}
		}()
		<-done
		if got := snapshot(); got != before {
			t.Fatalf("op %d on %q changed the files outside the vault:\n%s", op%6, p, got)
		}
	})
}
