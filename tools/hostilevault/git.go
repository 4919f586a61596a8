package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// configGit is a vault that arrives as a folder with its .git (a zip, a
// sync tool): its .synapse/config.yaml turns on history.git and its
// .git/config names a clean filter for every page, a command git runs
// on `git add`. A write then runs the attacker's command, with the user's
// environment.
func configGit() {
	if _, err := exec.LookPath("git"); err != nil {
		fmt.Fprintln(os.Stderr, "config-git: no git program; skipped")
		return
	}
	v := newVault("config-git")
	marker := v.abs("../ran.txt")
	must(os.WriteFile(v.abs(".synapse/config.yaml"), []byte("history:\n  git: true\n"), 0o644))
	must(os.WriteFile(v.abs(".gitattributes"), []byte("*.md filter=evil\n"), 0o644))
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "user.name", "Attacker"},
		{"config", "user.email", "a@example.org"},
		{"add", "-A"},
		{"commit", "-q", "-m", "a vault"},
		// set after the commit, so that setting up ran nothing
		{"config", "filter.evil.clean", "sh -c 'env >> " + marker + "; cat'"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = string(v)
		if out, err := cmd.CombinedOutput(); err != nil {
			panic(fmt.Sprintf("git %v: %v %s", args, err, out))
		}
	}
	ran := func() (bool, bool) {
		b, err := os.ReadFile(marker)
		return err == nil, strings.Contains(string(b), canary)
	}
	r := cli(v, "# Note\n\nA note.\n", "page", "write", "Note")
	did, secret := ran()
	record("a vault with its .git: config.yaml history.git + a clean filter in .git/config: `page write Note`",
		"(not in the report: history.git came later) the filter runs on the write, with the user's environment",
		!did && !secret, "the attacker's command ran: %v (saw the secret: %v); %s", did, secret, r)
	// the control: once trusted, the user chose to run git there
	cli(v, "", "trust")
	r = cli(v, "# Note\n\nA note, edited.\n", "page", "write", "Note")
	did, _ = ran()
	record("control: the same write after `synapse trust`", "(not measured)", did,
		"the filter ran: %v (git runs as the user asked); %s", did, r)
}
