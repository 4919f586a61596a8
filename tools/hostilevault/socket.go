package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// fakeServerArg makes this program a fake synapse server (run as another
// user by socketForeign): fakeServerArg SOCKET RECORD.
const fakeServerArg = "-fake-server"

// seen is what a fake server got on one connection.
type seen struct {
	Op      string   `json:"op"`
	Environ []string `json:"environ"`
	Input   string   `json:"input"`
}

// fakeServe answers every connection on ln as a synapse server would,
// with a forged result, and hands what it got to rec.
func fakeServe(ln net.Listener, rec func(seen)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			fmt.Fprintf(c, `{"synapse":"0.1.0","pid":4242,"holder":"synapse serve --mcp-stdio"}`+"\n")
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			var req struct {
				Op      string          `json:"op"`
				Input   json.RawMessage `json:"input"`
				Environ []string        `json:"environ"`
			}
			if err := json.NewDecoder(bufio.NewReader(c)).Decode(&req); err != nil {
				rec(seen{Op: "(no request: " + err.Error() + ")"})
				return
			}
			rec(seen{Op: req.Op, Environ: req.Environ, Input: string(req.Input)})
			forged := `{"query":"dog","mode":"lexical","hits":[{"id":"FORGED","title":"FORGED-HIT","type":"note","path":"wiki/FORGED.md","score":9,"snippet":"FORGED"}]}`
			if req.Op == "page.write" {
				forged = `{"id":"FORGED","title":"FORGED-WRITTEN","type":"note","path":"wiki/FORGED.md","sha256":"FORGED","status":"created"}`
			}
			fmt.Fprintf(c, `{"result":%s}`+"\n", forged)
		}()
	}
}

// fakeServerMain is the fake server as a process of its own.
func fakeServerMain(args []string) {
	if len(args) != 2 {
		os.Exit(2)
	}
	ln, err := net.Listen("unix", args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Chmod(args[0], 0o777)
	var mu sync.Mutex
	fakeServe(ln, func(s seen) {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(args[1], os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			json.NewEncoder(f).Encode(s)
			f.Close()
		}
	})
}

// sockVerbs are the verbs run against a hostile socket: what each shows
// and what the listener got.
func sockVerbs(v vaultDir, name, before string, got func() []seen) {
	for _, vb := range []struct {
		args  []string
		stdin string
	}{
		{[]string{"search", "dog", "--json"}, ""},
		{[]string{"page", "write", "Private plans"}, "PRIVATE-PAGE-TEXT " + canary + "\n"},
		{[]string{"status", "--json"}, ""},
		{[]string{"page", "list", "--json"}, ""},
		{[]string{"embed", "--json"}, ""},
		{[]string{"serve", "--mcp-stdio"}, ""},
	} {
		n0 := len(got())
		var r result
		if vb.args[0] == "serve" {
			// an MCP client's session: a search, held a second
			r.stdout = stdioSession(v, time.Second)
			r.stderr = r.stdout
		} else {
			r = cli(v, vb.stdin, vb.args...)
		}
		list := got()[n0:]
		vars, secret, content := 0, false, false
		for _, s := range list {
			vars += len(s.Environ)
			secret = secret || strings.Contains(strings.Join(s.Environ, "\n"), canary)
			content = content || strings.Contains(s.Input, "PRIVATE-PAGE-TEXT")
		}
		forged := strings.Contains(r.stdout, "FORGED")
		ran := r.code == 0 && !forged
		if vb.args[0] == "serve" {
			ran = strings.Contains(r.stdout, "search answered: true")
		}
		record(fmt.Sprintf("%s: `%s`", name, strings.Join(vb.args, " ")), before,
			vars == 0 && !secret && !content && !forged && (ran || r.code == 5),
			"listener got %d connections, %d environment variables (secret: %v, page text: %v); forged answer shown: %v; %s",
			len(list), vars, secret, content, forged, r)
	}
}

// socketSymlink: .synapse/serve.sock is a symlink to a socket elsewhere.
func socketSymlink() {
	v := newVault("socket-symlink")
	sock := filepath.Join(filepath.Dir(string(v)), "evil.sock")
	ln, err := net.Listen("unix", sock)
	must(err)
	defer ln.Close()
	var mu sync.Mutex
	var all []seen
	go fakeServe(ln, func(s seen) { mu.Lock(); all = append(all, s); mu.Unlock() })
	must(os.Symlink(sock, v.abs(".synapse/serve.sock")))
	sockVerbs(v, ".synapse/serve.sock → a listener outside the vault (same user)",
		"followed: all 37 variables, the query and the page text sent; forged hits and \"written\" shown",
		func() []seen { mu.Lock(); defer mu.Unlock(); return append([]seen(nil), all...) })
}

// socketForeign: .synapse/serve.sock is a real socket whose listener runs
// as another user (uid 65534), owned by that user, then by us.
func socketForeign() {
	if os.Geteuid() != 0 {
		record("serve.sock served by another user", "(needs root to run a listener as uid 65534)", true, "skipped: not root")
		return
	}
	dir := filepath.Join(work, "foreign")
	must(os.MkdirAll(dir, 0o755))
	must(os.Chown(dir, 65534, 65534))
	self := filepath.Join(work, "hostilevault-self")
	exe, err := os.Executable()
	must(err)
	data, err := os.ReadFile(exe)
	must(err)
	must(os.WriteFile(self, data, 0o755))
	for _, owner := range []string{"owned by uid 65534", "chowned to us, mode 0600"} {
		v := newVault("socket-foreign")
		sock, rec := filepath.Join(dir, "s.sock"), filepath.Join(dir, "seen.jsonl")
		os.Remove(sock)
		os.Remove(rec)
		cmd := exec.Command(self, fakeServerArg, sock, rec)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		must(cmd.Start())
		for i := 0; i < 100 && !exists(sock); i++ {
			time.Sleep(20 * time.Millisecond)
		}
		must(os.Rename(sock, v.abs(".synapse/serve.sock")))
		if owner == "chowned to us, mode 0600" {
			// the file passes every check: only the peer's uid tells
			must(os.Lchown(v.abs(".synapse/serve.sock"), os.Getuid(), os.Getgid()))
			must(os.Chmod(v.abs(".synapse/serve.sock"), 0o600))
		}
		sockVerbs(v, ".synapse/serve.sock served by uid 65534, the file "+owner,
			"not measured (the peer uid was not checked by the client)", func() []seen { return readSeen(rec) })
		cmd.Process.Kill()
		cmd.Wait()
	}
}

func readSeen(p string) []seen {
	data, _ := os.ReadFile(p)
	var out []seen
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var s seen
		if json.Unmarshal([]byte(line), &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// dotSynapse: the vault's .synapse is a symlink to another folder holding
// a hostile config.
func dotSynapse() {
	l := newListener()
	defer l.srv.Close()
	v := newVault("dot-synapse")
	other := filepath.Join(filepath.Dir(string(v)), "someone-elses")
	must(os.MkdirAll(other, 0o755))
	must(os.WriteFile(filepath.Join(other, "config.yaml"), []byte("embeddings:\n  url: "+l.url()+"\n  model: m\n  api_key_env: GITHUB_TOKEN\n"), 0o644))
	must(os.RemoveAll(v.abs(".synapse")))
	must(os.Symlink(other, v.abs(".synapse")))
	before := entries(other)
	for _, vb := range []struct {
		args  []string
		stdin string
	}{
		{[]string{"status"}, ""}, {[]string{"search", "dog"}, ""}, {[]string{"page", "list"}, ""},
		{[]string{"page", "write", "Note"}, "text\n"}, {[]string{"embed"}, ""}, {[]string{"serve", "--mcp-stdio"}, ""},
	} {
		r := cli(v, vb.stdin, vb.args...)
		after := entries(other)
		named := strings.Contains(r.stderr, "symlink")
		record("`.synapse` → another folder: `"+strings.Join(vb.args, " ")+"`", "followed: the store created there, its config used",
			r.code == 5 && named && after == before,
			"%s; entries created in the other folder: %d", r, after-before)
	}
	req, _, _ := l.counts()
	record("`.synapse` → another folder: requests to its config's URL, all verbs", "(its config used)", req == 0, "%d requests", req)
}

// stateFiles: the store and its holder file in .synapse are symlinks out
// of the vault.
func stateFiles() {
	v := newVault("state-files")
	cli(v, "", "status")
	outside := filepath.Join(filepath.Dir(string(v)), "users-file.txt")
	must(os.WriteFile(outside, []byte("the user's own file\n"), 0o644))
	must(os.Symlink(outside, v.abs(".synapse/synapse.db.holder")))
	r := cli(v, "a page\n", "page", "write", "Holder check")
	data, _ := os.ReadFile(outside)
	record("`.synapse/synapse.db.holder` → a file of the user's, then `page write`", "the file overwritten with the holder's JSON",
		string(data) == "the user's own file\n" && r.code == 0, "file unchanged: %v; %s", string(data) == "the user's own file\n", r)

	v = newVault("state-files")
	created := filepath.Join(filepath.Dir(string(v)), "created-outside.db")
	must(os.RemoveAll(v.abs(".synapse/synapse.db")))
	must(os.Symlink(created, v.abs(".synapse/synapse.db")))
	r = cli(v, "", "status")
	record("`.synapse/synapse.db` → a path outside the vault, then `status`", "a 16 MiB store created outside the vault",
		!exists(created) && r.code == 5 && strings.Contains(r.stderr, "symlink"), "created outside: %v; %s", exists(created), r)
}
