package main

import (
	"fmt"
	"os"
	"strings"
)

// shippedTokenValue is the token an attacker commits in .synapse/token:
// whoever knows it could use the victim's server.
const shippedTokenValue = "shipped-token-known-to-the-attacker-0123456789"

// shippedToken: a cloned vault carries .synapse/token. serve --http must
// not accept it, whatever its mode (git checks it out 0644; the user may
// have run the chmod 600 an older synapse asked for).
func shippedToken() {
	for _, mode := range []os.FileMode{0o644, 0o600} {
		v := newVault("token")
		must(os.WriteFile(v.abs(".synapse/token"), []byte(shippedTokenValue+"\n"), mode))
		must(os.Chmod(v.abs(".synapse/token"), mode))
		s := serve(v, "")
		old := s.do("GET", "/status", shippedTokenValue, "")
		data, _ := os.ReadFile(v.abs(".synapse/token"))
		fresh := strings.TrimSpace(string(data))
		now := s.do("GET", "/status", fresh, "")
		s.stop()
		log := s.log()
		// the token synapse made is kept across restarts
		s = serve(v, "")
		again := s.do("GET", "/status", fresh, "")
		s.stop()
		before := "refused at start (exit 5, \"chmod 600\"); after chmod 600 the shipped token accepted"
		if mode == 0o600 {
			before = "the shipped token accepted"
		}
		record("a shipped .synapse/token, mode "+modeString(mode)+", then `serve --http`", before,
			old.status == 401 && fresh != shippedTokenValue && now.status == 200 && again.status == 200,
			"the shipped token: %d; replaced: %v; the new token: %d, after a restart: %d; log: %s",
			old.status, fresh != shippedTokenValue, now.status, again.status, firstLine(grepLine(log, "token")))
	}
}

// tokenSymlink: a cloned vault's .synapse/token is a symlink to a file of
// the user's outside the vault, whose content the attacker may know (or
// wants overwritten). serve --http must neither accept it nor write
// through the link.
func tokenSymlink() {
	v := newVault("token-symlink")
	target := v.abs("../users-file.txt")
	const content = "a file of the user's, outside the vault 0123456789\n"
	must(os.WriteFile(target, []byte(content), 0o600))
	must(os.Symlink(target, v.abs(".synapse/token")))
	s := serve(v, "")
	old := s.do("GET", "/status", strings.TrimSpace(content), "")
	st, err := os.Lstat(v.abs(".synapse/token"))
	regular := err == nil && st.Mode().IsRegular()
	data, _ := os.ReadFile(v.abs(".synapse/token"))
	now := s.do("GET", "/status", strings.TrimSpace(string(data)), "")
	s.stop()
	after, _ := os.ReadFile(target)
	record("a shipped .synapse/token as a symlink to a file of the user's, then `serve --http`",
		"(not in the report)",
		old.status == 401 && regular && now.status == 200 && string(after) == content,
		"the target's content as token: %d; the link replaced by a file: %v; the new token: %d; the target unchanged: %v",
		old.status, regular, now.status, string(after) == content)
}

func modeString(m os.FileMode) string { return fmt.Sprintf("%04o", m.Perm()) }

// grepLine is the first line of s holding word.
func grepLine(s, word string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, word) {
			return l
		}
	}
	return ""
}
