package ops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/synapse-wiki/synapse/embed"
	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// Optional embeddings (docs/search.md): the provider's configuration, the embed
// operation, the search modes, the status fields and the background
// embedding of `serve`.

// Environment overrides of the vault's `embeddings:` configuration.
const (
	EnvEmbedURL       = "SYNAPSE_EMBED_URL"         // endpoint; "off" turns embeddings off
	EnvEmbedModel     = "SYNAPSE_EMBED_MODEL"       // model name
	EnvEmbedAPIKeyEnv = "SYNAPSE_EMBED_API_KEY_ENV" // name of the variable holding the API key
)

// Defaults of the provider's timeouts.
const (
	defaultEmbedTimeout = 60 * time.Second
	defaultQueryTimeout = 2 * time.Second
	// breakerPause is how long searches skip a provider that just failed
	// (they answer lexically at once instead of waiting for it again).
	breakerPause = 30 * time.Second
)

// NewEmbedProvider builds the client of an OpenAI-compatible embeddings
// endpoint. Package main sets it (embed/openai); nil means this build
// cannot embed.
var NewEmbedProvider func(url, model, apiKey string, timeout time.Duration) embed.Provider

// embedConfig is the resolved provider configuration.
type embedConfig struct {
	URL, Model, APIKey, APIKeyEnv string
	Batch, Concurrency            int
	Timeout, QueryTimeout         time.Duration
}

// embedSettings resolves the provider from the vault's configuration and
// the caller's environment. ok is false when no provider is configured;
// err names a broken configuration.
func embedSettings(ctx context.Context, e *Env) (c embedConfig, ok bool, err error) {
	cfg, err := e.Vault.LoadConfig()
	if err != nil {
		return c, false, err
	}
	ec := cfg.Embeddings
	c = embedConfig{URL: ec.URL, Model: ec.Model, APIKeyEnv: ec.APIKeyEnv, Batch: ec.Batch, Concurrency: ec.Concurrency,
		Timeout: defaultEmbedTimeout, QueryTimeout: defaultQueryTimeout}
	if v := getenv(ctx, EnvEmbedURL); v != "" {
		c.URL = v
	}
	if v := getenv(ctx, EnvEmbedModel); v != "" {
		c.Model = v
	}
	if v := getenv(ctx, EnvEmbedAPIKeyEnv); v != "" {
		c.APIKeyEnv = v
	}
	if c.URL == "" || c.URL == "off" {
		return c, false, nil
	}
	if c.Model == "" {
		return c, false, errs.E(errs.Invalid, "embeddings: url is set but model is not (.synapse/config.yaml embeddings.model or $%s)", EnvEmbedModel)
	}
	for _, d := range []struct {
		name, v string
		to      *time.Duration
	}{{"timeout", ec.Timeout, &c.Timeout}, {"query_timeout", ec.QueryTimeout, &c.QueryTimeout}} {
		if d.v == "" {
			continue
		}
		t, err := time.ParseDuration(d.v)
		if err != nil || t <= 0 {
			return c, false, errs.E(errs.Invalid, "embeddings.%s %q: want a duration such as 30s", d.name, d.v)
		}
		*d.to = t
	}
	if c.APIKeyEnv != "" {
		c.APIKey = getenv(ctx, c.APIKeyEnv)
	}
	return c, true, nil
}

func (c embedConfig) provider(timeout time.Duration) (embed.Provider, error) {
	if NewEmbedProvider == nil {
		return nil, errs.E(errs.Unavailable, "this build of synapse has no embeddings client")
	}
	return NewEmbedProvider(c.URL, c.Model, c.APIKey, timeout), nil
}

// EmbedState is a process's embedding state, shared by every copy of an
// Env: one run at a time, the breaker that keeps searches from waiting on
// a provider that just failed, and the background worker of `serve`.
type EmbedState struct {
	run sync.Mutex // held by a run

	mu       sync.Mutex
	failedAt time.Time // when a search's query vector last failed
	failure  string
	kick     chan struct{}
	stop     context.CancelFunc
	done     chan struct{}
}

func newEmbedState() *EmbedState { return &EmbedState{} }

func (st *EmbedState) tripped(now time.Time) (string, bool) {
	if st == nil {
		return "", false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.failure != "" && now.Sub(st.failedAt) < breakerPause {
		return st.failure, true
	}
	return "", false
}

func (st *EmbedState) record(now time.Time, err error) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if err == nil {
		st.failure = ""
		return
	}
	st.failedAt, st.failure = now, errs.Message(err)
	if pe, ok := embed.Failure(err); ok {
		st.failure = pe.Error()
	}
}

// EmbedIn is the input of embed.
type EmbedIn struct {
	Rebuild bool `json:"rebuild,omitempty" desc:"Drop every stored vector and embed all pages again"`
}

// EmbedOut is the result of embed: the run's report and the provider.
type EmbedOut struct {
	Provider string `json:"provider"`
	embed.Report
}

var opEmbed = register(Op{
	Name: "embed", Summary: "Embed new and changed pages with the configured provider (for semantic and hybrid search)",
	CLI: "embed", REST: []Route{{Method: "POST", Path: "/embed"}},
	Access: Write, Concurrent: true,
	Limits: "only chunks whose text changed are sent; resumable",
	Examples: []Example{
		{`synapse embed`, "embed new and changed pages with the provider of ~/.config/synapse/config.yaml or a trusted .synapse/config.yaml (embeddings: url, model)"},
		{`SYNAPSE_EMBED_URL=http://127.0.0.1:11434/v1/embeddings SYNAPSE_EMBED_MODEL=nomic-embed-text synapse embed --json`, "a provider from the environment; the run's report as JSON"},
		{`synapse embed --rebuild`, "drop every vector and embed all pages again"},
	},
	Exits: map[int]string{5: "unavailable: no provider is configured, or it is down, slow or answers garbage (the message says which; what was stored stays)"},
}, embedPages)

func embedPages(ctx context.Context, e *Env, in *EmbedIn) (*EmbedOut, error) {
	c, ok, err := embedSettings(ctx, e)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errs.E(errs.Unavailable, "no embedding provider is configured: set embeddings.url and embeddings.model in ~/.config/synapse/config.yaml, or in %s and run `synapse trust` (or $%s and $%s)", vault.ConfigFile, EnvEmbedURL, EnvEmbedModel)
	}
	rep, err := runEmbedding(ctx, e, c, in.Rebuild, e.Progress)
	if rep == nil {
		return nil, err
	}
	out := &EmbedOut{Provider: c.URL, Report: *rep}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// runEmbedding runs one embedding pass (one at a time per process).
func runEmbedding(ctx context.Context, e *Env, c embedConfig, rebuild bool, progress index.Progress) (*embed.Report, error) {
	p, err := c.provider(c.Timeout)
	if err != nil {
		return nil, err
	}
	st := e.embedState()
	st.run.Lock()
	defer st.run.Unlock()
	o := embed.RunOptions{Model: c.Model, Provider: p, ReadFile: e.readPage, Batch: c.Batch, Concurrency: c.Concurrency,
		Retries: embed.DefaultRetries, Rebuild: rebuild, Now: e.now, What: "synapse embed"}
	if e.reopen == nil {
		o.What = "synapse serve"
	}
	if progress != nil {
		o.Progress = func(done, total int) { progress("embed", done, total) }
	}
	return embed.Run(ctx, e.embedDB(), o)
}

// detachWait bounds how long a detached run waits for the store's lock
// for one transaction (another verb holds it for a moment; a reindex or a
// server longer: the run then stops, keeping what it stored).
const detachWait = 30 * time.Second

// embedDB is the store as an embedding run uses it. When the Env may
// detach (a CLI verb run alone), the store is closed and opened again for
// each of the run's transactions only: while the provider works, other
// verbs read and write the vault as usual.
func (e *Env) embedDB() embed.DB {
	if e.reopen == nil {
		return e.Store
	}
	e.Store.Close()
	return detachedDB{open: e.reopen}
}

// detachedDB opens the store for each transaction: shared for a View,
// exclusive for an Update.
type detachedDB struct {
	open func(readOnly bool, wait time.Duration) (*store.Store, error)
}

func (d detachedDB) View(fn func(tx *store.Tx) error) error {
	s, err := d.open(true, detachWait)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.View(fn)
}

func (d detachedDB) Update(fn func(tx *store.Tx) error) error {
	s, err := d.open(false, detachWait)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Update(fn)
}

func (e *Env) embedState() *EmbedState {
	if e.Embed == nil {
		e.Embed = newEmbedState()
	}
	return e.Embed
}

// readPage reads a page's text by vault path, at most maxSnippetRead
// bytes, through the vault's file layer (a page swapped for a symlink out
// of the vault or a named pipe is refused, as everywhere).
func (e *Env) readPage(p string) ([]byte, error) {
	f, _, err := e.files().Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxSnippetRead))
}

// searchModes is search_wiki with modes: lexical goes to searchWiki
// unchanged; semantic and hybrid embed the query and fuse (package embed),
// answering lexically with a note when they cannot run.
func searchModes(ctx context.Context, e *Env, in *SearchIn) (*SearchOut, error) {
	mode, err := embed.ParseMode(in.Mode)
	if err != nil {
		return nil, err
	}
	c, ok, cerr := embedSettings(ctx, e)
	if mode == embed.Lexical || (mode == embed.Auto && !ok && cerr == nil) {
		out, err := searchWiki(ctx, e, in)
		if out != nil {
			out.Mode = string(embed.Lexical)
			markSignals(out.Hits, embed.SignalLexical)
		}
		return out, err
	}
	o := embed.SearchOptions{K: in.K, Mode: mode, ReadFile: e.readPage, Model: c.Model,
		Lexical: func(k int, snippets bool) ([]searchHit, error) {
			if !snippets {
				// the depth of a fusion: snippets come for the hits shown
				return search.Search(e.Store, in.Query, search.Options{K: k})
			}
			out, err := searchWiki(ctx, e, &SearchIn{Query: in.Query, K: k})
			if err != nil {
				return nil, err
			}
			return out.Hits, nil
		}}
	switch {
	case cerr != nil:
		o.Off = errs.Message(cerr)
	case ok:
		p, err := c.provider(c.QueryTimeout)
		if err != nil {
			o.Off = errs.Message(err)
			break
		}
		st := e.embedState()
		o.Embed = func(ctx context.Context, text string) ([]float32, error) {
			if why, open := st.tripped(e.now()); open {
				return nil, errors.New(why + " (not retried for " + strconv.Itoa(int(breakerPause.Seconds())) + "s)")
			}
			ctx, cancel := context.WithTimeout(ctx, c.QueryTimeout)
			defer cancel()
			vs, err := p.Embed(ctx, []string{text})
			if err == nil && len(vs) != 1 {
				err = &embed.ProviderError{Reason: embed.BadAnswer, Msg: fmt.Sprintf("%d vectors for one query", len(vs))}
			}
			if err == nil {
				// the answer is checked here, so that a bad one trips the
				// breaker like a failed request
				var dim int
				_ = e.Store.View(func(tx *store.Tx) error { _, dim = tx.VecModel(); return nil })
				err = embed.CheckVector(vs[0], dim)
			}
			if err != nil && ctx.Err() == context.DeadlineExceeded {
				err = &embed.ProviderError{Reason: embed.Slow, Msg: fmt.Sprintf("%s did not answer within %s", c.URL, c.QueryTimeout)}
			}
			st.record(e.now(), err)
			if err != nil {
				return nil, err
			}
			return vs[0], nil
		}
	}
	r, err := embed.Search(ctx, e.Store, in.Query, o)
	if err != nil {
		return nil, err
	}
	return &SearchOut{Query: in.Query, Mode: string(r.Mode), Note: r.Note, Hits: r.Hits}, nil
}

func markSignals(hits []searchHit, sig string) {
	for i := range hits {
		if hits[i].Signals == nil {
			hits[i].Signals = []string{sig}
		}
	}
}

// EmbedStatus is the embeddings part of status.
type EmbedStatus struct {
	// Provider is the endpoint ("" when embeddings are off).
	Provider string `json:"provider"`
	Model    string `json:"model,omitempty"`
	// State is off, ok, or why the provider cannot be used: down, slow,
	// refused, bad answer, misconfigured.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	Dim    int    `json:"dim,omitempty"`
	// Embedded counts pages whose vectors are current; Pending pages new or
	// changed since (the next embed run's work; 0 when embeddings are off
	// or misconfigured). Chunks counts the chunks of the embedded pages
	// (and of the changed pages' sections that are unchanged), Vectors the
	// stored vectors.
	Embedded int `json:"embedded"`
	Pending  int `json:"pending"`
	Chunks   int `json:"chunks"`
	Vectors  int `json:"vectors"`
	// StoredModel is set when the stored vectors are of another model than
	// the configured one (the next run re-embeds everything).
	StoredModel string        `json:"stored_model,omitempty"`
	LastRun     *store.VecRun `json:"last_run,omitempty"`
}

// embedStatus fills the embeddings part of status: what the store holds,
// and a live probe of the provider (one short query, bounded by the query
// timeout) that says why it cannot be used.
func embedStatus(ctx context.Context, e *Env, out *StatusOut) {
	st := &EmbedStatus{State: "off"}
	out.Embeddings = st
	var model string
	var counts store.VecStats
	pages := 0
	_ = e.Store.View(func(tx *store.Tx) error {
		model, st.Dim = tx.VecModel()
		counts = tx.VecStats()
		pages = tx.PageCount()
		if r, ok := tx.VecRun(); ok {
			st.LastRun = &r
		}
		return nil
	})
	// counts kept by the store: no page record is read
	st.Vectors, st.Chunks = counts.Vectors, counts.Chunks
	st.Embedded = counts.Pages - counts.Stale
	c, ok, err := embedSettings(ctx, e)
	if err != nil {
		st.State, st.Reason = "misconfigured", errs.Message(err)
		return
	}
	if !ok {
		return // off: nothing is pending
	}
	st.Provider, st.Model = c.URL, c.Model
	if model != "" && model != c.Model {
		st.StoredModel = model
		st.Embedded = 0
	}
	st.Pending = max(0, pages-st.Embedded)
	p, err := c.provider(c.QueryTimeout)
	if err != nil {
		st.State, st.Reason = "misconfigured", errs.Message(err)
		return
	}
	pctx, cancel := context.WithTimeout(ctx, c.QueryTimeout)
	defer cancel()
	vs, err := p.Embed(pctx, []string{"synapse status"})
	if err == nil && (len(vs) != 1 || (st.Dim > 0 && model == c.Model && len(vs[0]) != st.Dim)) {
		got := 0
		if len(vs) == 1 {
			got = len(vs[0])
		}
		err = &embed.ProviderError{Reason: embed.BadAnswer, Msg: fmt.Sprintf("wrong dimension: the provider answers %d, the stored vectors have %d", got, st.Dim)}
	}
	if err == nil {
		err = embed.CheckVector(vs[0], 0) // NaN, infinite, all zero
	}
	if err != nil && pctx.Err() == context.DeadlineExceeded {
		err = &embed.ProviderError{Reason: embed.Slow, Msg: fmt.Sprintf("%s did not answer within %s", c.URL, c.QueryTimeout)}
	}
	if err == nil {
		st.State = "ok"
		return
	}
	st.State, st.Reason = "down", errs.Message(err)
	if pe, ok := embed.Failure(err); ok {
		st.State, st.Reason = string(pe.Reason), pe.Error()
	}
}

// vectorPages keeps the pages' embedding records in step with the
// scanner: a removed page loses its record (its vectors stay until the
// next complete embedding run, so a renamed page finds them again); a
// changed page keeps only the chunks whose text it still holds, marked
// stale until the next run embeds it again, so semantic search never
// ranks a page by text it no longer has.
type vectorPages struct{ index.PageIndexer }

// Unwrap lets the scanner find the search index's rebuild through the
// hook (index.PageRebuilder).
func (v vectorPages) Unwrap() index.PageIndexer { return v.PageIndexer }

func (v vectorPages) RemovePages(tx *store.Tx, docs []uint32) error {
	if v.PageIndexer != nil {
		if err := v.PageIndexer.RemovePages(tx, docs); err != nil {
			return err
		}
	}
	return tx.DeleteVecPages(docs)
}

func (v vectorPages) IndexPages(tx *store.Tx, pages []index.IndexedPage) error {
	if v.PageIndexer != nil {
		if err := v.PageIndexer.IndexPages(tx, pages); err != nil {
			return err
		}
	}
	for _, p := range pages {
		vv, ok, err := tx.VecView(p.Doc)
		if err != nil || !ok || p.Rec == nil {
			continue // no record (or one to be written again by the next run)
		}
		if vv.SHA256 == p.Rec.SHA256 {
			// the text that was embedded (a run that read the file
			// before this scan indexed it)
			if vv.Stale {
				if err := tx.TrimVecPage(p.Doc, nil, false); err != nil {
					return err
				}
			}
			continue
		}
		if p.Parsed == nil {
			continue
		}
		now := map[store.ChunkKey]bool{}
		for _, c := range embed.ChunkPage(p.Parsed.Title, p.Parsed) {
			now[c.Key] = true
		}
		if err := tx.TrimVecPage(p.Doc, func(k store.ChunkKey) bool { return now[k] }, true); err != nil {
			return err
		}
	}
	return nil
}

// Background embedding (serve): after each scan the worker embeds what
// changed, outside every write lock, committing in small transactions.

// StartEmbedding starts the background worker of e; logf receives one line
// per run that did something and per new failure. It returns at once.
func (e *Env) StartEmbedding(logf func(format string, args ...any)) {
	st := e.embedState()
	st.mu.Lock()
	if st.kick != nil {
		st.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	st.kick, st.stop, st.done = make(chan struct{}, 1), cancel, make(chan struct{})
	kick, done := st.kick, st.done
	st.mu.Unlock()
	go func() {
		defer close(done)
		lastErr := ""
		retry := 5 * time.Second
		var timer <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-kick:
			case <-timer:
			}
			timer = nil
			c, ok, err := embedSettings(ctx, e)
			if err == nil && !ok {
				continue
			}
			var rep *embed.Report
			if err == nil {
				rep, err = runEmbedding(ctx, e, c, false, nil)
			}
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				if msg := errs.Message(err); msg != lastErr {
					logf("background embedding: %s", msg)
					lastErr = msg
				}
				timer = time.After(retry)
				retry = min(retry*2, 5*time.Minute)
				continue
			}
			if lastErr != "" || rep.Embedded+rep.Removed+rep.Swept > 0 {
				logf("embedded %d pages (%d chunks sent, %d reused) in %d ms; %d pages current", rep.Embedded, rep.Chunks, rep.Reused, rep.DurationMS, rep.Current+rep.Embedded)
			}
			lastErr, retry = "", 5*time.Second
		}
	}()
	e.KickEmbedding()
}

// KickEmbedding asks the background worker for a run (coalescing with a
// pending request); without a worker it does nothing.
func (e *Env) KickEmbedding() {
	st := e.Embed
	if st == nil {
		return
	}
	st.mu.Lock()
	kick := st.kick
	st.mu.Unlock()
	if kick == nil {
		return
	}
	select {
	case kick <- struct{}{}:
	default:
	}
}

// StopEmbedding stops the background worker and waits for it: a run in
// progress is cut short after its current batch (what it stored stays).
func (e *Env) StopEmbedding() {
	st := e.Embed
	if st == nil {
		return
	}
	st.mu.Lock()
	stop, done := st.stop, st.done
	st.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-done
}

// searchHit is a search result (the type search_wiki returns).
type searchHit = search.Hit
