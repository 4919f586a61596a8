package sock

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
)

// listenFake serves the hello of a synapse server on path, counting the
// connections and what was sent on them.
func listenFake(t *testing.T, path string) (conns *atomic.Int32, got *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns, got = &atomic.Int32{}, &atomic.Int32{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			fmt.Fprintf(c, `{"synapse":"0.1.0","pid":4242,"holder":"fake"}`+"\n")
			go func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				if line, _ := bufio.NewReader(c).ReadString('\n'); line != "" {
					got.Add(1)
				}
			}()
		}
	}()
	return conns, got
}

// shortVault is a vault at a short path (socket paths are bounded).
func shortVault(t *testing.T) *vault.Vault {
	t.Helper()
	dir, err := os.MkdirTemp("", "sk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	v, _, err := vault.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDial_RefusesUnsafeSockets: a serve.sock that is a symlink (to a
// listener outside the vault), not a socket, or open to others is refused
// as ErrUnsafe (wrapped in ErrNoServer) before anything is sent; main
// followed the symlink and sent the whole environment to the listener.
func TestDial_RefusesUnsafeSockets(t *testing.T) {
	cases := []struct {
		name, want string
		make       func(t *testing.T, v *vault.Vault) *atomic.Int32
	}{
		{"symlink to a listener outside", "is a symlink", func(t *testing.T, v *vault.Vault) *atomic.Int32 {
			out := filepath.Join(filepath.Dir(v.Root), filepath.Base(v.Root)+".evil")
			conns, _ := listenFake(t, out)
			t.Cleanup(func() { os.Remove(out) })
			os.Symlink(out, v.Abs(File))
			return conns
		}},
		{"a regular file", "is not a socket", func(t *testing.T, v *vault.Vault) *atomic.Int32 {
			os.WriteFile(v.Abs(File), nil, 0o600)
			return &atomic.Int32{}
		}},
		{"open to others", "is open to other users (mode 0777)", func(t *testing.T, v *vault.Vault) *atomic.Int32 {
			conns, _ := listenFake(t, v.Abs(File))
			os.Chmod(v.Abs(File), 0o777)
			return conns
		}},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			name, want string
			make       func(t *testing.T, v *vault.Vault) *atomic.Int32
		}{"another user's file", "belongs to uid 65534", func(t *testing.T, v *vault.Vault) *atomic.Int32 {
			conns, _ := listenFake(t, v.Abs(File))
			os.Chmod(v.Abs(File), 0o600)
			os.Lchown(v.Abs(File), 65534, 65534)
			return conns
		}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := shortVault(t)
			conns := tc.make(t, v)
			_, err := Dial(v)
			if !errors.Is(err, ErrUnsafe) || !errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v", err)
			}
			if n := conns.Load(); n != 0 {
				t.Errorf("%d connections reached the listener", n)
			}
		})
	}
	// the control: this user's socket, owner-only, is used
	v := shortVault(t)
	conns, _ := listenFake(t, v.Abs(File))
	os.Chmod(v.Abs(File), 0o600)
	sc, err := Dial(v)
	if err != nil {
		t.Fatalf("this user's socket: %v", err)
	}
	sc.Close()
	if conns.Load() != 1 {
		t.Errorf("connections: %d", conns.Load())
	}
}

// TestDial_RefusesAnotherUsersListener: a real socket file owned by this
// user but served by another (uid 65534) is refused by its peer
// credentials, nothing sent. Root only (it runs the listener as another
// user).
func TestDial_RefusesAnotherUsersListener(t *testing.T) {
	if p := os.Getenv("SOCK_TEST_LISTEN"); p != "" {
		ln, err := net.Listen("unix", p)
		if err != nil {
			os.Exit(3)
		}
		os.Chmod(p, 0o777)
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(0)
			}
			fmt.Fprintf(c, `{"synapse":"0.1.0","pid":4242,"holder":"fake"}`+"\n")
			c.Close()
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("runs a listener as another user: root only")
	}
	dir, err := os.MkdirTemp("", "sk")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o777)
	self := filepath.Join(dir, "test.bin")
	data, _ := os.ReadFile(os.Args[0])
	os.WriteFile(self, data, 0o755)
	sockPath := filepath.Join(dir, "l.sock")
	cmd := exec.Command(self, "-test.run=TestDial_RefusesAnotherUsersListener")
	cmd.Env = append(os.Environ(), "SOCK_TEST_LISTEN="+sockPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(sockPath); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	v := shortVault(t)
	if err := os.Rename(sockPath, v.Abs(File)); err != nil {
		t.Skip(err)
	}
	os.Lchown(v.Abs(File), os.Getuid(), os.Getgid())
	os.Chmod(v.Abs(File), 0o600)
	_, err = Dial(v)
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "served by another user") {
		t.Fatalf("got %v", err)
	}
}

// TestNewRequest_ForwardsOnlySettings: a request carries synapse's
// settings and the embeddings key variable, never the rest of the
// caller's environment (main sent all of it).
func TestNewRequest_ForwardsOnlySettings(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
	t.Setenv("SYNAPSE_EMBED_URL", "http://127.0.0.1:1/v1/embeddings")
	t.Setenv("MY_EMBED_KEY", "key")
	req := NewRequest(ops.Lookup("search"), []byte(`{"query":"x"}`), "MY_EMBED_KEY")
	if slices.ContainsFunc(req.Environ, func(kv string) bool { return strings.Contains(kv, "aws-secret") }) ||
		!slices.Contains(req.Environ, "SYNAPSE_EMBED_URL=http://127.0.0.1:1/v1/embeddings") || !slices.Contains(req.Environ, "MY_EMBED_KEY=key") {
		t.Errorf("environ %q", req.Environ)
	}
	if req := NewRequest(ops.Lookup("status"), nil, ""); req.Environ == nil {
		t.Error("an empty environment must travel as [] (the server then reads none of its own)")
	}
}
