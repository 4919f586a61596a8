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
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/vault"
)

// TokenEnv names the environment variable that overrides .synapse/token.
const TokenEnv = "SYNAPSE_TOKEN"

// loadToken returns the bearer token every HTTP route but /healthz needs:
// $SYNAPSE_TOKEN (when not empty), else the vault's .synapse/token. A
// vault arrives from anywhere, so that file is used only if synapse
// created it for this user: a regular file (not a symlink, not a named
// pipe) that the user owns, that nobody else may read or write, and whose
// sha256 synapse recorded in the user's config folder when it made it
// (vault.RecordToken). Anything else — a token shipped with a cloned
// vault, whatever its mode — is replaced by a new one (32 random bytes in
// hex, mode 0600), logged with the reason: an attacker's token is never
// accepted. The token itself is never logged.
func loadToken(v *vault.Vault, logger *log.Logger) (string, error) {
	if t := strings.TrimSpace(os.Getenv(TokenEnv)); t != "" {
		return t, nil
	}
	path := v.Abs(vault.TokenFile)
	tok, why, err := readToken(path)
	if err != nil {
		return "", err
	}
	if tok != "" {
		created, rerr := vault.TokenCreated(tok)
		switch {
		case rerr != nil:
			// no record to check against (no home folder): the file passed
			// every other check
			logger.Printf("cannot check the token file %s against the tokens synapse made (%s); using it", path, errs.Message(rerr))
			return tok, nil
		case created:
			return tok, nil
		}
		why = "synapse did not make it for you (shipped with the vault, written by hand, or made by a synapse from before tokens were recorded)"
	}
	if why != "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", errs.Wrap(errs.Forbidden, err, "the token file %s cannot be used (%s) nor replaced: %v", path, why, err)
		}
		logger.Printf("replaced the token file %s: %s; HTTP clients need the new token", path, why)
	}
	return createToken(v, path, logger)
}

// createToken makes a new token, records it as synapse's, then writes it
// (0600, never over an existing name). When another process made one
// first, that one is used if it passes loadToken's checks.
func createToken(v *vault.Vault, path string, logger *log.Logger) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", errs.Wrap(errs.Internal, err, "generate a token: %v", err)
	}
	tok := hex.EncodeToString(b[:])
	// recorded first: a process that reads the file finds it recorded
	if err := v.RecordToken(tok, time.Now()); err != nil {
		logger.Printf("could not record the new token (%s): the next serve will replace it", errs.Message(err))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		// another process created it first: use theirs
		if theirs, why, rerr := readToken(path); rerr == nil && why == "" && theirs != "" {
			if ok, _ := vault.TokenCreated(theirs); ok {
				return theirs, nil
			}
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

// maxTokenBytes bounds what is read of a token file.
const maxTokenBytes = 4096

// tokenIn reads an opened token file: the token, or why the file must be
// replaced (it is empty).
func tokenIn(r io.Reader, path string) (tok, why string, err error) {
	data, err := io.ReadAll(io.LimitReader(r, maxTokenBytes))
	if err != nil {
		return "", "", errs.Wrap(errs.Internal, err, "read the token file %s: %v", path, err)
	}
	if tok = strings.TrimSpace(string(data)); tok == "" {
		return "", "it is empty", nil
	}
	return tok, "", nil
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
// the token (oauth.go: what the challenge says, and why).
func requireToken(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r)
		switch {
		case !ok:
			w.Header().Set("WWW-Authenticate", challenge(r, false))
			writeError(w, http.StatusUnauthorized, errs.E(errs.Unauthorized, "missing 'Authorization: Bearer <token>'; the token is in $%s or %s", TokenEnv, vault.TokenFile))
		case !tokenMatch(got, token):
			w.Header().Set("WWW-Authenticate", challenge(r, true))
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
