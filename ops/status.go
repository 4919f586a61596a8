package ops

import (
	"context"
	"time"

	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/store"
)

// StatusIn is the (empty) input of status.
type StatusIn struct{}

// StatusOut describes a vault and its index.
type StatusOut struct {
	Version string `json:"version"`
	Vault   string `json:"vault"`
	Pages   int    `json:"pages"`
	// Sources counts what `source list` lists: the files under
	// raw/sources/ and the cited files that are missing (SourcesMissing).
	Sources        int `json:"sources"`
	SourcesMissing int `json:"sources_missing"`
	Links          int `json:"links"`
	Dangling       int `json:"dangling"`
	Orphans        int `json:"orphans"`
	// Types lists the page types, the most used first, each with the
	// folder a new page of that type goes to (at most MaxTypesListed).
	Types []TypeCount `json:"types"`
	// StoreBytes is the store file's apparent size (its length);
	// StoreDiskBytes the space it takes on disk (its allocated blocks:
	// bbolt grows its file sparsely, so this is often far less).
	StoreBytes     int64  `json:"store_bytes"`
	StoreDiskBytes int64  `json:"store_disk_bytes"`
	Schema         int    `json:"schema"`
	LastScan       string `json:"last_scan"`
	PendingLinks   int    `json:"pending_links"`
	PendingGraph   int    `json:"pending_graph"`
	// Reviews counts review items by status (filled by the review queue).
	Reviews map[string]int `json:"reviews"`
	// ReviewsDecidedBy counts decided items by status, then by who decided
	// them (user, agent, rule, lint): an auto_resolved item resolved by
	// hand is told apart from one a producer resolved.
	ReviewsDecidedBy map[string]map[string]int `json:"reviews_decided_by"`
	// ReviewJournal describes the journal the review queue is replayed
	// from (filled by the review queue).
	ReviewJournal *JournalStatus `json:"review_journal"`
	// Refused lists the files the scans skipped instead of reading (named
	// pipes, sockets, devices, symlinks out of the vault, symlink loops,
	// unreadable folders, oversized pages), as the last scan of their
	// folder found them: the first MaxStatusRefused; RefusedCount counts
	// them all.
	Refused      []index.Refused `json:"refused"`
	RefusedCount int             `json:"refused_count"`
	// OverCap lists the pages indexed only in part because they go past a
	// parse limit (a name too long to be a key, more links or aliases than
	// a page may have, a YAML alias bomb), each saying what was left out,
	// and the pages over the write cap (index.MaxWriteBytes), which no
	// write can replace whole: the first MaxStatusRefused; OverCapCount
	// counts them all.
	OverCap      []store.CappedPage `json:"over_cap"`
	OverCapCount int                `json:"over_cap_count"`
	// StoreHealed says when the store's file was last found damaged and
	// rebuilt from the vault's files, where the damaged file went and
	// what became of the review queue (queue_lost: items could not be
	// read back); shown for 30 days.
	StoreHealed *store.HealRecord `json:"store_healed,omitempty"`
	// Embeddings describes the optional embedding provider and vectors
	// (ops/embed.go).
	Embeddings *EmbedStatus `json:"embeddings"`
	// ReservedFiles lists the top files synapse maintains but leaves alone
	// as they are (a hand-written wiki/index.md), each with its fix.
	ReservedFiles []ReservedFile `json:"reserved_files"`
	// Indexing is the progress of the index being built from scratch in
	// this process (a server's first index, a reindex, or the completion
	// of one that was interrupted), absent when none runs. A server
	// answers status at once meanwhile (REST); other reads wait for it or
	// answer unavailable with the same progress.
	Indexing *index.Activity `json:"indexing,omitempty"`
	// Freshness is what this command found of the files changed since the
	// index was last brought up to date, and whether it indexed them
	// first (ops/fresh.go): set when the CLI opened the store itself,
	// absent from a server (its watcher keeps the index current).
	Freshness *Freshness `json:"freshness,omitempty"`
	// History is the page history's use and bounds, and whether writes
	// commit to git (ops/history_write.go).
	History *HistoryStatus `json:"history"`
	// Config names the settings of the vault's own config that were
	// ignored because the user has not trusted the file as it is
	// (docs/security.md); absent when none was.
	Config *ConfigStatus `json:"config,omitempty"`
}

// ConfigStatus is the part of status that says which settings of the
// vault's .synapse/config.yaml were ignored, and how to use them.
type ConfigStatus struct {
	// Trust is "untrusted" (never trusted) or "changed" (changed since it
	// was trusted).
	Trust   string   `json:"trust"`
	Ignored []string `json:"ignored"`
	Note    string   `json:"note"`
}

// MaxStatusRefused caps the refused files status lists.
const MaxStatusRefused = 100

var opStatus = register(Op{
	Name: "status", Summary: "Counts and health of the vault and its index",
	CLI: "status", REST: []Route{{Method: "GET", Path: "/status"}},
	Access: Read, Always: true,
	Examples: []Example{{`synapse status --json`, "pages, sources, links, orphans, reviews and the store's size"}},
}, status)

func status(ctx context.Context, e *Env, in *StatusIn) (*StatusOut, error) {
	_ = e.syncQueue() // a journal that cannot be read is reported below
	out := &StatusOut{Version: Version, Vault: e.Vault.Root, Schema: store.SchemaVersion,
		StoreBytes: e.Store.SizeBytes(), StoreDiskBytes: e.Store.DiskBytes(), Reviews: map[string]int{}}
	err := e.Store.View(func(tx *store.Tx) error {
		out.Pages = tx.PageCount()
		files, missing := sourceTotals(tx)
		out.Sources, out.SourcesMissing = files+missing, missing
		tx.EachTitle(func(doc uint32, _ string) bool {
			if !tx.HasBacklinks(doc) {
				out.Orphans++
			}
			return true
		})
		for _, d := range tx.Dangling() {
			out.Dangling += d.Count
		}
		out.Links = tx.LinkCount()
		out.Types = typesByUse(tx)
		if t, ok := tx.LastScan(); ok {
			out.LastScan = t.UTC().Format(time.RFC3339)
		}
		rl := index.RefusedFiles(tx)
		out.Refused, out.RefusedCount = rl.Files[:min(len(rl.Files), MaxStatusRefused)], rl.Count
		if h, ok := tx.HealRecord(); ok && e.now().Sub(h.At) < healAge {
			out.StoreHealed = &h
		}
		out.OverCapCount, out.OverCap = tx.CappedPages(0, MaxStatusRefused)
		if out.OverCap == nil {
			out.OverCap = []store.CappedPage{}
		}
		out.PendingLinks = len(tx.LinksDirty(0))
		out.PendingGraph = tx.GraphDirtyCount()
		reviewStatus(tx, e.files(), out)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cfg, err := e.Vault.LoadConfig(); err == nil && len(cfg.Ignored) > 0 {
		out.Config = &ConfigStatus{Trust: cfg.TrustState, Ignored: cfg.Ignored, Note: cfg.UntrustedNote()}
	}
	embedStatus(ctx, e, out)
	out.ReservedFiles = reservedFiles(e)
	out.History = historyStatus(ctx, e)
	if a, ok := e.Index.Activity(); ok && a.Rebuild {
		out.Indexing = &a
	}
	out.Freshness = e.Fresh
	return out, nil
}

// ReindexIn is the (empty) input of reindex.
type ReindexIn struct{}

var opReindex = register(Op{
	Name: "reindex", Summary: "Rebuild every derived index from the files, and the review queue from its journal",
	CLI: "reindex", Access: Write, Scans: true,
	Examples: []Example{{`synapse reindex`, "rebuild the index from the files and the review queue from reviews.jsonl"}},
}, reindex)

// ReindexOut is the result of reindex: the scan that rebuilt the index
// (every file counts as new in it: the index was emptied first) and what
// the rebuilt index holds.
type ReindexOut struct {
	index.Report
	Pages   int `json:"pages"`   // pages indexed (the reserved index, log and overview not counted)
	Sources int `json:"sources"` // files tracked under raw/sources/
	// Reviews is the replay of the review journal that rebuilt the queue.
	Reviews *ReplayReport `json:"reviews"`
}

func reindex(ctx context.Context, e *Env, in *ReindexIn) (*ReindexOut, error) {
	rep, err := e.Index.Scan(ctx, index.ScanOptions{Full: true})
	if err != nil {
		return nil, err
	}
	out := &ReindexOut{Report: *rep}
	if out.Reviews, err = e.replayQueue(true); err != nil {
		return nil, err
	}
	err = e.Store.View(func(tx *store.Tx) error {
		out.Pages = tx.PageCount()
		return tx.EachFile("raw/sources/", func(string, store.FileRec) bool { out.Sources++; return true })
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RescanIn is the (empty) input of trigger_source_rescan.
type RescanIn struct{}

var opRescan = register(Op{
	Name: "source.rescan", Summary: "Rescan wiki/ and raw/sources/ for new, changed and deleted files",
	CLI: "source rescan", MCP: "trigger_source_rescan", REST: []Route{{Method: "POST", Path: "/sources/rescan"}},
	Access: Write, Scans: true, Limits: "path lists capped at 100 each, with counts",
	Additive: true, Idempotent: true,
	Title:    "Rescan the vault for changed files",
	Examples: []Example{{`synapse source rescan`, "pick up files added, changed or deleted since the last scan"}},
}, rescan)

func rescan(ctx context.Context, e *Env, in *RescanIn) (*index.Report, error) {
	var rep *index.Report
	var err error
	if e.Rescan != nil {
		rep, err = e.Rescan(ctx)
	} else {
		rep, err = e.Index.Scan(ctx, index.ScanOptions{})
	}
	if err != nil {
		return nil, err
	}
	// a write that could not regenerate index.md (a full disk) left the
	// catalogue's changes pending: the rescan brings the file up to date
	if err := repairIndexMD(e); err != nil {
		return nil, err
	}
	return rep, nil
}
