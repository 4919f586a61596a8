package server

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

func TestAuth_TokenFile(t *testing.T) {
	t.Setenv(TokenEnv, "")
	v := testvault.New(t)
	var logs bytes.Buffer
	lg := log.New(&logs, "", 0)

	tok, err := loadToken(v, lg)
	if err != nil {
		t.Fatal(err)
	}
	if len(tok) != 64 {
		t.Errorf("token %d chars; want 64 hex", len(tok))
	}
	fi, err := os.Stat(v.Abs(vault.TokenFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi.Mode(), err)
	}
	if !strings.Contains(logs.String(), v.Abs(vault.TokenFile)) || strings.Contains(logs.String(), tok) {
		t.Errorf("first start must name the file and never print the token: %q", logs.String())
	}

	logs.Reset()
	again, err := loadToken(v, lg)
	if err != nil || again != tok {
		t.Fatalf("second start: %q %v", again, err)
	}
	if logs.Len() != 0 {
		t.Errorf("the location is printed once: %q", logs.String())
	}

	// a token file others may read or write is replaced: it may have been seen
	for _, mode := range []os.FileMode{0o644, 0o640, 0o602} {
		os.Chmod(v.Abs(vault.TokenFile), mode)
		logs.Reset()
		got, err := loadToken(v, lg)
		if err != nil || got == tok || !strings.Contains(logs.String(), fmt.Sprintf("replaced the token file %s: other users may read or write it (mode %04o)", v.Abs(vault.TokenFile), mode)) {
			t.Errorf("mode %04o: %v %q", mode, err, logs.String())
		}
		tok = got
	}
	os.WriteFile(v.Abs(vault.TokenFile), []byte("\n"), 0o600)
	logs.Reset()
	if got, err := loadToken(v, lg); err != nil || got == "" || !strings.Contains(logs.String(), "it is empty") {
		t.Errorf("empty token file: %v %q", err, logs.String())
	}
}

// TestAuth_TokenShipped: a token file synapse did not make — shipped with
// a cloned vault, owned by the user and mode 0600 (after the chmod an
// older synapse asked for) — is replaced, never accepted; the token
// synapse made instead is kept across restarts.
func TestAuth_TokenShipped(t *testing.T) {
	t.Setenv(TokenEnv, "")
	v := testvault.New(t)
	var logs bytes.Buffer
	lg := log.New(&logs, "", 0)
	const shipped = "shipped-token-known-to-the-attacker"
	os.WriteFile(v.Abs(vault.TokenFile), []byte(shipped+"\n"), 0o600)
	tok, err := loadToken(v, lg)
	if err != nil || tok == shipped || len(tok) != 64 || !strings.Contains(logs.String(), "synapse did not make it for you") {
		t.Fatalf("shipped token: %q %v %q", tok, err, logs.String())
	}
	data, _ := os.ReadFile(v.Abs(vault.TokenFile))
	if strings.TrimSpace(string(data)) != tok {
		t.Errorf("the file holds %q", data)
	}
	logs.Reset()
	if again, err := loadToken(v, lg); err != nil || again != tok || logs.Len() != 0 {
		t.Errorf("restart: %q %v %q", again, err, logs.String())
	}
}

func TestAuth_TokenEnv(t *testing.T) {
	v := testvault.New(t)
	t.Setenv(TokenEnv, "  from-env  ")
	tok, err := loadToken(v, log.New(&bytes.Buffer{}, "", 0))
	if err != nil || tok != "from-env" {
		t.Fatalf("%q %v", tok, err)
	}
	if _, err := os.Stat(v.Abs(vault.TokenFile)); err == nil {
		t.Error("a token file was created although $SYNAPSE_TOKEN is set")
	}
	t.Setenv(TokenEnv, " ")
	if tok, err := loadToken(v, log.New(&bytes.Buffer{}, "", 0)); err != nil || len(tok) != 64 {
		t.Errorf("an empty $SYNAPSE_TOKEN falls back to the token file: %q %v", tok, err)
	}
}

func TestAuth_TokenMatch(t *testing.T) {
	for _, tt := range []struct {
		got, want string
		ok        bool
	}{
		{"abc", "abc", true}, {"abd", "abc", false}, {"ab", "abc", false}, {"", "abc", false}, {"abcd", "abc", false},
	} {
		if tokenMatch(tt.got, tt.want) != tt.ok {
			t.Errorf("tokenMatch(%q, %q) != %v", tt.got, tt.want, tt.ok)
		}
	}
}

func TestAuth_HostGuard(t *testing.T) {
	g := newHostGuard([]string{"wiki.lan"})
	for _, tt := range []struct {
		host string
		ok   bool
	}{
		{"127.0.0.1:7411", true}, {"localhost:7411", true}, {"LOCALHOST", true}, {"[::1]:7411", true},
		{"10.0.0.5:7411", true}, // an IP literal cannot be rebound
		{"wiki.lan:7411", true}, {"wiki.lan.", true},
		{"evil.example:7411", false}, {"localhost.evil.example", false}, {"", false},
	} {
		if g.allowed(tt.host) != tt.ok {
			t.Errorf("Host %q: allowed=%v", tt.host, !tt.ok)
		}
	}
	for _, tt := range []struct {
		origin, host string
		ok           bool
	}{
		{"localhost:3000", "127.0.0.1:7411", true}, {"127.0.0.1:6274", "127.0.0.1:7411", true},
		{"10.0.0.5:7411", "10.0.0.5:7411", true}, {"wiki.lan", "127.0.0.1:7411", true},
		{"10.0.0.9", "127.0.0.1:7411", false}, {"evil.example", "127.0.0.1:7411", false},
	} {
		if g.originAllowed(tt.origin, tt.host) != tt.ok {
			t.Errorf("Origin %q on %q: allowed=%v", tt.origin, tt.host, !tt.ok)
		}
	}
}

// A token file that is a symlink or a named pipe is replaced at once (a
// pipe would have hung serve), the symlink's target left alone.
func TestAuth_TokenFileNotRegular(t *testing.T) {
	t.Setenv(TokenEnv, "")
	v := testvault.New(t)
	lg := log.New(&bytes.Buffer{}, "", 0)
	other := v.Abs("elsewhere")
	os.WriteFile(other, []byte("0123456789abcdef\n"), 0o600)
	os.Symlink(other, v.Abs(vault.TokenFile))
	if tok, err := loadToken(v, lg); err != nil || len(tok) != 64 {
		t.Errorf("symlink: %q %v", tok, err)
	}
	if data, _ := os.ReadFile(other); string(data) != "0123456789abcdef\n" {
		t.Errorf("the symlink's target was changed: %q", data)
	}
	os.Remove(v.Abs(vault.TokenFile))
	if err := mkfifoFile(v.Abs(vault.TokenFile)); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := loadToken(v, lg); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("fifo: %v", err)
		}
		if st, err := os.Lstat(v.Abs(vault.TokenFile)); err != nil || !st.Mode().IsRegular() {
			t.Errorf("fifo not replaced: %v %v", st, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a token fifo hangs serve")
	}
}
