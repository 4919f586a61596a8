package ops

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/vault"
)

// fakeMonitor answers as a file monitor would, from a list the test
// keeps, and records the tokens it is asked about.
type fakeMonitor struct {
	seq   int
	paths []string // changed since the last answer
	full  bool
	err   error
	asked []string
}

func (m *fakeMonitor) Changes(_ context.Context, token string) (*MonitorAnswer, error) {
	m.asked = append(m.asked, token)
	if m.err != nil {
		return nil, m.err
	}
	m.seq++
	a := &MonitorAnswer{Token: "run:" + string(rune('0'+m.seq)), Paths: m.paths, Full: m.full, PID: 42}
	m.paths, m.full = nil, false
	return a, nil
}

// monitoredVault is an indexed vault holding the page Loom (and the page
// Engine when engine is not empty), with freshness.monitor on.
func monitoredVault(t *testing.T, engine string) *vault.Vault {
	t.Helper()
	t.Setenv(envMonitor, "on")
	v := testvault.New(t)
	testvault.Write(t, v, "wiki/concepts/loom.md", "# Loom\nA weaving machine.\n")
	if engine != "" {
		testvault.Write(t, v, "wiki/concepts/engine.md", engine)
	}
	e, err := OpenEnv(context.Background(), v, OpenOptions{Holder: "test"})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	return v
}

// monitoredRead is freshRead with a file monitor.
func monitoredRead(t *testing.T, v *vault.Vault, m FreshMonitor, query string) (int, *Freshness) {
	t.Helper()
	e, err := OpenEnv(context.Background(), v, OpenOptions{ReadOnly: true, Timeout: 100 * time.Millisecond,
		Holder: "test read", Fresh: true, Monitor: m})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	out, err := searchWiki(context.Background(), e, &SearchIn{Query: query, K: 10})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Hits), e.Fresh
}

// TestFresh_Monitor: with a file monitor, a read checks only the paths
// it reports (an edit it did not report is not looked for: proof that
// the stat of every file is skipped), indexes them, and asks next time
// since the token it was given; a new monitor's Full answer and a monitor
// that cannot answer fall back to the check of every file; below
// MonitorMinPages "auto" does not ask.
func TestFresh_Monitor(t *testing.T) {
	v := monitoredVault(t, "# Engine\nA calculating machine.\n")
	m := &fakeMonitor{full: true}
	if _, f := monitoredRead(t, v, m, "loom"); f.Mode != "files" || f.MonitorPID != 42 || f.Monitor == "" {
		t.Fatalf("a new monitor's answer: %+v; want every file checked", f)
	}
	testvault.Write(t, v, "wiki/concepts/loom.md", "# Loom\nA weaving machine read by punched cards.\n")
	testvault.Write(t, v, "wiki/concepts/engine.md", "# Engine\nA calculating machine with punched cards.\n")
	m.paths = []string{"wiki/concepts/loom.md"}
	hits, f := monitoredRead(t, v, m, "punched")
	if hits != 1 || f.Mode != "monitor" || !f.Indexed || f.Changed != 1 || f.MonitorPID != 42 {
		t.Fatalf("after an edit the monitor reported: %d hits, %+v; want loom only, indexed", hits, f)
	}
	if want := []string{"", "run:1"}; !slices.Equal(m.asked, want) {
		t.Fatalf("tokens asked %q, want %q", m.asked, want)
	}
	// a read with nothing reported asks since the token it saved
	if _, f := monitoredRead(t, v, m, "punched"); f.Count() != 0 || m.asked[2] != "run:2" {
		t.Fatalf("next read: %+v, asked %q", f, m.asked)
	}

	// no answer: every file is checked, and engine's edit is found
	m.err = errors.New("the monitor did not answer in time")
	hits, f = monitoredRead(t, v, m, "punched")
	if hits != 2 || f.Mode != "files" || f.Changed != 1 || f.Monitor != m.err.Error() {
		t.Fatalf("without an answer: %d hits, %+v", hits, f)
	}

	t.Setenv(envMonitor, "auto")
	n := len(m.asked)
	if _, f := monitoredRead(t, v, m, "punched"); len(m.asked) != n || f.Mode != "files" || f.Monitor == "" {
		t.Fatalf("auto on a small vault asked the monitor: %+v", f)
	}
	t.Setenv(envMonitor, "sometimes")
	if _, err := OpenEnv(context.Background(), v, OpenOptions{ReadOnly: true, Fresh: true, Monitor: m}); !errs.Is(err, errs.Invalid) {
		t.Fatalf("a bad setting: %v, want invalid", err)
	}
}

// TestFresh_MonitorFullWrite: a new monitor's token is saved only after
// a read verb's check (of every file, in a vault this size); a write
// verb checks folders only, so its check cannot vouch for edits in place
// made before the monitor ran.
func TestFresh_MonitorFullWrite(t *testing.T) {
	v := monitoredVault(t, "")
	m := &fakeMonitor{full: true}
	w, err := OpenEnv(context.Background(), v, OpenOptions{Holder: "test write", Fresh: true, Monitor: m})
	if err != nil {
		t.Fatal(err)
	}
	tok := w.Index.MonitorToken()
	w.Close()
	if tok != "" {
		t.Fatalf("a write verb saved the new monitor's token %q", tok)
	}
	m.full = true
	monitoredRead(t, v, m, "loom")
	if want := []string{"", ""}; !slices.Equal(m.asked, want) {
		t.Fatalf("tokens asked %q, want %q", m.asked, want)
	}
	r, err := OpenEnv(context.Background(), v, OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if tok := r.Index.MonitorToken(); tok != "run:2" {
		t.Fatalf("after a read verb's check: token %q, want run:2", tok)
	}
}

// TestFresh_NeverWrite: an open that must not write (the file monitor
// answering a verb) answers when the monitor's paths are indexed as they
// are, and otherwise fails with ErrNeedsWriter without indexing anything:
// an edit it was told of, a move to finish. A writer holding the store
// fails it at once, without a wait.
func TestFresh_NeverWrite(t *testing.T) {
	v := monitoredVault(t, "")
	m := &fakeMonitor{full: true}
	monitoredRead(t, v, m, "loom") // the token holds from now on
	open := func() (*Env, error) {
		return OpenEnv(context.Background(), v, OpenOptions{NeverWrite: true, Fresh: true, Timeout: time.Nanosecond, Monitor: m})
	}
	e, err := open()
	if err != nil {
		t.Fatalf("nothing changed: %v", err)
	}
	out, err := searchWiki(context.Background(), e, &SearchIn{Query: "weaving", K: 10})
	if err != nil || len(out.Hits) != 1 || e.Fresh.Mode != "monitor" || !e.Store.ReadOnly() {
		t.Fatalf("nothing changed: %v, %+v, read-only %v", err, e.Fresh, e.Store.ReadOnly())
	}
	e.Close()

	testvault.Write(t, v, "wiki/concepts/loom.md", "# Loom\nA weaving machine read by punched cards.\n")
	m.paths = []string{"wiki/concepts/loom.md"}
	if _, err := open(); !errors.Is(err, ErrNeedsWriter) {
		t.Fatalf("after an edit: %v, want ErrNeedsWriter", err)
	}
	m.paths = []string{"wiki/concepts/loom.md"} // reported again: nothing was indexed
	if hits, f := monitoredRead(t, v, m, "punched"); hits != 1 || !f.Indexed || f.Changed != 1 {
		t.Fatalf("the read after: %d hits, %+v; want the edit indexed by it", hits, f)
	}

	testvault.Write(t, v, moveJournalFile, "{}\n")
	if _, err := open(); !errors.Is(err, ErrNeedsWriter) {
		t.Fatalf("a move to finish: %v, want ErrNeedsWriter", err)
	}
	if err := os.Remove(v.Abs(moveJournalFile)); err != nil {
		t.Fatal(err)
	}

	w, err := OpenEnv(context.Background(), v, OpenOptions{Holder: "test writer"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	start := time.Now()
	if _, err := open(); err == nil || time.Since(start) > time.Second {
		t.Fatalf("beside a writer: %v after %v, want a failure at once", err, time.Since(start))
	}
}
