package ops

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/internal/testvault"
)

// gitT runs git in dir and returns its output; a failure fails the test.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitRepo makes dir a git repository holding everything in it in one
// commit; with user set, a user is configured in the repository.
func gitRepo(t *testing.T, dir string, user bool) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git program")
	}
	gitT(t, dir, "init", "-q", "-b", "main")
	if user {
		gitT(t, dir, "config", "user.name", "Vault Owner")
		gitT(t, dir, "config", "user.email", "owner@example.org")
	}
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "-c", "user.name=Setup", "-c", "user.email=setup@example.org", "commit", "-q", "-m", "start")
}

// isolateGitConfig hides the user's and the system's git configuration.
func isolateGitConfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "gitconfig"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

// committed lists the files of a commit as "STATUS path", sorted.
func committed(t *testing.T, dir, rev string) []string {
	lines := strings.Split(gitT(t, dir, "show", "--name-status", "--format=", rev), "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	sort.Strings(lines)
	return lines
}

func TestHistoryGit_OneCommitPerWriteWithItsFilesOnly(t *testing.T) {
	isolateGitConfig(t)
	v := testvault.New(t)
	gitRepo(t, v.Root, true)
	e, _ := openEnv(t, v)
	e.git = true
	// the user has staged a change of their own, and has an untracked file
	testvault.Write(t, v, "schema.md", readFile(t, v, "schema.md")+"\nMy own convention.\n")
	gitT(t, v.Root, "add", "schema.md")
	testvault.Write(t, v, "raw/sources/draft.md", "not for git yet\n")
	count := func() string { return gitT(t, v.Root, "rev-list", "--count", "HEAD") }

	out := write(t, e, &WritePageIn{Title: "Avocet", Content: "# Avocet\n\nA wader.\n"})
	if out.Commit == "" || len(out.Notes) != 0 {
		t.Fatalf("create: commit %q, notes %v", out.Commit, out.Notes)
	}
	if count() != "2" || gitT(t, v.Root, "rev-parse", "HEAD") != out.Commit {
		t.Fatalf("commits %s, HEAD %s, write said %s", count(), gitT(t, v.Root, "rev-parse", "HEAD"), out.Commit)
	}
	want := []string{"A " + out.Path, "M wiki/index.md", "M wiki/log.md"}
	if got := committed(t, v.Root, "HEAD"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("commit holds %v, want %v", got, want)
	}
	if a := gitT(t, v.Root, "log", "-1", "--format=%an <%ae>|%cn|%s"); a != "synapse <synapse@localhost>|Vault Owner|synapse: create Avocet" {
		t.Fatalf("author, committer, subject: %s", a)
	}
	// the user's staging is as they left it, the write's files are clean
	if s := gitT(t, v.Root, "diff", "--cached", "--name-only"); s != "schema.md" {
		t.Fatalf("staged after the write: %q", s)
	}
	if s := gitT(t, v.Root, "status", "--porcelain", "--", "wiki"); s != "" {
		t.Fatalf("the write's files are not clean: %q", s)
	}

	out2 := write(t, e, &WritePageIn{Title: "Avocet", Content: "# Avocet\n\nA wader with an upturned bill.\n"})
	if count() != "3" || out2.Commit == "" {
		t.Fatalf("edit: %s commits, commit %q", count(), out2.Commit)
	}
	if got := committed(t, v.Root, "HEAD"); strings.Join(got, "|") != "M "+out.Path+"|M wiki/log.md" && strings.Join(got, "|") != "M "+out.Path+"|M wiki/index.md|M wiki/log.md" {
		t.Fatalf("edit commit holds %v", got)
	}
	// a write that changes nothing commits nothing
	if out3 := write(t, e, &WritePageIn{Title: "Avocet", Content: "# Avocet\n\nA wader with an upturned bill.\n"}); !out3.Unchanged || out3.Commit != "" || count() != "3" {
		t.Fatalf("unchanged write: %+v, %s commits", out3, count())
	}
	// a restore is a commit of its own, named so
	res, err := restore(t, e, "Avocet", 1, "")
	if err != nil || res.Commit == "" {
		t.Fatalf("restore: %+v %v", res, err)
	}
	if s := gitT(t, v.Root, "log", "-1", "--format=%s"); s != "synapse: restore Avocet (revision 1)" {
		t.Fatalf("restore subject %q", s)
	}
	if s := gitT(t, v.Root, "diff", "--cached", "--name-only"); s != "schema.md" {
		t.Fatalf("staged after the restore: %q", s)
	}
}

func TestHistoryGit_NoUserStillCommitsWithANote(t *testing.T) {
	isolateGitConfig(t)
	v := testvault.New(t)
	// the repository is the vault's parent: the vault is a folder of it
	gitRepo(t, filepath.Dir(v.Root), false)
	e, _ := openEnv(t, v)
	e.git = true
	out := write(t, e, &WritePageIn{Title: "Bittern", Content: "# Bittern\n"})
	if out.Commit == "" || len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "no user.name/user.email") {
		t.Fatalf("commit %q, notes %v", out.Commit, out.Notes)
	}
	top := filepath.Dir(v.Root)
	if a := gitT(t, top, "log", "-1", "--format=%an|%cn"); a != "synapse|synapse" {
		t.Fatalf("author|committer = %s", a)
	}
	want := []string{"A vault/" + out.Path, "M vault/wiki/index.md", "M vault/wiki/log.md"}
	if got := committed(t, top, "HEAD"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("commit holds %v, want %v", got, want)
	}
}

func TestHistoryGit_IgnoredFilesStayOut(t *testing.T) {
	isolateGitConfig(t)
	v := testvault.New(t)
	testvault.Write(t, v, ".gitignore", "wiki/index.md\n")
	gitRepo(t, v.Root, true)
	e, _ := openEnv(t, v)
	e.git = true
	out := write(t, e, &WritePageIn{Title: "Dunlin", Content: "# Dunlin\n"})
	if out.Commit == "" || len(out.Notes) != 0 {
		t.Fatalf("commit %q, notes %v", out.Commit, out.Notes)
	}
	want := []string{"A " + out.Path, "M wiki/log.md"}
	if got := committed(t, v.Root, "HEAD"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("commit holds %v, want %v", got, want)
	}
}

func TestHistoryGit_FailingGitNeverFailsTheWrite(t *testing.T) {
	isolateGitConfig(t)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, root string)
		note  string
	}{
		{"not a repository", func(t *testing.T, root string) {}, "not inside a git work tree"},
		{"the index is locked", func(t *testing.T, root string) {
			gitRepo(t, root, true)
			if err := os.WriteFile(filepath.Join(root, ".git", "index.lock"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "the index was not updated"},
		{"no git program", func(t *testing.T, root string) {
			gitRepo(t, root, true)
			t.Setenv("PATH", t.TempDir())
		}, "no git program was found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := exec.LookPath("git"); err != nil {
				t.Skip("no git program")
			}
			v := testvault.New(t)
			tc.setup(t, v.Root)
			e, _ := openEnv(t, v)
			e.git = true
			out := write(t, e, &WritePageIn{Title: "Crane", Content: "# Crane\n"})
			if len(out.Notes) == 0 || !strings.Contains(strings.Join(out.Notes, " "), tc.note) {
				t.Fatalf("notes %v, want one saying %q", out.Notes, tc.note)
			}
			if got := readFile(t, v, out.Path); !strings.Contains(got, "# Crane") {
				t.Fatalf("the page was not written: %q", got)
			}
		})
	}
}

// A move is one commit holding the file the page left, its new file and
// every page whose links it rewrote (with log.md and index.md), and
// nothing else; a git that fails leaves the move as it is, with a note.
func TestHistoryGit_MoveIsOneCommit(t *testing.T) {
	isolateGitConfig(t)
	v := moveVault(t)
	gitRepo(t, v.Root, true)
	e, _ := openEnv(t, v)
	e.git = true
	count := func() string { return gitT(t, v.Root, "rev-list", "--count", "HEAD") }
	out := move(t, e, &crashMove)
	if out.Commit == "" || len(out.Notes) != 0 || count() != "2" || gitT(t, v.Root, "rev-parse", "HEAD") != out.Commit {
		t.Fatalf("commit %q, notes %v, %s commits", out.Commit, out.Notes, count())
	}
	got := strings.Fields(gitT(t, v.Root, "show", "--name-status", "--no-renames", "--format=", "HEAD"))
	want := []string{"M", "wiki/a.md", "A", "wiki/archive/goal.md", "M", "wiki/b.md", "M", "wiki/c/d.md",
		"M", "wiki/index.md", "M", "wiki/log.md", "D", "wiki/notes/target.md"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("the move's commit holds %v, want %v", got, want)
	}
	if s := gitT(t, v.Root, "log", "-1", "--format=%an|%s"); s != "synapse|synapse: move Goal (from wiki/notes/target.md)" {
		t.Fatalf("author|subject %s", s)
	}
	if s := gitT(t, v.Root, "status", "--porcelain", "--", "wiki"); s != "" {
		t.Fatalf("the move's files are not clean: %q", s)
	}

	// a locked index: the move stands, a note says the index was not updated
	if err := os.WriteFile(filepath.Join(v.Root, ".git", "index.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out = move(t, e, &MovePageIn{Title: "Goal", To: "Aim"})
	if len(out.Notes) == 0 || !strings.Contains(strings.Join(out.Notes, " "), "git") || readFile(t, v, out.Path) == "" {
		t.Fatalf("move with a locked index: %+v", out)
	}
}
