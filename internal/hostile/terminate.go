package hostile

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Stopped is one verb against one shape, run whole once and then sent
// SIGTERM at several moments of that run.
type Stopped struct {
	Verb   string
	Whole  Result  // the verb uninterrupted
	Trials []Trial // one per moment
}

// Trial is one run sent SIGTERM.
type Trial struct {
	At    time.Duration // when the signal was sent, after the start
	After time.Duration // how long the verb ran on after it (0: it ended before)
	Code  int           // 0 finished, 5 interrupted, 143 ended by the signal itself
	Line  string        // the first line of stderr
	Harm  string        // what the run left behind that it should not have ("" none)
}

// Worst is the longest time a trial ran on after the signal.
func (s Stopped) Worst() time.Duration {
	var w time.Duration
	for _, t := range s.Trials {
		w = max(w, t.After)
	}
	return w
}

// Codes lists the trials' exit codes, each once, in order of first use.
func (s Stopped) Codes() string {
	var out []string
	for _, t := range s.Trials {
		c := fmt.Sprint(t.Code)
		if !strings.Contains(" "+strings.Join(out, " ")+" ", " "+c+" ") {
			out = append(out, c)
		}
	}
	return strings.Join(out, ",")
}

// TerminateShape creates a vault under work holding the shape, indexed,
// and runs every verb of Verbs whole, then again once per moment (a
// fraction of the whole run, 0 < f < 1), sent SIGTERM at that moment.
// Before each run the store is put back as it was (the first verb meets
// the page unindexed, the others indexed), so one interrupted run does not
// change the next. After each run it checks that nothing was left half
// done: the shape's files unchanged, no write intent or temporary file,
// the page written either whole or not at all.
func (r Runner) TerminateShape(work string, s Shape, moments []float64) ([]Stopped, error) {
	root := filepath.Join(work, s.Name)
	os.RemoveAll(root)
	defer os.RemoveAll(root)
	if err := r.Init(root); err != nil {
		return nil, err
	}
	db := filepath.Join(root, ".synapse", "synapse.db")
	if res := r.Run(root, "", "status"); res.Code != 0 {
		return nil, fmt.Errorf("status of a new vault: %s", res.Line(200))
	}
	before, err := os.ReadFile(db)
	if err != nil {
		return nil, err
	}
	if err := s.Write(root); err != nil {
		return nil, err
	}
	if res := r.Run(root, "", "reindex"); res.Code != 0 {
		return nil, fmt.Errorf("reindex: %s", res.Line(200))
	}
	indexed, err := os.ReadFile(db)
	if err != nil {
		return nil, err
	}
	var out []Stopped
	for i, v := range Verbs {
		args := v.fill(s)
		reset := func() error {
			store := indexed
			if i == 0 {
				store = before
			}
			if v.Args[0] == "source" {
				now := time.Now()
				for rel := range s.Files {
					os.Chtimes(filepath.Join(root, filepath.FromSlash(rel)), now, now)
				}
			}
			if v.Stdin != "" {
				os.Remove(filepath.Join(root, "wiki", "bystander.md"))
			}
			return os.WriteFile(db, store, 0o600)
		}
		if err := reset(); err != nil {
			return nil, err
		}
		st := Stopped{Verb: v.Name, Whole: r.Run(root, v.Stdin, args...)}
		for _, f := range moments {
			if err := reset(); err != nil {
				return nil, err
			}
			at := time.Duration(float64(st.Whole.Took) * f)
			after, res := r.TerminateIn(root, v.Stdin, at, args...)
			st.Trials = append(st.Trials, Trial{At: at, After: after, Code: res.Code, Line: res.Line(120),
				Harm: leftBehind(root, s, v.Stdin)})
		}
		out = append(out, st)
	}
	return out, nil
}

// fill is the verb's arguments for the shape.
func (v Verb) fill(s Shape) []string {
	args := make([]string, len(v.Args))
	for i, a := range v.Args {
		switch a {
		case "{title}":
			a = s.Title
		case "{word}":
			a = s.Word
		}
		args[i] = a
	}
	return args
}

// leftBehind says what a run left half done in the vault at root: a
// shape file changed, a write intent, a temporary file of a write, or the
// page of a write (stdin) on disk with other content than it was given.
func leftBehind(root string, s Shape, written string) string {
	var harm []string
	for rel, data := range s.Files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil || !bytes.Equal(got, data) {
			harm = append(harm, rel+" changed")
		}
	}
	if exists(filepath.Join(root, ".synapse", "write-intent")) {
		harm = append(harm, "a write intent")
	}
	filepath.WalkDir(filepath.Join(root, "wiki"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".tmp") {
			harm = append(harm, "a temporary file "+filepath.Base(p))
		}
		return nil
	})
	if written != "" {
		if f, err := os.Open(filepath.Join(root, "wiki", "bystander.md")); err == nil {
			got, _ := io.ReadAll(f)
			f.Close()
			if !bytes.HasSuffix(got, []byte(written)) {
				harm = append(harm, fmt.Sprintf("the written page holds %q", got))
			}
		}
	}
	return strings.Join(harm, "; ")
}
