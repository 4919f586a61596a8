package main

import (
	"context"
	"log"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/server"
	"github.com/synapse-wiki/synapse/internal/server/servertest"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// staleindex VAULT marks the vault's search index as built by another
// version of synapse (search-rebuild.txtar).
func init() {
	scriptCmds["staleindex"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: staleindex VAULT")
		}
		s, err := store.Open(ts.MkAbs(args[0]+"/"+vault.DBFile), store.Options{})
		ts.Check(err)
		ts.Check(s.Update(func(tx *store.Tx) error { return tx.SetSearchVersion("0-older") }))
		ts.Check(s.Close())
	}
}

// blockingRebuilder is the search indexer with its IndexPages held until
// released, so a test can look at a server while it rebuilds the index.
type blockingRebuilder struct {
	search.Indexer
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (b *blockingRebuilder) IndexPages(tx *store.Tx, pages []index.IndexedPage) error {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	return b.Indexer.IndexPages(tx, pages)
}

// TestLive_ServeRebuildsAStaleSearchIndex: serve started on a store whose
// search index another version of synapse built rebuilds it in the
// background, says so in its log, answers search unavailable with how far
// it has got meanwhile (MCP and a CLI verb forwarded to it alike) while
// the other tools answer, then answers search.
func TestLive_ServeRebuildsAStaleSearchIndex(t *testing.T) {
	v := servertest.LiveVault(t, filepath.Join(t.TempDir(), "v"))
	if r := runCLI(v, "", "reindex"); r.code != 0 {
		t.Fatal(r)
	}
	s, err := store.Open(v.Abs(vault.DBFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx *store.Tx) error { return tx.SetSearchVersion("0-older") }); err != nil {
		t.Fatal(err)
	}
	s.Close()

	env, err := ops.OpenEnv(context.Background(), v, ops.OpenOptions{Holder: "synapse serve (test)", NoInitialScan: true})
	if err != nil {
		t.Fatal(err)
	}
	br := &blockingRebuilder{entered: make(chan struct{}), release: make(chan struct{})}
	env.Index.Pages = br
	logs := &servertest.SyncBuffer{}
	svc := server.Open(ops.Table(), env, server.Config{Stdio: true, Holder: "synapse serve (test)"}, log.New(logs, "synapse: ", 0))
	ls := &liveServer{servertest.Run(t, svc, v, logs), svc}
	released := false
	t.Cleanup(func() {
		if !released {
			close(br.release)
		}
	})
	select {
	case <-br.entered:
	case <-time.After(15 * time.Second):
		t.Fatalf("serve did not start rebuilding the search index; logs:\n%s", logs.String())
	}

	_, err = servertest.CallOp(ls.s, "search_wiki", map[string]any{"query": "canvas"})
	if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "being rebuilt") || !strings.Contains(err.Error(), "(0 of 173 pages so far)") {
		t.Fatalf("search during the rebuild: %v", err)
	}
	if r := runCLI(v, "", "search", "canvas"); r.code != 5 || !strings.Contains(r.stderr, "the search index is being rebuilt") {
		t.Fatalf("CLI search during the rebuild: %+v", r)
	}
	if servertest.PageVia(ls.s, "Canvas").Title != "Canvas" {
		t.Fatal("get_page did not answer during the search rebuild")
	}
	if !strings.Contains(logs.String(), "the search index was built by another version of synapse; rebuilding it") {
		t.Errorf("serve's log does not say it rebuilds the search index:\n%s", logs.String())
	}
	close(br.release)
	released = true
	servertest.Eventually(t, "search after the rebuild", func() bool {
		out, err := servertest.CallOp(ls.s, "search_wiki", map[string]any{"query": "canvas"})
		return err == nil && strings.Contains(servertest.ResultJSON(t, out), `"title":"Canvas"`)
	})
	if r := runCLI(v, "", "search", "canvas"); r.code != 0 || !strings.Contains(r.stdout, "\tCanvas\t") {
		t.Fatalf("CLI search after the rebuild: %+v", r)
	}
}
