// Command hostile runs a synapse binary against what an untrusted vault
// may hold and prints tables: every page shape of internal/hostile (each
// verb's wall time, peak RSS and exit code, against a budget of 5 s and
// 500 MB), and the damaged store files (what each verb answers, and what
// became of the review queue).
//
//	go build -o /tmp/synapse . && go run ./tools/hostile -bin /tmp/synapse shapes
//	go run ./tools/hostile -bin /tmp/synapse -size 32MiB shapes
//	go run ./tools/hostile -bin /tmp/synapse -only long-link,alias-bomb-9 shapes
//	go run ./tools/hostile -bin /tmp/synapse damage      # from the repository root
//	go run ./tools/hostile -bin /tmp/synapse attacks     # the red team's findings replayed
//	go run ./tools/hostile -bin /tmp/synapse -size 32MiB sigterm  # each verb sent SIGTERM mid-way
//	go run ./tools/hostile apply flip-leaf VAULT/.synapse/synapse.db
//
// Linux only (peak RSS from rusage). It exits 1 when a verb is over its
// budget, fails as an internal error or crashes.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/internal/hostile"
	"github.com/synapse-wiki/synapse/internal/testvault"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == "-launch" {
		os.Exit(hostile.Launch(os.Args[2:])) // see hostile.Runner.Launcher
	}
	if len(os.Args) == 4 && os.Args[1] == "apply" {
		os.Exit(applyDamage(os.Args[2], os.Args[3]))
	}
	bin := flag.String("bin", "synapse", "the synapse binary under test")
	size := flag.String("size", "1MiB", "page size of the shapes that grow (bytes, or with KiB/MiB)")
	only := flag.String("only", "", "comma-separated names to run (default all)")
	hang := flag.Duration("hang", 60*time.Second, "a call still running after this is killed and reported as a hang")
	keep := flag.Bool("keep", false, "keep the work folder")
	bound := flag.Duration("bound", 500*time.Millisecond, "sigterm: the longest a verb may run on after SIGTERM")
	moments := flag.String("moments", "0.2,0.4,0.6,0.8", "sigterm: when to send it, as fractions of the verb's whole run")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: hostile [-bin BIN] [-size N] [-only NAMES] shapes|damage|attacks|sigterm\n       hostile apply DAMAGE STORE-FILE   (damage one store file as the damage table does)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	abs, err := filepath.Abs(*bin)
	check(err)
	n, err := parseSize(*size)
	check(err)
	work, err := os.MkdirTemp("", "hostile-")
	check(err)
	if !*keep {
		defer os.RemoveAll(work)
	}
	self, err := os.Executable()
	check(err)
	launcher := filepath.Join(work, "launch")
	check(os.WriteFile(launcher, []byte("#!/bin/sh\nexec "+shellQuote(self)+" -launch \"$@\"\n"), 0o755))
	r := hostile.Runner{Bin: abs, Hang: *hang, Launcher: launcher}
	want := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		if s != "" {
			want[s] = true
		}
	}
	bad := 0
	switch flag.Arg(0) {
	case "shapes":
		bad = shapes(r, work, int(n), want)
	case "damage":
		bad = damage(r, work, want)
	case "attacks":
		bad = attacks(abs, work, want)
	case "sigterm":
		fs, err := parseFractions(*moments)
		check(err)
		bad = sigterm(hostile.Runner{Bin: abs, Hang: *hang}, work, int(n), want, fs, *bound)
	default:
		flag.Usage()
		os.Exit(2)
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "%d over budget or failing\n", bad)
		os.RemoveAll(work)
		os.Exit(1)
	}
}

func shapes(r hostile.Runner, work string, size int, want map[string]bool) int {
	bad := 0
	fmt.Printf("budget per verb: %s wall, %d MB peak RSS, no internal error or crash\n\n", hostile.Budget.Took, hostile.Budget.RSS>>20)
	fmt.Print("| shape | bytes |")
	for _, v := range hostile.Verbs {
		fmt.Printf(" %s |", v.Name)
	}
	fmt.Print("\n|---|---|")
	for range hostile.Verbs {
		fmt.Print("---|")
	}
	fmt.Println()
	for _, s := range hostile.Shapes(size) {
		if len(want) > 0 && !want[s.Name] {
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s (%s)\n", s.Name, s.What)
		ms, err := r.MeasureShape(work, s)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", s.Name, err)
			bad++
			continue
		}
		fmt.Printf("| %s: %s | %d |", s.Name, s.What, s.Bytes())
		for _, m := range ms {
			cell := m.Result.Brief()
			if !m.OK() {
				bad++
				cell = "**" + cell + "** " + strings.ReplaceAll(m.Result.Line(80), "|", "/")
				fmt.Fprintf(os.Stderr, "  FAIL %s: %s %s\n", m.Verb, m.Result.Brief(), m.Result.Line(200))
			}
			fmt.Printf(" %s |", cell)
		}
		fmt.Println()
	}
	return bad
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suf, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(s, suf) {
			s, mult = strings.TrimSuffix(s, suf), m
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(2)
	}
}

// attacks replays every attack of internal/hostile (the quick ones run
// in go test too) and prints what the red team found beside what happens
// now.
func attacks(bin, work string, want map[string]bool) int {
	fmt.Println("| attack | found | now | harm |\n|---|---|---|---|")
	bad := 0
	for _, at := range hostile.Attacks() {
		if len(want) > 0 && !want[at.Name] {
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s\n", at.Name)
		dir := filepath.Join(work, at.Name)
		check(os.MkdirAll(dir, 0o755))
		v := at.Run(hostile.NewArena(bin, dir))
		harm := "none"
		if !v.OK {
			bad++
			harm = "**still**"
		}
		fmt.Printf("| %s | %s | %s | %s |\n", at.Name, strings.ReplaceAll(at.Found, "|", "/"), strings.ReplaceAll(v.Now, "|", "/"), harm)
		os.RemoveAll(dir)
	}
	return bad
}

// damageVerbs run, in order, against each damaged store.
var damageVerbs = [][]string{
	{"status"}, {"search", "link"}, {"page", "get", "Home"}, {"page", "list"}, {"review", "list", "--status", "all"},
	{"graph", "missing"}, {"lint"}, {"reindex"}, {"status"},
}

// damage builds a vault with the Obsidian Help corpus and three review
// items (one decided), then for each damaged store file runs every verb
// and says what each did, and how many review items came through.
func damage(r hostile.Runner, work string, want map[string]bool) int {
	base := filepath.Join(work, "base")
	check(r.Init(base))
	corpus, err := filepath.Abs("testdata/obsidian-help-en")
	check(err)
	check(testvault.CopyTree(corpus, filepath.Join(base, "wiki")))
	var first string
	for _, t := range []string{"Split the Sync page", "Merge two pages", "Check a claim"} {
		res := r.Run(base, "", "review", "add", "--type", "suggestion", "--title", t, "--json")
		if res.Code != 0 {
			check(fmt.Errorf("review add: %s", res.Line(200)))
		}
		if first == "" {
			var out struct{ Item struct{ ID string } }
			check(json.Unmarshal([]byte(res.Stdout), &out))
			first = out.Item.ID
		}
	}
	if res := r.Run(base, "", "review", "resolve", first, "--action", "skip"); res.Code != 0 {
		check(fmt.Errorf("review resolve: %s", res.Line(200)))
	}
	fmt.Print("| damage |")
	for _, v := range damageVerbs {
		fmt.Printf(" %s |", strings.Join(v, " "))
	}
	fmt.Print(" review items after |\n|---|")
	for range damageVerbs {
		fmt.Print("---|")
	}
	fmt.Println("---|")
	bad := 0
	for _, d := range hostile.Damages() {
		if len(want) > 0 && !want[d.Name] {
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s (%s)\n", d.Name, d.What)
		v := filepath.Join(work, d.Name)
		os.RemoveAll(v)
		check(testvault.CopyTree(base, v))
		check(d.Apply(filepath.Join(v, ".synapse", "synapse.db")))
		fmt.Printf("| %s: %s |", d.Name, d.What)
		said := ""
		for _, args := range damageVerbs {
			res := r.Run(v, "", args...)
			said += res.Stderr
			cell := fmt.Sprintf("exit %d", res.Code)
			if msg := res.Line(90); msg != "" {
				cell += ": " + strings.ReplaceAll(msg, "|", "/")
			}
			// a verb answers (exit 0) or says how to recover; never a crash
			if res.Code != 0 && (res.Code == 1 || hostile.Crashed(res.Stderr) || !strings.Contains(res.Stderr, "reindex")) {
				bad++
				cell = "**" + cell + "**"
				fmt.Fprintf(os.Stderr, "  FAIL %s: %s\n", strings.Join(args, " "), res.Line(200))
			}
			fmt.Printf(" %s |", cell)
		}
		res := r.Run(v, "", "review", "list", "--status", "all", "--json")
		var list struct{ Total int }
		json.Unmarshal([]byte(res.Stdout), &list)
		kept := fmt.Sprintf("%d of 3", list.Total)
		switch {
		case list.Total == 3:
		case strings.Contains(said, "COULD NOT BE RECOVERED"):
			kept += " (the loss said on stderr and in status)"
		default:
			bad++
			kept = "**" + kept + ", lost in silence**"
		}
		fmt.Printf(" %s |\n", kept)
		os.RemoveAll(v)
	}
	return bad
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// applyDamage damages one store file by name (hostile apply NAME FILE).
func applyDamage(name, path string) int {
	for _, d := range hostile.Damages() {
		if d.Name == name {
			if err := d.Apply(path); err != nil {
				fmt.Fprintln(os.Stderr, "hostile:", err)
				return 1
			}
			return 0
		}
	}
	fmt.Fprintf(os.Stderr, "hostile: no damage %q\n", name)
	return 2
}
