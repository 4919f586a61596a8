package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// Freshness is what a CLI verb that opened the store itself found, before
// answering, of the files changed since the index was last brought up to
// date (an edit in Obsidian, a copy-in, a git pull), and what it did.
type Freshness struct {
	index.Staleness
	// Indexed says the changes were indexed before this answer.
	Indexed bool `json:"indexed"`
	// NotIndexed says why they were not (another process holds the
	// store's write lock): this answer comes from the index as it was.
	NotIndexed string `json:"not_indexed,omitempty"`
	// MonitorPID is the vault's file monitor that told what changed (mode
	// monitor: only those paths were checked); Monitor says why none did,
	// or why its answer was not enough (a monitor started since the last
	// command: every file was checked once more).
	MonitorPID int    `json:"monitor_pid,omitempty"`
	Monitor    string `json:"monitor,omitempty"`
	// AnsweredBy is "monitor" when the file monitor ran the verb for the
	// CLI (nothing had changed that was not indexed: the CLI neither
	// opened the store nor started its own search), and MonitorAnswers
	// how many verbs it has answered so, this one included.
	AnsweredBy     string `json:"answered_by,omitempty"`
	MonitorAnswers int    `json:"monitor_answers,omitempty"`
}

// envCheckFiles overrides the `freshness: max_files` configuration;
// envFresh=off turns the check off (scripts that know nothing changed).
const (
	envCheckFiles = "SYNAPSE_FRESH_MAX_FILES"
	envFresh      = "SYNAPSE_FRESH"
)

// freshOff reports whether SYNAPSE_FRESH=off turns the check off.
func freshOff() bool { return strings.EqualFold(strings.TrimSpace(os.Getenv(envFresh)), "off") }

// checkFiles is the bound of the file-by-file check for a vault. A verb
// that writes checks folders and the recently modified files only (-1),
// whatever the vault's size: a page write reads and hashes its own page
// anyway, and stat'ing every file would be most of its cost (16,600
// files: ~20 ms of CPU); an edit in place to another file is indexed by
// the next read verb. SYNAPSE_FRESH_MAX_FILES, when set, applies to
// every verb.
func checkFiles(cfg *vault.Config, write bool) int {
	if v := strings.TrimSpace(os.Getenv(envCheckFiles)); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	if write {
		return -1
	}
	return cfg.Freshness.MaxFiles
}

// freshen runs the freshness check (index.Check) and, when files changed,
// indexes them before the operation answers. A store opened read-only
// trades its shared lock for the write lock without waiting; when another
// process holds the store, the read answers from the persisted index and
// a note says so. It never waits longer than o.Timeout for a lock.
func (e *Env) freshen(ctx context.Context, o OpenOptions, cfg *vault.Config, maxFiles int) error {
	fc, err := e.check(ctx, o, cfg, maxFiles)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if o.NeverWrite {
			return err // not vouched for: no answer
		}
		e.note(o, "could not check for files changed since the last scan: %v", err)
		return nil
	}
	st := fc.st
	e.Fresh = &Freshness{Staleness: *st, MonitorPID: fc.pid, Monitor: fc.monitor}
	if n := len(st.Deferred); n > 0 {
		e.note(o, "%s over 16 MiB changed since the last scan and not hashed before this answer (%s); `synapse source rescan` indexes them",
			filesCount(n), st.Deferred[0])
	}
	if !st.NeedsWrite() {
		e.saveToken(fc)
		return nil
	}
	if o.NeverWrite {
		return fmt.Errorf("%w: %s changed since the last scan", ErrNeedsWriter, filesCount(max(st.Count(), 1)))
	}
	if e.Store.ReadOnly() {
		path := e.Vault.Abs(vault.DBFile)
		e.Store.Close()
		// a timeout below bbolt's retry interval tries the lock once
		s, err := store.Open(path, store.Options{Timeout: time.Nanosecond, Holder: reconcileHolder(o.Holder, st)})
		if err != nil {
			why := "another synapse process holds the store"
			then := "run `synapse source rescan` when it is done"
			switch {
			case errors.Is(err, store.ErrReadOnlyFS):
				why, then = "the file system holding the vault is read-only", "nothing can be indexed until it is writable"
			case !errors.Is(err, store.ErrLocked):
				return err
			}
			// back to the shared lock: the read answers from the index
			if s, err = store.Open(path, store.Options{ReadOnly: true, Timeout: o.Timeout}); err != nil {
				return err
			}
			e.setStore(s)
			if st.Count() > 0 {
				e.Fresh.NotIndexed = why
				e.note(o, "%s changed since the last scan (%s); %s, so this answer comes from the index as it was (%s)",
					filesCount(st.Count()), ChangeSummary(st.New, st.Changed, st.Deleted), why, then)
			}
			return nil
		}
		e.setStore(s)
		// a damaged file found by this open was replaced by a new store:
		// the review queue goes back, and the whole vault is scanned into it
		if healed, err := e.afterHeal(ctx); healed || err != nil {
			if err == nil {
				_, err = e.Index.Scan(ctx, index.ScanOptions{})
			}
			return err
		}
	}
	if _, err := e.Index.Reconcile(ctx, st); err != nil {
		return err
	}
	e.Fresh.Indexed = st.Count() > 0
	e.saveToken(fc)
	return nil
}

func (e *Env) setStore(s *store.Store) {
	e.Store = s
	e.Index.Store = s
}

func (e *Env) note(o OpenOptions, format string, args ...any) {
	if o.Notify != nil {
		o.Notify(fmt.Sprintf(format, args...))
	}
}

// reconcileHolder describes a verb indexing changed files, for whoever
// finds the store held meanwhile.
func reconcileHolder(holder string, st *index.Staleness) string {
	if st.Count() == 0 {
		return holder
	}
	return fmt.Sprintf("%s, indexing %s changed since the last scan", holder, filesCount(st.Count()))
}

func filesCount(n int) string {
	if n == 1 {
		return "1 file"
	}
	return strconv.Itoa(n) + " files"
}

// ChangeSummary is "2 new, 1 changed, 1 deleted" without the zeros (the
// freshness notes here and `synapse status`'s line).
func ChangeSummary(added, changed, deleted int) string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{added, "new"}, {changed, "changed"}, {deleted, "deleted"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	return strings.Join(parts, ", ")
}
