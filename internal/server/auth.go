package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/vault"
)

// TokenEnv names the environment variable that overrides .synapse/token.
const TokenEnv = "SYNAPSE_TOKEN"

// loadToken returns the bearer token every HTTP route but /healthz needs:
// $SYNAPSE_TOKEN (when not empty), else the vault's .synapse/token, created (0600, 32 random
// bytes in hex) on first use with its location printed once. The token
// itself is never logged. A token file others can read or write, one
// another user owns, or anything but a regular file (a symlink, a named
// pipe) is refused, saying how to fix it: serve does not start with a
// token others may have seen.
func loadToken(v *vault.Vault, logger *log.Logger) (string, error) {
	if t := strings.TrimSpace(os.Getenv(TokenEnv)); t != "" {
		return t, nil
	}
	path := v.Abs(vault.TokenFile)
	f, err := openToken(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createToken(path, logger)
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", errs.Wrap(errs.Internal, err, "read the token file %s: %v", path, err)
	}
	t := strings.TrimSpace(string(data))
	if t == "" {
		return "", errs.E(errs.Invalid, "the token file %s is empty; delete it to have a new token generated", path)
	}
	return t, nil
}

func createToken(path string, logger *log.Logger) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", errs.Wrap(errs.Internal, err, "generate a token: %v", err)
	}
	tok := hex.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		// another process created it first: use theirs
		data, rerr := os.ReadFile(path)
		if rerr == nil && strings.TrimSpace(string(data)) != "" {
			return strings.TrimSpace(string(data)), nil
		}
	}
	if err != nil {
		return "", errs.Wrap(errs.Internal, err, "create the token file %s: %v", path, err)
	}
	_, err = f.WriteString(tok + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", errs.Wrap(errs.Internal, err, "write the token file %s: %v", path, err)
	}
	logger.Printf("created an access token in %s (mode 0600); HTTP clients send it as 'Authorization: Bearer <token>'", path)
	return tok, nil
}

// tokenMatch compares a presented token with the expected one in constant
// time (hashing first, so the length does not leak either).
func tokenMatch(got, want string) bool {
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// bearer extracts the token of an "Authorization: Bearer X" header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// requireToken answers 401 with WWW-Authenticate unless the request carries
// the token.
func requireToken(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r)
		switch {
		case !ok:
			w.Header().Set("WWW-Authenticate", `Bearer realm="synapse"`)
			writeError(w, http.StatusUnauthorized, errs.E(errs.Unauthorized, "missing 'Authorization: Bearer <token>'; the token is in $%s or %s", TokenEnv, vault.TokenFile))
		case !tokenMatch(got, token):
			w.Header().Set("WWW-Authenticate", `Bearer realm="synapse", error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, errs.E(errs.Unauthorized, "wrong bearer token; the token is in $%s or %s", TokenEnv, vault.TokenFile))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// hostGuard protects against DNS rebinding: a web page that makes its own
// name resolve to 127.0.0.1 still sends that name in Host (and its origin
// in Origin). Accepted: IP literals (rebinding needs a DNS name),
// "localhost" and the names given with --allow-host.
type hostGuard struct {
	names map[string]bool
}

func newHostGuard(extra []string) *hostGuard {
	g := &hostGuard{names: map[string]bool{"localhost": true}}
	for _, n := range extra {
		g.names[strings.ToLower(strings.TrimSuffix(strings.TrimSpace(n), "."))] = true
	}
	return g
}

func (g *hostGuard) allowed(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	if h == "" {
		return false
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	return g.names[strings.ToLower(strings.TrimSuffix(h, "."))]
}

// originAllowed accepts a browser origin on this server itself, on a
// loopback address or on an allowed name.
func (g *hostGuard) originAllowed(origin, host string) bool {
	if strings.EqualFold(origin, host) {
		return true
	}
	h := origin
	if hh, _, err := net.SplitHostPort(origin); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.IsLoopback()
	}
	return g.names[strings.ToLower(strings.TrimSuffix(h, "."))]
}

func (g *hostGuard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.allowed(r.Host) {
			writeError(w, http.StatusForbidden, errs.E(errs.Forbidden, "Host %q is not accepted (DNS rebinding protection); use 127.0.0.1 or localhost, or start the server with --allow-host NAME", r.Host))
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !g.originAllowed(u.Host, r.Host) {
				writeError(w, http.StatusForbidden, errs.E(errs.Forbidden, "Origin %q is not accepted (DNS rebinding protection)", o))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
