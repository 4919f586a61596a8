package main

import (
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

func init() {
	// staleparse VAULT: mark the vault's store as parsed by an older
	// synapse (its parse version 1), as a store left by an earlier
	// release is, so that the next scan re-reads every page once.
	scriptCmds["staleparse"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: staleparse VAULT")
		}
		s, err := store.Open(ts.MkAbs(args[0])+"/"+vault.DBFile, store.Options{})
		ts.Check(err)
		defer s.Close()
		ts.Check(s.Update(func(tx *store.Tx) error { return tx.SetMeta("parse_version", []byte("1")) }))
	}
}
