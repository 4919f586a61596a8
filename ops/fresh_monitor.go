package ops

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// A FreshMonitor is the vault's file monitor as a CLI verb reaches it
// (internal/monitor: a process that watches the vault's files and is
// started by the first verb that asks): it tells which files changed
// since a token, so that the freshness check costs what changed instead
// of a stat of every file.
type FreshMonitor interface {
	// Changes returns the vault paths (files and folders) changed since
	// token, or Full when it cannot say, and the token for now. An error
	// is no answer (none runs yet — the call may start one —, it cannot
	// run here, it timed out): the verb checks the files itself.
	Changes(ctx context.Context, token string) (*MonitorAnswer, error)
}

// MonitorAnswer is a file monitor's answer (FreshMonitor).
type MonitorAnswer struct {
	Token string
	Paths []string
	Full  bool
	PID   int
}

// MonitorMinPages is the vault size from which freshness.monitor "auto"
// uses a file monitor: below it, a stat of every file costs about what
// asking the monitor does.
const MonitorMinPages = 2000

// envMonitor overrides the `freshness: monitor` configuration.
const envMonitor = "SYNAPSE_FRESH_MONITOR"

// monitorSetting is the freshness.monitor setting: auto, on or off.
func monitorSetting(cfg *vault.Config) (string, error) {
	m := strings.ToLower(strings.TrimSpace(os.Getenv(envMonitor)))
	where := envMonitor
	if m == "" {
		m, where = strings.ToLower(strings.TrimSpace(cfg.Freshness.Monitor)), "freshness.monitor in "+vault.ConfigFile
	}
	switch m {
	case "", "auto":
		return "auto", nil
	case "on", "off":
		return m, nil
	}
	return "", errs.E(errs.Invalid, "%s: %q is not auto, on or off", where, m)
}

// MonitorOff reports whether the freshness.monitor setting (or
// SYNAPSE_FRESH_MONITOR) turns the file monitor off, or is not valid: a
// CLI then hands no verb to a running monitor either.
func MonitorOff(cfg *vault.Config) bool {
	m, err := monitorSetting(cfg)
	return err != nil || m == "off"
}

// freshCheck is what the freshness check compared, and the monitor token
// the index is current to once it has indexed what the check found ("":
// no monitor answered).
type freshCheck struct {
	st      *index.Staleness
	token   string
	prev    string // the token the index was current to before
	monitor string // Freshness.Monitor
	pid     int
}

// check runs the freshness check: the paths the file monitor reports,
// when one is to be used and answers, else index.Check.
func (e *Env) check(ctx context.Context, o OpenOptions, cfg *vault.Config, maxFiles int) (*freshCheck, error) {
	fc := &freshCheck{}
	start := time.Now()
	if why := e.monitorUnused(o, cfg); why != "" {
		fc.monitor = why
	} else {
		fc.prev = e.Index.MonitorToken()
		ans, err := o.Monitor.Changes(ctx, fc.prev)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			fc.monitor = err.Error()
		case ans.Full:
			// a monitor that started since the index was last current: one
			// last check by stat, then its token holds — once a read verb
			// has made that check (a write verb checks folders only, so
			// an edit in place made before the monitor ran would be
			// vouched for unseen)
			fc.pid = ans.PID
			if o.ReadOnly {
				fc.token = ans.Token
			}
			fc.monitor = "started since the last command: every file checked once more"
		default:
			fc.token, fc.pid = ans.Token, ans.PID
			st, err := e.Index.CheckPaths(ctx, ans.Paths)
			if err == nil {
				st.DurationUS = time.Since(start).Microseconds() // the question included
			}
			fc.st = st
			return fc, err
		}
	}
	st, err := e.Index.Check(ctx, index.CheckOptions{MaxFiles: maxFiles})
	fc.st = st
	return fc, err
}

// monitorUnused says why no file monitor is asked ("": one is).
func (e *Env) monitorUnused(o OpenOptions, cfg *vault.Config) string {
	if o.Monitor == nil {
		return "none for this command"
	}
	m, _ := monitorSetting(cfg) // (OpenEnv refused a bad one)
	switch {
	case m == "off":
		return "off (freshness.monitor)"
	case m == "auto":
		pages := 0
		_ = e.Store.View(func(tx *store.Tx) error { pages = tx.PageCount(); return nil })
		if pages < MonitorMinPages {
			return fmt.Sprintf("not used below %d pages (freshness.monitor: on uses it)", MonitorMinPages)
		}
	}
	return ""
}

// saveToken records the monitor token the index is now current to.
func (e *Env) saveToken(fc *freshCheck) {
	if fc.token == "" || fc.token == fc.prev {
		return
	}
	_ = e.Index.SaveMonitorToken(fc.token) // lost: one more check by stat
}
