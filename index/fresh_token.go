package index

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// MonitorTokenFile keeps the file monitor's token that the index is known
// to be current to: every change the monitor reported up to it has been
// compared with the records and indexed. It names the store it was
// written for (its file's inode and its commit count then), so a store
// replaced since (deleted and rebuilt, restored from a copy) does not
// inherit it.
const MonitorTokenFile = vault.StateDir + "/monitor.token"

// MonitorToken returns the monitor token the index is current to, or ""
// (none saved, or saved for another store).
func (ix *Indexer) MonitorToken() string {
	data, err := os.ReadFile(ix.Vault.Abs(MonitorTokenFile))
	if err != nil || len(data) > 1024 {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) != 4 || f[0] != "1" {
		return ""
	}
	ino, commits, err := ix.storeIdent()
	if err != nil || f[2] != strconv.FormatUint(ino, 10) {
		return ""
	}
	if n, err := strconv.ParseUint(f[3], 10, 64); err != nil || n > commits {
		return "" // an older copy of the store
	}
	return f[1]
}

// SaveMonitorToken records that the index is current to the monitor's
// token. The file is replaced atomically and not synced: losing it costs
// one full check.
func (ix *Indexer) SaveMonitorToken(token string) error {
	if token == "" || strings.ContainsAny(token, " \t\n") {
		return errors.New("monitor token: malformed")
	}
	ino, commits, err := ix.storeIdent()
	if err != nil {
		return err
	}
	p := ix.Vault.Abs(MonitorTokenFile)
	// one temporary name per call: the file monitor may save from two
	// verbs at once
	tmp := p + "." + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(tokenSaves.Add(1), 10) + ".tmp"
	if err := os.WriteFile(tmp, fmt.Appendf(nil, "1 %s %d %d\n", token, ino, commits), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// tokenSaves counts SaveMonitorToken's calls in this process.
var tokenSaves atomic.Uint64

// storeIdent names the store: its file's inode and its commit count.
func (ix *Indexer) storeIdent() (ino, commits uint64, err error) {
	st, err := os.Stat(ix.Store.Path())
	if err != nil {
		return 0, 0, err
	}
	_, ino, _, _ = fileIdent(st)
	err = ix.Store.View(func(tx *store.Tx) error {
		commits = tx.Commits()
		return nil
	})
	return ino, commits, err
}
