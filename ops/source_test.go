package ops

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

// canary is the content of every file outside raw/sources/ in the
// confinement fixture: it must never show up in a result or an error.
const canary = "CANARY-7f3e9c-outside-raw-sources"

// confineFixture is a vault whose raw/sources/ holds two readable files
// and every kind of way out: symlinks to files and folders outside
// (relative and absolute), to the vault root, to the store and the token,
// a hard link to the token, a loop, hidden files and a folder next door
// whose name extends "raw/sources".
type confineFixture struct {
	v       *vault.Vault
	env     *Env
	outside string            // a folder outside the vault
	inside  map[string]string // readable vault path → content
}

func newConfineFixture(t testing.TB) *confineFixture {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fixture needs symlinks and hard links")
	}
	v := testvault.New(t)
	fx := &confineFixture{v: v, outside: filepath.Join(filepath.Dir(v.Root), "outside"),
		inside: map[string]string{
			"raw/sources/ok.md":        "# OK\nreadable source\n",
			"raw/sources/sub/inner.md": "inner source, café ☕\n",
		}}
	for p, c := range fx.inside {
		testvault.Write(t, v, p, c)
	}
	for _, p := range []string{"secret.md", "wiki/page.md", "raw/assets/a.md", "raw/sources-evil/x.md", vault.TokenFile} {
		testvault.Write(t, v, p, canary+"\n")
	}
	testvault.Write(t, v, "raw/sources/.hidden.md", canary)
	testvault.Write(t, v, "raw/sources/.git/config", canary)
	must(t, os.MkdirAll(filepath.Join(fx.outside, "dir"), 0o755))
	must(t, os.WriteFile(filepath.Join(fx.outside, "canary.md"), []byte(canary), 0o644))
	must(t, os.WriteFile(filepath.Join(fx.outside, "dir", "canary.md"), []byte(canary), 0o644))
	src := v.Abs(vault.SourcesDir)
	links := map[string]string{
		"link-inside.md":  "ok.md",
		"link-file.md":    "../../secret.md",
		"link-abs.md":     filepath.Join(fx.outside, "canary.md"),
		"link-dir":        "../../../outside/dir",
		"link-absdir":     filepath.Join(fx.outside, "dir"),
		"link-vault":      "../..",
		"link-token.md":   "../../.synapse/token",
		"link-db.md":      "../../.synapse/synapse.db",
		"link-wiki":       "../../wiki",
		"sub/link-up.md":  "../../../secret.md",
		"chain.md":        "link-file.md",
		"loop.md":         "loop.md",
		"link-dangle.md":  "nowhere.md",
		"link-root-etc":   "/etc",
		"link-sources":    ".",
		"link-parent.txt": "..",
	}
	for name, target := range links {
		must(t, os.Symlink(target, filepath.Join(src, filepath.FromSlash(name))))
	}
	env, err := OpenEnv(context.Background(), v, OpenOptions{})
	must(t, err)
	t.Cleanup(func() { env.Close() })
	must(t, os.Link(v.Abs(vault.TokenFile), filepath.Join(src, "hard-token.md")))
	must(t, os.Link(v.Abs(vault.DBFile), filepath.Join(src, "hard-db.md")))
	fx.env = env
	return fx
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func callJSON(t testing.TB, op *Op, env *Env, in map[string]any) (any, error) {
	t.Helper()
	raw, err := json.Marshal(in)
	must(t, err)
	return op.Call(context.Background(), env, raw)
}

// TestSource_ReadEscapes: every way out of raw/sources/ is refused with
// the documented code and no byte of any file.
func TestSource_ReadEscapes(t *testing.T) {
	fx := newConfineFixture(t)
	abs := func(rel string) string { return filepath.ToSlash(fx.v.Abs(rel)) }
	cases := []struct {
		name, path string
		code       errs.Code
	}{
		{"empty", "", errs.Invalid},
		{"blank", "   ", errs.Invalid},
		{"dot", ".", errs.Invalid},
		{"dot slash", "./", errs.Invalid},
		{"the sources folder", "raw/sources", errs.Invalid},
		{"the sources folder slash", "raw/sources/", errs.Invalid},
		{"a folder", "sub", errs.Invalid},
		{"dotdot", "..", errs.Forbidden},
		{"dotdot first", "../../secret.md", errs.Forbidden},
		{"dotdot to token", "../../.synapse/token", errs.Forbidden},
		{"dotdot to store", "../../.synapse/synapse.db", errs.Forbidden},
		{"dotdot middle", "sub/../../../secret.md", errs.Forbidden},
		{"dotdot staying inside", "sub/../ok.md", errs.Forbidden},
		{"dotdot last", "ok.md/..", errs.Forbidden},
		{"dotdot after prefix", "raw/sources/../../secret.md", errs.Forbidden},
		{"dotdot back into sources", "raw/sources/../sources/ok.md", errs.Forbidden},
		{"dotdot many", "../../../../../../../../etc/passwd", errs.Forbidden},
		{"absolute elsewhere", "/etc/passwd", errs.Forbidden},
		{"absolute double slash", "//etc/passwd", errs.Forbidden},
		{"absolute vault file", abs("secret.md"), errs.Forbidden},
		{"absolute token", abs(vault.TokenFile), errs.Forbidden},
		{"absolute store", abs(vault.DBFile), errs.Forbidden},
		{"absolute sibling prefix", abs("raw/sources-evil/x.md"), errs.Forbidden},
		{"absolute with dotdot", abs("raw/sources/../../secret.md"), errs.Forbidden},
		{"absolute outside vault", filepath.ToSlash(filepath.Join(fx.outside, "canary.md")), errs.Forbidden},
		{"symlink to a file outside", "link-file.md", errs.Forbidden},
		{"symlink with prefix", "raw/sources/link-file.md", errs.Forbidden},
		{"symlink absolute target", "link-abs.md", errs.Forbidden},
		{"symlink to a folder outside", "link-dir/canary.md", errs.Forbidden},
		{"symlink to an absolute folder", "link-absdir/canary.md", errs.Forbidden},
		{"symlink folder itself", "link-dir", errs.Forbidden},
		{"symlink to the vault root", "link-vault/secret.md", errs.Forbidden},
		{"symlink to the vault root, token", "link-vault/.synapse/token", errs.Forbidden},
		{"symlink to wiki", "link-wiki/page.md", errs.Forbidden},
		{"symlink to /etc", "link-root-etc/passwd", errs.Forbidden},
		{"symlink to the parent", "link-parent.txt", errs.Forbidden},
		{"symlink to the token", "link-token.md", errs.Forbidden},
		{"symlink to the store", "link-db.md", errs.Forbidden},
		{"symlink from a sub-folder", "sub/link-up.md", errs.Forbidden},
		{"symlink chain", "chain.md", errs.Forbidden},
		{"symlink loop", "loop.md", errs.Forbidden},
		{"dangling symlink", "link-dangle.md", errs.NotFound},
		{"hard link to the token", "hard-token.md", errs.Forbidden},
		{"hard link to the store", "hard-db.md", errs.Forbidden},
		{"hidden file", ".hidden.md", errs.Forbidden},
		{"hidden folder", ".git/config", errs.Forbidden},
		{"store by name", ".synapse/synapse.db", errs.Forbidden},
		{"three dots", ".../secret.md", errs.Forbidden},
		{"encoded dotdot slash", "%2e%2e%2f%2e%2e%2fsecret.md", errs.NotFound},
		{"encoded slash only", "..%2f..%2fsecret.md", errs.Forbidden}, // a hidden name
		{"encoded dots", "%2e%2e/%2e%2e/secret.md", errs.NotFound},
		{"double encoded", "%252e%252e%252fsecret.md", errs.NotFound},
		{"overlong utf-8 dot (U+FFFD after JSON)", "\xc0\xae\xc0\xae/secret.md", errs.NotFound},
		{"fullwidth dots", "．．/．．/secret.md", errs.NotFound},
		{"backslashes", `..\..\secret.md`, errs.Invalid},
		{"backslash inside", `sub\..\..\secret.md`, errs.Invalid},
		{"mixed separators", `sub/..\../secret.md`, errs.Invalid},
		{"NUL", "\x00", errs.Invalid},
		{"NUL truncation", "ok.md\x00../../secret.md", errs.Invalid},
		{"control character", "ok\n.md", errs.Invalid},
		{"tilde", "~/secret.md", errs.NotFound},
		{"file URL", "file:///etc/passwd", errs.NotFound},
		{"not text by extension", "raw/sources/x.png", errs.Invalid},
		{"too long", strings.Repeat("a/", MaxSourcePathBytes), errs.Invalid},
		{"a name over 255 bytes", strings.Repeat("a", 300) + ".md", errs.Invalid},
		{"a folder name over 255 bytes", strings.Repeat("é", 200) + "/x.md", errs.Invalid},
		{"missing", "nope.md", errs.NotFound},
		{"through a file", "ok.md/x.md", errs.NotFound},
	}
	// raw bytes reach the operation from CLI arguments (JSON cannot carry them)
	if _, err := readSource(context.Background(), fx.env, &ReadSourceIn{Path: "\xc0\xae\xc0\xae/secret.md"}); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("overlong UTF-8 dots: %v, want invalid", err)
	}
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := callJSON(t, opReadSource, fx.env, map[string]any{"path": tc.path})
			if err == nil {
				t.Fatalf("path %q was read: %+v", tc.path, out)
			}
			if out != nil {
				t.Fatalf("a refusal returned a result: %+v", out)
			}
			if got := errs.CodeOf(err); got != tc.code {
				t.Errorf("code = %s, want %s (%v)", got, tc.code, err)
			}
			if strings.Contains(errs.Message(err), "CANARY") || strings.Contains(err.Error(), "CANARY") {
				t.Fatalf("error carries file content: %v", err)
			}
			body, _ := MarshalJSON(ErrorEnvelope(err, errs.REST))
			if bytes.Contains(body, []byte("CANARY")) {
				t.Fatalf("envelope carries file content: %s", body)
			}
		})
	}
}

// TestSource_ReadValid: the same file under each accepted spelling.
func TestSource_ReadValid(t *testing.T) {
	fx := newConfineFixture(t)
	ok := fx.inside["raw/sources/ok.md"]
	inner := fx.inside["raw/sources/sub/inner.md"]
	cases := []struct {
		path, wantPath, content string
	}{
		{"ok.md", "raw/sources/ok.md", ok},
		{"raw/sources/ok.md", "raw/sources/ok.md", ok},
		{filepath.ToSlash(fx.v.Abs("raw/sources/ok.md")), "raw/sources/ok.md", ok},
		{"./ok.md", "raw/sources/ok.md", ok},
		{"  ok.md  ", "raw/sources/ok.md", ok},
		{"sub/inner.md", "raw/sources/sub/inner.md", inner},
		{"raw/sources/sub/inner.md", "raw/sources/sub/inner.md", inner},
		{"sub//inner.md", "raw/sources/sub/inner.md", inner},
		{"link-inside.md", "raw/sources/link-inside.md", ok},
		{"link-sources/ok.md", "raw/sources/link-sources/ok.md", ok},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			res, err := callJSON(t, opReadSource, fx.env, map[string]any{"path": tc.path})
			if err != nil {
				t.Fatal(err)
			}
			out := res.(*ReadSourceOut)
			sum := sha256.Sum256([]byte(tc.content))
			want := ReadSourceOut{Path: tc.wantPath, Name: filepath.Base(tc.wantPath), SizeBytes: int64(len(tc.content)),
				SHA256: hex.EncodeToString(sum[:]), SHA256Of: "file", Content: tc.content}
			if *out != want {
				t.Errorf("got  %+v\nwant %+v", *out, want)
			}
		})
	}
}

func TestSource_ReadNotText(t *testing.T) {
	v := testvault.New(t)
	env := &Env{Vault: v}
	files := map[string]string{
		"nul.md":           "# title\n\x00binary",
		"latin1.txt":       "caf\xe9 au lait\n",
		"utf16.txt":        "\xff\xfeh\x00i\x00",
		"png-as-md.md":     "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"real.png":         "plain text in a png",
		"doc.pdf":          "%PDF-1.7 text-looking",
		"noext":            "plain text without an extension\n",
		"noext-bin":        "\x00\x01\x02",
		"late-invalid.txt": strings.Repeat("a", sniffBytes+10) + "\xff\xfe tail\n",
		"UPPER.MD":         "upper-case extension\n",
	}
	for name, c := range files {
		testvault.Write(t, v, "raw/sources/"+name, c)
	}
	refused := map[string]bool{"nul.md": true, "latin1.txt": true, "utf16.txt": true, "png-as-md.md": true,
		"real.png": true, "doc.pdf": true, "noext-bin": true}
	for name, c := range files {
		out, err := readSource(context.Background(), env, &ReadSourceIn{Path: name})
		if refused[name] {
			if errs.CodeOf(err) != errs.Invalid || out != nil {
				t.Errorf("%s: got %+v, %v; want an invalid refusal", name, out, err)
			} else if !strings.Contains(err.Error(), "not a text file") {
				t.Errorf("%s: message %q does not say why", name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if name == "late-invalid.txt" {
			// past the sniffed window invalid bytes become U+FFFD; the
			// hash and size stay those of the file
			if !utf8.ValidString(out.Content) || !strings.Contains(out.Content, "\uFFFD tail") || out.SizeBytes != int64(len(c)) {
				t.Errorf("%s: content not repaired: %q…", name, out.Content[len(out.Content)-12:])
			}
			continue
		}
		if out.Content != c {
			t.Errorf("%s: content %q, want %q", name, out.Content, c)
		}
	}
}

// TestSource_ReadTruncated: a 3 MB text file returns its first 2 MiB,
// cut back to a whole character, with the size of the whole file. No byte
// past the cap is read: the hash is the scanner's whole-file hash while
// its record vouches for the file (sha256_of "file"), else that of the
// returned content ("content").
func TestSource_ReadTruncated(t *testing.T) {
	v := testvault.New(t)
	// "é" is two bytes and "☕" three: with a one-byte lead the 2 MiB
	// boundary falls inside a character
	var b strings.Builder
	b.WriteString("x")
	for b.Len() < 3_000_000 {
		b.WriteString("é☕ line of text\n")
	}
	big := b.String()
	testvault.Write(t, v, "raw/sources/big.md", big)
	exact := strings.Repeat("abcdefgh", MaxSourceRead/8)
	testvault.Write(t, v, "raw/sources/exact.txt", exact)
	env, _ := openEnv(t, v)
	// the scan runs "later" than the write, so its record is not racy
	env.Index.Now = func() time.Time { return time.Now().Add(time.Hour) }
	if _, err := env.Index.Scan(context.Background(), index.ScanOptions{}); err != nil {
		t.Fatal(err)
	}

	check := func(out *ReadSourceOut, size int, of, sum string) {
		t.Helper()
		switch {
		case !out.Truncated:
			t.Error("truncated = false")
		case len(out.Content) > MaxSourceRead || len(out.Content) < MaxSourceRead-utf8.UTFMax:
			t.Errorf("content is %d bytes, want about %d", len(out.Content), MaxSourceRead)
		case !utf8.ValidString(out.Content) || !strings.HasPrefix(big, out.Content):
			t.Error("content is not a whole-character prefix of the file")
		case out.SizeBytes != int64(size):
			t.Errorf("size_bytes = %d, want %d", out.SizeBytes, size)
		case out.SHA256Of != of || out.SHA256 != sum:
			t.Errorf("sha256 of %s %s…, want of %s %s…", out.SHA256Of, out.SHA256[:12], of, sum[:12])
		}
	}
	out, err := readSource(context.Background(), env, &ReadSourceIn{Path: "big.md"})
	must(t, err)
	whole := sha256.Sum256([]byte(big))
	check(out, len(big), "file", hex.EncodeToString(whole[:]))

	// changed since the scan: the scanner's hash no longer vouches for it
	f, err := os.OpenFile(v.Abs("raw/sources/big.md"), os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	f.WriteString("more\n")
	f.Close()
	out, err = readSource(context.Background(), env, &ReadSourceIn{Path: "big.md"})
	must(t, err)
	content := sha256.Sum256([]byte(out.Content))
	check(out, len(big)+5, "content", hex.EncodeToString(content[:]))

	out, err = readSource(context.Background(), env, &ReadSourceIn{Path: "exact.txt"})
	must(t, err)
	if out.Truncated || out.Content != exact || out.SHA256Of != "file" {
		t.Errorf("a file of exactly 2 MiB: truncated=%v, %d bytes, sha256 of %s", out.Truncated, len(out.Content), out.SHA256Of)
	}
}

// FuzzSourceConfinement: no input reads anything but the files inside
// raw/sources/, and no refusal carries a byte of any file.
func FuzzSourceConfinement(f *testing.F) {
	fx := newConfineFixture(f)
	for _, s := range []string{
		"ok.md", "raw/sources/ok.md", "sub/inner.md", "../../secret.md", "link-file.md", "link-dir/canary.md",
		"link-vault/secret.md", "link-vault/.synapse/token", "hard-token.md", "link-sources/link-file.md",
		"/etc/passwd", filepath.ToSlash(fx.v.Abs("secret.md")), filepath.ToSlash(fx.v.Abs("raw/sources/ok.md")),
		"%2e%2e%2fsecret.md", `..\secret.md`, "ok.md\x00", ".", "", "sub/./inner.md", "raw/sources/raw/sources/ok.md",
		"link-inside.md", "chain.md", "link-parent.txt/secret.md", "link-wiki/page.md",
	} {
		f.Add(s)
	}
	allowed := map[string]bool{}
	for _, c := range fx.inside {
		allowed[c] = true
	}
	f.Fuzz(func(t *testing.T, p string) {
		out, err := readSource(context.Background(), fx.env, &ReadSourceIn{Path: p})
		if err != nil {
			if out != nil {
				t.Fatalf("%q: refusal with a result", p)
			}
			switch errs.CodeOf(err) {
			case errs.Invalid, errs.Forbidden, errs.NotFound:
			default:
				t.Fatalf("%q: unexpected code %s: %v", p, errs.CodeOf(err), err)
			}
			if strings.Contains(err.Error(), "CANARY") {
				t.Fatalf("%q: error carries file content: %v", p, err)
			}
			return
		}
		if strings.Contains(out.Content, "CANARY") {
			t.Fatalf("%q read a file outside raw/sources/: %+v", p, out)
		}
		if !allowed[out.Content] {
			t.Fatalf("%q returned content of no file inside raw/sources/: %q", p, out.Content)
		}
		if !strings.HasPrefix(out.Path, vault.SourcesDir+"/") || strings.Contains(out.Path, "..") {
			t.Fatalf("%q: result path %q is not under raw/sources/", p, out.Path)
		}
	})
}
