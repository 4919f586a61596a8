package ops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/vault"
)

// Optional git commits (docs/history.md): with history.git in the vault's
// config and the vault inside a git work tree, each write commits exactly
// the files it changed — the page (and the file it left, for a move),
// wiki/log.md, wiki/index.md and the vault's state files (gitStateFiles)
// when their bytes changed — with the author "synapse". It runs the git
// program the user has (not a Go reimplementation): the user's git
// config, attributes, safe.directory rules and future repository
// formats then apply exactly as they do at their shell, and synapse
// carries no second implementation of the index format.
//
// The commit is made from a temporary index (GIT_INDEX_FILE) that starts
// as HEAD's tree, so whatever the user staged is neither committed nor
// disturbed; afterwards the user's index is brought up to date for the
// committed files only. No hook runs (core.hooksPath is emptied), nothing
// is signed, nothing reaches the network. A git that fails, is missing,
// or finds no user configured never fails the write: the result's notes
// say what happened (with no user configured the committer is synapse
// too).

// gitWanted reports whether writes commit to git: history.git in the
// config in effect. It runs a program, so a vault's own config sets it
// only once the user trusted the file (vault.Config.Sensitive).
func gitWanted(cfg *vault.Config) bool { return cfg != nil && cfg.History.Git }

// gitStateFiles are vault files besides the page, log.md and index.md
// that a write may change (the review journal registers its file here);
// vault-relative.
var gitStateFiles []string

// gitTimeout bounds each git command of a commit.
const gitTimeout = 30 * time.Second

// gitAuthor is the author of synapse's commits.
const (
	gitAuthorName  = "synapse"
	gitAuthorEmail = "synapse@localhost"
)

// gitCommit commits paths (vault-relative; files gone are committed as
// removed) with message msg. It returns the commit's hash ("" when the
// files held no change) and notes on what did not go as it should.
func gitCommit(ctx context.Context, root string, paths []string, msg string) (hash string, notes []string) {
	g := &gitRun{ctx: ctx, dir: root}
	if _, err := exec.LookPath("git"); err != nil {
		return "", []string{"git: history.git is on but no git program was found; the write was not committed"}
	}
	if out, err := g.run(nil, "rev-parse", "--is-inside-work-tree"); err != nil || strings.TrimSpace(out) != "true" {
		why := "is not inside a git work tree"
		if err != nil && !strings.Contains(err.Error(), "not a git repository") {
			why = "cannot be committed to: " + err.Error()
		}
		return "", []string{"git: history.git is on but " + root + " " + why + "; the write was not committed"}
	}
	tmp, err := os.CreateTemp("", "synapse-git-index-*")
	if err != nil {
		return "", []string{"git: " + err.Error()}
	}
	tmp.Close()
	os.Remove(tmp.Name()) // git creates it
	defer os.Remove(tmp.Name())
	idx := []string{"GIT_INDEX_FILE=" + tmp.Name()}
	born := true
	if _, err := g.run(nil, "rev-parse", "--verify", "-q", "HEAD"); err != nil {
		born = false
	}
	if born {
		_, err = g.run(idx, "read-tree", "HEAD")
	} else {
		_, err = g.run(idx, "read-tree", "--empty")
	}
	var here, gone []string
	for _, p := range paths {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			here = append(here, p)
		} else {
			gone = append(gone, p)
		}
	}
	if err == nil && len(here) > 0 {
		_, err = g.run(idx, append([]string{"add", "-A", "--"}, here...)...)
		if err != nil && strings.Contains(err.Error(), "ignored by one of your .gitignore files") {
			err = nil // the others are added; what the user ignores stays out
		}
	}
	if err == nil && len(gone) > 0 {
		_, err = g.run(idx, append([]string{"rm", "-q", "--cached", "--ignore-unmatch", "--"}, gone...)...)
	}
	if err != nil {
		return "", []string{"git: " + err.Error() + "; the write was not committed"}
	}
	diffArgs := []string{"diff", "--cached", "--quiet"}
	if born {
		diffArgs = append(diffArgs, "HEAD")
	}
	if _, err := g.run(idx, diffArgs...); err == nil {
		return "", nil // nothing changed in those files
	}
	env := append(idx, "GIT_AUTHOR_NAME="+gitAuthorName, "GIT_AUTHOR_EMAIL="+gitAuthorEmail)
	if !g.userConfigured() {
		env = append(env, "GIT_COMMITTER_NAME="+gitAuthorName, "GIT_COMMITTER_EMAIL="+gitAuthorEmail)
		notes = append(notes, "git: no user.name/user.email configured for this repository: committed as synapse")
	}
	if _, err := g.run(env, "commit", "-q", "--no-verify", "-m", msg); err != nil {
		return "", append(notes, "git: "+err.Error()+"; the write was not committed")
	}
	out, err := g.run(nil, "rev-parse", "HEAD")
	if err != nil {
		return "", append(notes, "git: "+err.Error())
	}
	hash = strings.TrimSpace(out)
	// the user's index: the committed files as committed, the rest as
	// the user left it
	if _, err := g.run(nil, append([]string{"reset", "-q", "--"}, paths...)...); err != nil {
		notes = append(notes, "git: committed "+short(hash)+" but the index was not updated for its files ("+err.Error()+"); `git status` may show them staged as they were")
	}
	return hash, notes
}

func short(h string) string { return h[:min(len(h), 12)] }

// gitRun runs git commands in one folder.
type gitRun struct {
	ctx context.Context
	dir string
}

// run runs git with args and extra environment; the error carries git's
// message.
func (g *gitRun) run(env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(g.ctx, gitTimeout)
	defer cancel()
	full := append([]string{"-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false",
		"-c", "core.fsmonitor=false", "-c", "core.quotePath=false"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = g.dir
	cmd.Env = append(gitEnv(), env...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && args[0] == "diff" {
			return "", err // differences: not a failure to report
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		if i := strings.IndexByte(msg, '\n'); i > 0 {
			msg = msg[:i]
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return out.String(), nil
}

// userConfigured reports whether user.name and user.email are set.
func (g *gitRun) userConfigured() bool {
	out, err := g.run(nil, "config", "--get-regexp", `^user\.(name|email)$`)
	return err == nil && strings.Contains(out, "user.name ") && strings.Contains(out, "user.email ")
}

// gitEnv is the environment git runs with: the process's, without what
// would point git elsewhere, never prompting.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
			"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_CONFIG_PARAMETERS":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
}

// withStateFiles adds to paths the files besides the pages that a write
// may change — log.md, index.md, gitStateFiles — those that exist.
func withStateFiles(root string, paths []string) []string {
	for _, p := range append([]string{vault.LogPage, vault.IndexPage}, gitStateFiles...) {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err == nil {
			paths = append(paths, p)
		}
	}
	return paths
}

// gitAfterWrite commits what a write changed when the vault commits
// writes; its result goes into out.
func (w *pageWrite) gitAfterWrite(ctx context.Context, out *WritePageOut, t *target) {
	if !w.e.git || out.Unchanged {
		return
	}
	paths := []string{out.Path}
	for _, p := range []string{t.stale, w.movedFrom} {
		if p != "" && p != out.Path {
			paths = append(paths, p)
		}
	}
	paths = withStateFiles(w.e.Vault.Root, paths)
	op := w.op
	if op == "" {
		op = "write"
		if out.Created {
			op = "create"
		}
	}
	msg := "synapse: " + op + " " + out.Title
	switch {
	case w.restoreFrom > 0:
		msg += fmt.Sprintf(" (revision %d)", w.restoreFrom)
	case w.movedFrom != "":
		msg += " (from " + w.movedFrom + ")"
	}
	hash, notes := gitCommit(ctx, w.e.Vault.Root, paths, msg)
	out.Commit = hash
	out.Notes = append(out.Notes, notes...)
}
