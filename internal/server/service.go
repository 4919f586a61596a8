package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/monitor"
	"github.com/synapse-wiki/synapse/internal/server/sock"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

// DefaultAddr is where `serve --http` listens unless --addr says otherwise.
const DefaultAddr = "127.0.0.1:7411"

// shutdownGrace bounds how long the socket's calls in flight may take to
// finish after SIGINT or SIGTERM (reads are cancelled after sockGrace;
// HTTP has its own bounds, Limits.Grace and Stop).
const shutdownGrace = 3 * time.Second

// Config is what `synapse serve` asks for, and the build facts main
// knows.
type Config struct {
	Stdio, HTTP, Write bool
	Addr               string
	AllowHosts         []string
	LogRequests        bool
	Limits             *Limits // nil: defaultLimits (tests shrink them)
	// Version is this build's version, which the server reports (MCP
	// initialize, /healthz, /openapi.json, the socket's hello).
	Version string
	// Holder describes this process in the store's holder file; ""
	// derives it from the transports.
	Holder string
	// FirstIndexWait bounds how long an MCP or REST call waits for the
	// first index of a never-indexed vault; 0 is 20 seconds.
	FirstIndexWait time.Duration
}

// holder describes this process in the store's holder file, so a CLI
// verb that finds the store taken names the server.
func (cfg Config) holder() string {
	if cfg.Holder != "" {
		return cfg.Holder
	}
	h := "synapse serve"
	if cfg.Stdio {
		h += " --mcp-stdio"
	}
	if cfg.HTTP {
		h += " --http --addr " + cfg.Addr
		if cfg.Write {
			h += " --write"
		}
	}
	return h
}

// Service is one running `synapse serve`: the operations every transport
// dispatches through call, and the vault behind them. Transports are thin:
// stdio MCP, HTTP (MCP, REST, OpenAPI) and the local socket for CLI verbs.
//
// The transports start at once; the store is opened in the background
// (opening a big bbolt file read-write takes a while), so MCP initialize
// and tools/list never wait for it. Calls wait until it is open.
// The service then is either the primary, holding the store (env set),
// watching the files and listening on the socket, or — when another serve
// already holds the vault — a proxy that forwards each call over that
// server's socket. A proxy whose primary goes away takes the store over on
// its next call (promote).
type Service struct {
	ops    []*ops.Op
	log    *log.Logger
	vault  *vault.Vault
	cfg    Config
	holder string // this process in the store's holder file
	// version is this build's (Config.Version).
	version string
	// firstIndexWait bounds how long an MCP or REST call waits for the
	// first index of a never-indexed vault before answering unavailable
	// (a CLI verb waits as long as it takes, as it would without a
	// server).
	firstIndexWait time.Duration

	// mu guards the fields opening and promotion set: env, watcher, sock,
	// indexed, closed.
	mu      sync.RWMutex
	env     *ops.Env // nil in a proxy; the transports get copies (envFor, call)
	watcher *index.Watcher
	sock    *sockServer
	closed  bool
	// ready is closed once the store is open here or a server holding it
	// answers; tried once the first attempt is over. Until ready, openErr
	// says why not (errMu).
	ready   chan struct{}
	tried   chan struct{}
	errMu   sync.Mutex
	openErr error
	// fatal receives an error that stops the server (a store that cannot
	// be opened for another reason than its lock).
	fatal chan error
	bg    sync.WaitGroup // the opening goroutine
	// indexed is closed once the store holds a completed scan: calls wait
	// for it on a never-indexed vault (see waitIndexed).
	indexed  chan struct{}
	progress scanProgress // of the scans this process runs
	scans    atomic.Int64 // scans the watcher ran
	// unwatched counts folders the watcher could not watch
	unwatched atomic.Int64
	runCtx    context.Context

	// writeMu serializes write operations; reads run concurrently against
	// bbolt snapshots, and scans are serialized by the indexer.
	writeMu sync.Mutex
	// rebuild is held by a reindex, read-held by every other call but
	// rescans: no call sees the index half rebuilt.
	rebuild   sync.RWMutex
	closeOnce sync.Once
}

// defaultFirstIndexWait is firstIndexWait unless Config says otherwise.
const defaultFirstIndexWait = 20 * time.Second

// New is a service over v whose store Run opens in the background.
func New(list []*ops.Op, v *vault.Vault, cfg Config, logger *log.Logger) *Service {
	s := newService(list, v, cfg, logger)
	close(s.indexed)
	return s
}

// Open wraps an environment whose store is open: a primary.
func Open(list []*ops.Op, env *ops.Env, cfg Config, logger *log.Logger) *Service {
	s := newService(list, env.Vault, cfg, logger)
	s.env = env
	close(s.ready)
	close(s.tried)
	close(s.indexed)
	return s
}

func newService(list []*ops.Op, v *vault.Vault, cfg Config, logger *log.Logger) *Service {
	s := &Service{ops: list, log: logger, vault: v, cfg: cfg, holder: cfg.holder(), version: cfg.Version,
		firstIndexWait: cfg.FirstIndexWait,
		ready:          make(chan struct{}), tried: make(chan struct{}), indexed: make(chan struct{}), fatal: make(chan error, 1)}
	if s.firstIndexWait <= 0 {
		s.firstIndexWait = defaultFirstIndexWait
	}
	return s
}

// open opens the vault for this service in the background: as the primary
// when the store is free, as a proxy when a server already holds it and
// answers on its socket. While another process holds the store without a
// socket (a CLI verb, a reindex) calls answer unavailable naming it, and
// open keeps trying; any other failure stops the server.
func (s *Service) open(ctx context.Context) {
	defer s.bg.Done()
	var once sync.Once
	defer once.Do(func() { close(s.tried) })
	waiting := false
	for {
		s.mu.Lock()
		if s.closed || ctx.Err() != nil {
			s.mu.Unlock()
			return
		}
		hello, err := s.acquire(ctx)
		if err == nil {
			if s.env != nil {
				s.startPrimary(ctx)
			} else {
				s.log.Printf("another synapse serve (pid %d: %s) holds this vault; calls are forwarded to it over %s", hello.PID, hello.Holder, sock.File)
			}
			close(s.ready)
			once.Do(func() { close(s.tried) })
			s.mu.Unlock()
			if waiting {
				s.log.Printf("the store is free now")
			}
			return
		}
		s.mu.Unlock()
		s.errMu.Lock()
		s.openErr = err
		s.errMu.Unlock()
		once.Do(func() { close(s.tried) })
		if !errors.Is(err, store.ErrLocked) {
			if ctx.Err() == nil {
				s.fatal <- err
			}
			return
		}
		if !waiting {
			s.log.Printf("%s; calls answer unavailable until it is free", errs.Message(err))
			waiting = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(sock.LockPoll):
		}
	}
}

// waitReady waits for the first attempt to open the store (which polls a
// held lock for sock.LockWait); when the store is not open, it answers why.
func (s *Service) waitReady(ctx context.Context) error {
	select {
	case <-s.ready:
		return nil
	case <-s.tried:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-s.ready:
		return nil
	default:
	}
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if s.openErr != nil {
		return s.openErr
	}
	return errs.E(errs.Unavailable, "the vault's store is still being opened; try again shortly")
}

// acquire opens the store (s.env set) or finds a server that holds it (a
// proxy: s.env stays nil; its hello is returned). The caller holds s.mu.
func (s *Service) acquire(ctx context.Context) (sock.Hello, error) {
	deadline := time.Now().Add(sock.LockWait)
	var why error
	for {
		sc, err := sock.Dial(s.vault)
		if err == nil {
			sc.Close()
			return sc.Hello(), nil
		}
		if err != sock.ErrNoServer {
			why = err
		}
		// NoInitialScan: the watcher reconciles in the background, so a
		// fresh big vault does not hold up the first calls
		env, err := ops.OpenEnv(ctx, s.vault, ops.OpenOptions{Timeout: sock.LockPoll, Holder: s.holder, NoInitialScan: true})
		if err == nil {
			s.env = env
			return sock.Hello{}, nil
		}
		if !errors.Is(err, store.ErrLocked) || time.Now().After(deadline) || ctx.Err() != nil {
			return sock.Hello{}, sock.LockedBecause(err, why)
		}
	}
}

// startPrimary watches the vault and listens on the socket. The watcher
// reconciles the store with the files in the background; calls answer
// from the persisted index meanwhile, except on a vault never indexed
// (indexed). The caller holds s.mu or owns s alone.
func (s *Service) startPrimary(ctx context.Context) {
	env := s.env
	var scanned, rebuild bool
	_ = env.Store.View(func(tx *store.Tx) error {
		_, scanned = tx.LastScan()
		rebuild = scanned && search.NeedsRebuild(tx)
		return nil
	})
	env.Index.Progress = s.progress.set
	env.Index.Notify = func(msg string) { s.log.Printf("%s", msg) }
	// the watcher outlives ctx (cancelled at shutdown) until close: a
	// rescan still in flight on the socket gets its answer
	w, err := env.Index.Watch(context.WithoutCancel(ctx), index.WatchOptions{Reconcile: true, OnScan: s.onScan, OnWatchError: s.onWatchError})
	if err != nil {
		s.log.Printf("cannot watch the vault (%v); edits made by other programs are picked up by trigger_source_rescan", err)
		if !scanned || rebuild {
			if _, err := env.Index.Scan(ctx, index.ScanOptions{}); err != nil {
				s.log.Printf("start-up scan: %s", errDetail(err))
			}
		}
	} else {
		s.watcher = w
		env.Rescan = w.Rescan
		// the vault's file monitor, if one runs for the CLI, is not
		// needed while this server watches: verbs are handed to it
		go monitor.Quit(context.Background(), s.vault.Root, monitor.ClientOptions{CheckPeer: sock.CheckPeer, Addr: sock.Addr})
		if !scanned {
			s.indexed = make(chan struct{})
			go func(ready <-chan struct{}, indexed chan struct{}) {
				<-ready
				close(indexed)
			}(w.Ready(), s.indexed)
		}
	}
	// embeddings follow the lexical index in the background
	env.StartEmbedding(s.log.Printf)
	ss, err := s.listenSocket(s.vault)
	if err != nil {
		s.log.Printf("CLI verbs cannot reach this server: listen on %s: %v; they fail while it runs", sock.File, err)
		return
	}
	s.sock = ss
}

// onScan logs what the watcher's scans found worth saying.
func (s *Service) onScan(kind string, rep *index.Report, err error) {
	s.scans.Add(1)
	if err == nil {
		s.mu.RLock()
		if s.env != nil {
			s.env.KickEmbedding()
		}
		s.mu.RUnlock()
	}
	switch {
	case err != nil && !errors.Is(err, context.Canceled):
		s.log.Printf("%s scan: %s", kind, errDetail(err))
	case err == nil && rep.RefusedCount > 0:
		for i, r := range rep.Refused {
			if i == 10 {
				s.log.Printf("%s scan: %d more files not read (`synapse status` lists them)", kind, rep.RefusedCount-i)
				break
			}
			s.log.Printf("%s scan: not read: %s", kind, r.Message)
		}
	}
	switch {
	case err == nil && kind == "reconcile":
		watching := "watching for changes"
		if n := s.unwatched.Load(); n > 0 {
			watching = fmt.Sprintf("%d folders are not watched", n)
		}
		reparsed := ""
		if rep.Reparsed > 0 {
			reparsed = fmt.Sprintf(", %d re-read after an upgrade", rep.Reparsed)
		}
		s.log.Printf("start-up scan: %d new, %d changed, %d deleted, %d unchanged%s in %d ms; %s",
			rep.NewCount, rep.ChangedCount, rep.DeletedCount, rep.Unchanged, reparsed, rep.DurationMS, watching)
	}
}

// onWatchError logs the first folder that cannot be watched, and how
// many more follow at the next start-up scan report.
func (s *Service) onWatchError(dir string, err error) {
	if s.unwatched.Add(1) == 1 {
		hint := ""
		if errors.Is(err, syscall.ENOSPC) {
			hint = " (the inotify watch limit is reached: raise fs.inotify.max_user_watches)"
		}
		rel, rerr := s.vault.Rel(dir)
		if rerr != nil {
			rel = dir
		}
		s.log.Printf("cannot watch %s: %v%s; edits in folders that are not watched are seen by trigger_source_rescan only", rel, err, hint)
	}
}

// lookup finds an operation of this service by name.
func (s *Service) lookup(name string) *ops.Op {
	for _, op := range s.ops {
		if op.Name == name {
			return op
		}
	}
	return nil
}

// envFor returns the environment a transport dispatches with: only its
// access matters (read-only refuses every write operation); call runs the
// operation against the current store.
func (s *Service) envFor(readOnly bool) *ops.Env {
	return &ops.Env{Vault: s.vault, ReadOnly: readOnly}
}

// close stops the socket and the watcher and closes the store once
// in-flight writes are done.
func (s *Service) close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		sock, w, env := s.sock, s.watcher, s.env
		s.mu.Unlock()
		s.bg.Wait()
		if sock != nil {
			ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
			sock.shutdown(ctx)
			cancel()
		}
		if w != nil {
			if err := w.Close(); err != nil {
				s.log.Printf("close watcher: %v", err)
			}
		}
		if env != nil {
			env.StopEmbedding()
		}
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		if err := env.Close(); err != nil {
			s.log.Printf("close store: %v", err)
		}
	})
}

// embedKeyVar names the variable holding the embeddings API key, as the
// configuration in effect for v gives it ("" when none does).
func embedKeyVar(v *vault.Vault) string {
	if cfg, err := v.LoadConfig(); err == nil {
		return cfg.Embeddings.APIKeyEnv
	}
	return ""
}

// forward hands a call to the server that holds the vault. When none
// answers any more, this service takes the store over (promote) and runs
// the call itself.
func (s *Service) forward(ctx context.Context, env *ops.Env, op *ops.Op, raw []byte) (any, error) {
	for attempt := 0; ; attempt++ {
		sc, err := sock.Dial(s.vault)
		if err == nil {
			// this process's environment, as if it ran the call itself
			r, err := sc.Call(ctx, sock.NewRequest(op, raw, embedKeyVar(s.vault)), nil)
			sc.Close()
			switch {
			case err == nil:
				return json.RawMessage(r.Result), nil
			case errors.Is(err, sock.ErrGone) && op.Access == ops.Write:
				return nil, errs.Wrap(errs.Unavailable, err, "the server holding the vault stopped while running %s; it may or may not have taken effect", op.Name)
			case !errors.Is(err, sock.ErrRetry) && !errors.Is(err, sock.ErrGone):
				return nil, err
			}
		}
		if attempt > 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := s.promote(); err != nil {
			return nil, err
		}
		s.mu.RLock()
		primary := s.env
		s.mu.RUnlock()
		if primary != nil {
			return s.call(ctx, env, op, raw)
		}
		if attempt >= 3 {
			return nil, errs.E(errs.Unavailable, "the server holding this vault does not answer on %s", sock.File)
		}
	}
}

// promote makes a proxy the primary when the store has become free (its
// server stopped), or leaves it a proxy of whichever server holds it now.
func (s *Service) promote() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.env != nil {
		return nil
	}
	if s.closed {
		return errs.E(errs.Unavailable, "the server is stopping")
	}
	ctx := s.runCtx
	if ctx == nil {
		ctx = context.Background()
	}
	if _, err := s.acquire(ctx); err != nil {
		return err
	}
	if s.env != nil {
		s.log.Printf("the server that held the vault has stopped; this one holds it now")
		s.startPrimary(ctx)
	}
	return nil
}

// scanProgress keeps the latest progress of this process's scans, for the
// socket's progress lines and the first-index message.
type scanProgress struct {
	mu  sync.Mutex
	p   sock.Progress
	seq uint64
}

func (sp *scanProgress) set(phase string, done, total int) {
	sp.mu.Lock()
	sp.p = sock.Progress{Phase: phase, Done: done, Total: total}
	sp.seq++
	sp.mu.Unlock()
}

func (sp *scanProgress) get() (sock.Progress, uint64) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.p, sp.seq
}
