package main

import (
	"bytes"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

func TestAuth_TokenFile(t *testing.T) {
	t.Setenv(tokenEnv, "")
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

	os.Chmod(v.Abs(vault.TokenFile), 0o644)
	if _, err := loadToken(v, lg); err != nil || !strings.Contains(logs.String(), "chmod 600") {
		t.Errorf("a readable token file warns: %q %v", logs.String(), err)
	}

	os.WriteFile(v.Abs(vault.TokenFile), []byte("\n"), 0o600)
	if _, err := loadToken(v, lg); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty token file: %v", err)
	}
}

func TestAuth_TokenEnv(t *testing.T) {
	v := testvault.New(t)
	t.Setenv(tokenEnv, "  from-env  ")
	tok, err := loadToken(v, log.New(&bytes.Buffer{}, "", 0))
	if err != nil || tok != "from-env" {
		t.Fatalf("%q %v", tok, err)
	}
	if _, err := os.Stat(v.Abs(vault.TokenFile)); err == nil {
		t.Error("a token file was created although $SYNAPSE_TOKEN is set")
	}
	t.Setenv(tokenEnv, " ")
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
