// Command hostilevault replays the attacks of a vault that arrives from
// anywhere (git clone, a sync tool, a download) on what synapse keeps in
// .synapse/ — a hostile config.yaml (embeddings, history.git), a
// serve.sock that leads to someone else, a shipped token, .synapse itself
// as a symlink — and the protocol conformance cases found with them,
// against a built synapse binary. It prints a table: each attack, what it
// did on main before the fix, what happens now, and whether it did harm
// (exit 1 if any did).
//
//	go build -o /tmp/synapse . && go run ./tools/hostilevault -bin /tmp/synapse
//
// -only NAME,... runs some checks; -quick leaves out the slow parts (what
// `go test ./tools/hostilevault` runs). Checks that need another user
// (a listener running as uid 65534) run only as root. Linux; it creates
// its vaults under a temporary folder and removes them.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/internal/replay"
)

var (
	bin   string
	work  string
	hang  time.Duration
	quick bool
)

// canary is the value of the secret variables the attacks try to steal.
const canary = "CANARY-SECRET-0f7e3d"

var table replay.Table

func record(name, before string, ok bool, format string, args ...any) {
	table.Record(name, before, ok, format, args...)
}

// checks are the attacks, by name.
var checks = []struct {
	name string
	fn   func()
}{
	{"config", configExfil},
	{"config-serve", configServe},
	{"config-git", configGit},
	{"dot-synapse", dotSynapse},
	{"state-files", stateFiles},
	{"socket-symlink", socketSymlink},
	{"socket-foreign", socketForeign},
	{"token", shippedToken},
	{"token-symlink", tokenSymlink},
	{"conformance", conformance},
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == fakeServerArg {
		fakeServerMain(os.Args[2:])
		return
	}
	flag.StringVar(&bin, "bin", "synapse", "the synapse binary under test")
	flag.DurationVar(&hang, "hang", 20*time.Second, "a call still running after this is a hang")
	only := flag.String("only", "", "comma-separated check names (default all)")
	flag.BoolVar(&quick, "quick", false, "leave out the slow parts")
	keep := flag.Bool("keep", false, "keep the work folder")
	flag.Parse()
	bad, err := run(*only, *keep)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostilevault:", err)
		os.Exit(1)
	}
	table.Markdown(os.Stdout, "attack", "before (main before the fix)", "now")
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "%d attack(s) still do harm\n", bad)
		os.Exit(1)
	}
}

// run runs the checks named in only (all when empty) and returns how many
// rows did harm.
func run(only string, keep bool) (int, error) {
	var err error
	if bin, err = filepath.Abs(bin); err != nil {
		return 0, err
	}
	if work, err = os.MkdirTemp("", "hostilevault-"); err != nil {
		return 0, err
	}
	// others may enter it: the listener of another user binds in it
	os.Chmod(work, 0o755)
	if !keep {
		defer os.RemoveAll(work)
	}
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n != "" {
			want[n] = true
		}
	}
	table = replay.Table{}
	for _, c := range checks {
		if len(want) > 0 && !want[c.name] {
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s\n", c.name)
		c.fn()
	}
	return table.Harm(), nil
}

// ---- vaults and the binary

type vaultDir string

var vaults int

// newVault makes a vault with a few pages and a user config folder of its
// own (XDG_CONFIG_HOME for every run of the binary on it).
func newVault(name string) vaultDir {
	vaults++
	v := filepath.Join(work, fmt.Sprintf("%s-%d", name, vaults), "vault")
	os.MkdirAll(filepath.Dir(v), 0o755)
	if r := cli("", "", "init", v); r.code != 0 {
		panic(fmt.Sprintf("init: %+v", r))
	}
	for title, body := range map[string]string{
		"wiki/concepts/dog.md":      "# Dog\n\nA hound, a canine, a puppy.\n",
		"wiki/concepts/cat.md":      "# Cat\n\nA feline. See [[Dog]].\n",
		"wiki/entities/kennel.md":   "# Kennel\n\nWhere dogs sleep.\n",
		"wiki/synthesis/animals.md": "# Animals\n\n[[Dog]] and [[Cat]].\n",
	} {
		os.WriteFile(filepath.Join(v, filepath.FromSlash(title)), []byte(body), 0o644)
	}
	return vaultDir(v)
}

func (v vaultDir) abs(rel string) string { return filepath.Join(string(v), filepath.FromSlash(rel)) }

// config is the user config folder of the runs on v.
func (v vaultDir) config() string { return filepath.Join(filepath.Dir(string(v)), "config") }

type result struct {
	code           int
	stdout, stderr string
	took           time.Duration
	hung           bool
}

func (r result) String() string {
	if r.hung {
		return fmt.Sprintf("HANG (killed after %s)", r.took.Round(time.Second))
	}
	msg := strings.TrimSpace(r.stderr)
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:]
	}
	return fmt.Sprintf("exit %d%s", r.code, clipMsg(msg))
}

func clipMsg(msg string) string {
	if len(msg) > 110 {
		msg = msg[:110] + "…"
	}
	if msg != "" {
		msg = ": " + msg
	}
	return msg
}

// env is the environment of every run: the caller's with a secret in
// GITHUB_TOKEN and AWS_SECRET_ACCESS_KEY, and v's config folder.
func env(v vaultDir) []string {
	e := []string{"NO_COLOR=1", "GITHUB_TOKEN=" + canary, "AWS_SECRET_ACCESS_KEY=" + canary}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SYNAPSE_") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			e = append(e, kv)
		}
	}
	if v != "" {
		e = append(e, "XDG_CONFIG_HOME="+v.config())
	}
	return e
}

// cli runs the binary with a vault (v may be "") and stdin.
func cli(v vaultDir, stdin string, args ...string) result {
	if v != "" {
		args = append([]string{"--vault", string(v)}, args...)
	}
	r := replay.Exec(bin, env(v), stdin, hang, args...)
	return result{code: r.Code, stdout: r.Stdout, stderr: r.Stderr, took: r.Took, hung: r.Hung}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// entries counts what is under dir (recursively).
func entries(dir string) int {
	n := 0
	filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil && p != dir {
			n++
		}
		return nil
	})
	return n
}
