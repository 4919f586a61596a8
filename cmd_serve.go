package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/search"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
	"github.com/urfave/cli/v2"
)

// defaultAddr is where `serve --http` listens unless --addr says otherwise.
const defaultAddr = "127.0.0.1:7411"

// shutdownGrace bounds how long the socket's calls in flight may take to
// finish after SIGINT or SIGTERM (reads are cancelled after sockGrace;
// HTTP has its own bounds, httpLimits.Grace and Stop).
const shutdownGrace = 3 * time.Second

func init() {
	extraCommands = append(extraCommands, &cli.Command{
		Name:      "serve",
		Usage:     "Serve MCP (stdio, streamable HTTP) and REST over the vault",
		UsageText: "synapse serve --mcp-stdio | --http [--addr 127.0.0.1:7411] [--write]",
		Description: "--mcp-stdio serves every MCP tool, read and write, on standard input and output.\n" +
			"--http serves MCP at /mcp, the REST routes, /openapi.json and /healthz on one loopback\n" +
			"address. HTTP is read-only unless --write: the write tools are not listed and are refused,\n" +
			"and write routes answer 403. Every route but /healthz needs 'Authorization: Bearer TOKEN';\n" +
			"the token is $SYNAPSE_TOKEN, else .synapse/token (created 0600 on first serve).\n" +
			"Both transports may run at once; then the end of standard input ends only the stdio\n" +
			"session and HTTP keeps serving. Logs go to standard error, starting with the pid; an HTTP\n" +
			"server also writes it to .synapse/serve.pid (removed when it stops). SIGINT or SIGTERM\n" +
			"(kill $(cat .synapse/serve.pid)) stop the server after in-flight requests finish.\n\n" +
			"The server watches wiki/ and raw/sources/ and indexes what other programs save there. It\n" +
			"answers MCP initialize at once and brings the index up to date in the background. While it\n" +
			"runs, CLI verbs on the same vault are handed to it over .synapse/serve.sock (owner only) and\n" +
			"behave as they do without it; a second serve on the vault forwards its calls to the first,\n" +
			"and takes the vault over when the first stops.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "mcp-stdio", Usage: "serve MCP over standard input and output (all tools)"},
			&cli.BoolFlag{Name: "http", Usage: "serve MCP at /mcp, REST, /openapi.json and /healthz over HTTP"},
			&cli.StringFlag{Name: "addr", Value: defaultAddr, Usage: "HTTP listen address (host:port; port 0 picks a free one)"},
			&cli.BoolFlag{Name: "write", Usage: "allow write tools and write routes over HTTP"},
			&cli.StringSliceFlag{Name: "allow-host", Usage: "extra DNS name accepted in the Host and Origin headers (repeatable)"},
			&cli.BoolFlag{Name: "log-requests", Usage: "log one line per HTTP request on standard error"},
			&cli.StringFlag{Name: "vault", Usage: "vault folder"},
			&cli.BoolFlag{Name: "json", Usage: "report a start-up error as JSON on standard error (the logs stay text)"},
		},
		OnUsageError: usageError,
		Action:       serveAction,
	})
}

// serveConfig is what the serve flags ask for.
type serveConfig struct {
	stdio, http, write bool
	addr               string
	allowHosts         []string
	logRequests        bool
	limits             *httpLimits // nil: defaultLimits (tests shrink them)
}

func serveAction(c *cli.Context) error {
	cfg := serveConfig{
		stdio: c.Bool("mcp-stdio"), http: c.Bool("http"), write: c.Bool("write"),
		addr: c.String("addr"), allowHosts: c.StringSlice("allow-host"), logRequests: c.Bool("log-requests"),
	}
	if c.NArg() > 0 {
		return errs.E(errs.Invalid, "unexpected argument %q (usage: %s)", c.Args().First(), c.Command.UsageText)
	}
	if !cfg.stdio && !cfg.http {
		return errs.E(errs.Invalid, "choose a transport: --mcp-stdio, --http or both (usage: %s)", c.Command.UsageText)
	}
	if !cfg.http {
		for _, f := range []string{"addr", "allow-host", "log-requests"} {
			if c.IsSet(f) {
				return errs.E(errs.Invalid, "--%s needs --http", f)
			}
		}
	}
	if cfg.http {
		if _, _, err := net.SplitHostPort(cfg.addr); err != nil {
			return errs.E(errs.Invalid, "--addr %q: want host:port, e.g. %s", cfg.addr, defaultAddr)
		}
	}
	logger := log.New(c.App.ErrWriter, "synapse: ", 0)
	if cfg.write && !cfg.http {
		logger.Printf("note: --write only concerns --http; stdio always serves the write tools")
	}
	v, err := findVault(globalsOf(c))
	if err != nil {
		return err
	}
	configNote(v, c.App.ErrWriter, "synapse: ")
	var tok string
	if cfg.http {
		// resolve the token before taking the store, so a bad token file
		// fails fast without touching anything
		if tok, err = loadToken(v, logger); err != nil {
			return err
		}
	}
	svc := newServeService(ops.Table(), v, serveHolder(cfg), logger)
	defer svc.close()
	return svc.run(c.Context, cfg, tok, c.App.Reader, c.App.Writer)
}

// serveHolder describes this process in the store's holder file, so a CLI
// verb that finds the store taken names the server.
func serveHolder(cfg serveConfig) string {
	h := "synapse serve"
	if cfg.stdio {
		h += " --mcp-stdio"
	}
	if cfg.http {
		h += " --http --addr " + cfg.addr
		if cfg.write {
			h += " --write"
		}
	}
	return h
}

// service is one running `synapse serve`: the operations every transport
// dispatches through call, and the vault behind them. Transports are thin:
// stdio MCP, HTTP (MCP, REST, OpenAPI) and the local socket for CLI verbs.
//
// The transports start at once; the store is opened in the background
// (opening a big bbolt file read-write takes a while), so MCP initialize
// and tools/list never wait for it (SPEC §3). Calls wait until it is open.
// The service then is either the primary, holding the store (env set),
// watching the files and listening on the socket, or — when another serve
// already holds the vault — a proxy that forwards each call over that
// server's socket. A proxy whose primary goes away takes the store over on
// its next call (promote).
type service struct {
	ops    []*ops.Op
	log    *log.Logger
	vault  *vault.Vault
	holder string // this process in the store's holder file

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

// firstIndexWait bounds how long an MCP or REST call waits for the first
// index of a never-indexed vault before answering unavailable (a CLI verb
// waits as long as it takes, as it would without a server).
var firstIndexWait = 20 * time.Second

// newService wraps an open environment: a primary.
func newService(list []*ops.Op, env *ops.Env, logger *log.Logger) *service {
	s := &service{ops: list, env: env, log: logger, vault: env.Vault,
		ready: make(chan struct{}), tried: make(chan struct{}), indexed: make(chan struct{}), fatal: make(chan error, 1)}
	close(s.ready)
	close(s.tried)
	close(s.indexed)
	return s
}

// newServeService is a service over v whose store run opens in the
// background.
func newServeService(list []*ops.Op, v *vault.Vault, holder string, logger *log.Logger) *service {
	s := &service{ops: list, log: logger, vault: v, holder: holder,
		ready: make(chan struct{}), tried: make(chan struct{}), indexed: make(chan struct{}), fatal: make(chan error, 1)}
	close(s.indexed)
	return s
}

// open opens the vault for this service in the background: as the primary
// when the store is free, as a proxy when a server already holds it and
// answers on its socket. While another process holds the store without a
// socket (a CLI verb, a reindex) calls answer unavailable naming it, and
// open keeps trying; any other failure stops the server.
func (s *service) open(ctx context.Context) {
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
				s.log.Printf("another synapse serve (pid %d: %s) holds this vault; calls are forwarded to it over %s", hello.PID, hello.Holder, sockFile)
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
		case <-time.After(lockPoll):
		}
	}
}

// waitReady waits for the first attempt to open the store (which polls a
// held lock for lockWait); when the store is not open, it answers why.
func (s *service) waitReady(ctx context.Context) error {
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
func (s *service) acquire(ctx context.Context) (sockHello, error) {
	deadline := time.Now().Add(lockWait)
	var why error
	for {
		sc, err := dialServer(s.vault)
		if err == nil {
			sc.close()
			return sc.hello, nil
		}
		if err != errNoServer {
			why = err
		}
		// NoInitialScan: the watcher reconciles in the background, so a
		// fresh big vault does not hold up the first calls (SPEC §3)
		env, err := ops.OpenEnv(ctx, s.vault, ops.OpenOptions{Timeout: lockPoll, Holder: s.holder, NoInitialScan: true})
		if err == nil {
			s.env = env
			return sockHello{}, nil
		}
		if !errors.Is(err, store.ErrLocked) || time.Now().After(deadline) || ctx.Err() != nil {
			return sockHello{}, lockedBecause(err, why)
		}
	}
}

// startPrimary watches the vault and listens on the socket. The watcher
// reconciles the store with the files in the background; calls answer
// from the persisted index meanwhile, except on a vault never indexed
// (indexed). The caller holds s.mu or owns s alone.
func (s *service) startPrimary(ctx context.Context) {
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
		if !scanned {
			s.indexed = make(chan struct{})
			go func(ready <-chan struct{}, indexed chan struct{}) {
				<-ready
				close(indexed)
			}(w.Ready(), s.indexed)
		}
	}
	// embeddings follow the lexical index in the background (issue 16)
	env.StartEmbedding(s.log.Printf)
	ss, err := s.listenSocket(s.vault)
	if err != nil {
		s.log.Printf("CLI verbs cannot reach this server: listen on %s: %v; they fail while it runs", sockFile, err)
		return
	}
	s.sock = ss
}

// onScan logs what the watcher's scans found worth saying.
func (s *service) onScan(kind string, rep *index.Report, err error) {
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
func (s *service) onWatchError(dir string, err error) {
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
func (s *service) lookup(name string) *ops.Op {
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
func (s *service) envFor(readOnly bool) *ops.Env {
	return &ops.Env{Vault: s.vault, ReadOnly: readOnly}
}

// close stops the socket and the watcher and closes the store once
// in-flight writes are done.
func (s *service) close() {
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

// call runs op for a transport: the one dispatch path of MCP, REST and the
// socket. The read-only guard, strict decoding and clamping are op.Call's;
// call adds write serialization, waits for the first index of a new vault,
// forwards when this service is a proxy and turns a panic into an internal
// error.
func (s *service) call(ctx context.Context, env *ops.Env, op *ops.Op, raw []byte) (out any, err error) {
	if err := checkObject(raw); err != nil {
		return nil, err
	}
	if err := op.Allowed(env); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Printf("panic in %s: %v\n%s", op.Name, r, debug.Stack())
			out, err = nil, errs.E(errs.Internal, "internal error in %s (logged by the server)", op.Name)
		}
	}()
	if err := s.waitReady(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	primary, indexed := s.env, s.indexed
	s.mu.RUnlock()
	if primary == nil {
		return s.forward(ctx, env, op, raw)
	}
	work := *primary
	work.ReadOnly = env.ReadOnly
	// status answers every client (MCP, REST and `synapse status`) from
	// whatever the store holds, with the progress of the index being
	// built; the other CLI verbs wait, as they would alone, drawing the
	// progress on a terminal
	always := op.Always && op.Access == ops.Read
	if !op.Scans && !always {
		if err := s.waitIndexed(ctx, indexed); err != nil {
			return nil, err
		}
		// nothing answers from an index a reindex has emptied (a
		// concurrent write checks what it writes against the store)
		if !op.Concurrent {
			if err := s.waitRebuilt(ctx); err != nil {
				return nil, err
			}
			defer s.rebuild.RUnlock()
		}
	} else if op.Access == ops.Write && !env.ReadOnly && !coalescing(op) {
		s.rebuild.Lock()
		defer s.rebuild.Unlock()
	}
	// a concurrent write (embed) serializes itself, holds the store's
	// write lock only for short transactions and may be cut short (it is
	// resumable): it runs beside other writes, with the caller's context
	if op.WritesRaw(raw) && !env.ReadOnly && !op.Concurrent {
		if !coalescing(op) {
			s.writeMu.Lock()
			defer s.writeMu.Unlock()
		}
		// a write whose caller went away (a cancelled MCP request) while
		// it waited does not start; one that has started runs to
		// completion: neither the caller nor a shutdown signal cuts it
		// short (steps that can stop without harm still see the caller's
		// cancellation through ops.Detach: the research command)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ctx = ops.Detach(ctx)
	}
	out, err = op.Call(ctx, &work, raw)
	if err != nil && errs.CodeOf(err) == errs.Internal {
		s.log.Printf("%s: %v", op.Name, errDetail(err))
	}
	return out, err
}

// waitRebuilt read-locks rebuild, waiting for a reindex in progress for
// up to lockWait (as a verb alone waits for the lock a reindex holds);
// then it answers unavailable.
func (s *service) waitRebuilt(ctx context.Context) error {
	deadline := time.Now().Add(lockWait)
	for !s.rebuild.TryRLock() {
		if time.Now().After(deadline) {
			return errs.E(errs.Unavailable, "the index is being rebuilt (reindex); try again when it is done")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// coalescing tells an operation that only asks the watcher for an
// incremental scan (trigger_source_rescan: a scan, additive, idempotent).
// It runs beside writes (the indexer serializes scans) so that concurrent
// requests share one scan instead of queueing behind each other and every
// write. A full reindex, which drops the index first, is no such scan: it
// holds writes off until it is done.
func coalescing(op *ops.Op) bool { return op.Scans && op.Additive && op.Idempotent }

// waitIndexed waits until the store holds a completed scan. Only a vault
// never indexed before waits: otherwise calls answer from the persisted
// index while the start-up reconciliation runs (SPEC §3).
func (s *service) waitIndexed(ctx context.Context, indexed <-chan struct{}) error {
	select {
	case <-indexed:
		return nil
	default:
	}
	var timeout <-chan time.Time
	if patient, _ := ctx.Value(patientKey{}).(bool); !patient {
		t := time.NewTimer(firstIndexWait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-indexed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timeout:
		p, _ := s.progress.get()
		where := ""
		if p.Total > 0 {
			where = fmt.Sprintf(" (%s: %d of %d %s)", p.Phase, p.Done, p.Total, index.PhaseUnit(p.Phase))
		}
		return errs.E(errs.Unavailable, "this vault is being indexed for the first time%s; try again shortly", where)
	}
}

// forward hands a call to the server that holds the vault. When none
// answers any more, this service takes the store over (promote) and runs
// the call itself.
func (s *service) forward(ctx context.Context, env *ops.Env, op *ops.Op, raw []byte) (any, error) {
	for attempt := 0; ; attempt++ {
		sc, err := dialServer(s.vault)
		if err == nil {
			// this process's environment, as if it ran the call itself
			r, err := sc.call(ctx, sockRequest{Op: op.Name, Input: raw, Environ: os.Environ()}, nil)
			sc.close()
			switch {
			case err == nil:
				return json.RawMessage(r.Result), nil
			case errors.Is(err, errServerGone) && op.Access == ops.Write:
				return nil, errs.Wrap(errs.Unavailable, err, "the server holding the vault stopped while running %s; it may or may not have taken effect", op.Name)
			case !errors.Is(err, errServerRetry) && !errors.Is(err, errServerGone):
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
			return nil, errs.E(errs.Unavailable, "the server holding this vault does not answer on %s", sockFile)
		}
	}
}

// promote makes a proxy the primary when the store has become free (its
// server stopped), or leaves it a proxy of whichever server holds it now.
func (s *service) promote() error {
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
	p   sockProgress
	seq uint64
}

func (sp *scanProgress) set(phase string, done, total int) {
	sp.mu.Lock()
	sp.p = sockProgress{Phase: phase, Done: done, Total: total}
	sp.seq++
	sp.mu.Unlock()
}

func (sp *scanProgress) get() (sockProgress, uint64) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.p, sp.seq
}

// errDetail is the full error chain, for the server log only.
func errDetail(err error) string {
	var e *errs.Error
	if errors.As(err, &e) && e.Err != nil && !strings.Contains(e.Error(), e.Err.Error()) {
		return e.Error() + ": " + e.Err.Error()
	}
	return err.Error()
}

// checkObject refuses parameters that are not one JSON object, before the
// strict decoder turns them into a less readable message.
func checkObject(raw []byte) error {
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" || strings.HasPrefix(t, "{") {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return errs.E(errs.Invalid, "parameters are not valid JSON")
	}
	return errs.E(errs.Invalid, "parameters must be a JSON object, not %s", jsonKindOf(v))
}

func jsonKindOf(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "this value"
}

// run serves the configured transports until ctx is cancelled (SIGINT,
// SIGTERM), a transport fails, or the stdio client closes its input when
// stdio is the only transport (with HTTP beside it, that ends only the
// stdio session); then it shuts everything down, letting in-flight
// requests finish. An HTTP server writes its pid to .synapse/serve.pid
// while it runs.
func (s *service) run(ctx context.Context, cfg serveConfig, token string, stdin io.Reader, stdout io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		ln  net.Listener
		err error
	)
	if cfg.http {
		if ln, err = listen(cfg.addr); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.runCtx = ctx
	if s.env != nil {
		s.startPrimary(ctx)
	} else {
		s.bg.Add(1)
		go s.open(ctx)
	}
	s.mu.Unlock()
	errc := make(chan error, 2)
	var wg sync.WaitGroup
	var hs *httpServer
	if cfg.http {
		hs = s.newHTTPServer(cfg, token)
		hs.listen(ln)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- hs.serve()
		}()
		mode := "read-only (restart with --write to allow writes)"
		if cfg.write {
			mode = "read-write"
		}
		s.log.Printf("serving http://%s: MCP at /mcp, REST, /openapi.json, /healthz; %s", ln.Addr(), mode)
		if !isLoopbackAddr(ln.Addr()) {
			s.log.Printf("warning: %s is not a loopback address; anyone who can reach it and holds the token can use the vault", ln.Addr())
		}
		if err := writePIDFile(s.vault); err != nil {
			s.log.Printf("pid %d (could not write %s: %v); stop it with kill %d", os.Getpid(), pidFile, err, os.Getpid())
		} else {
			s.log.Printf("pid %d, in %s; stop it with kill $(cat %s) (requests in flight finish)", os.Getpid(), pidFile, pidFile)
			defer removePIDFile(s.vault)
		}
	} else {
		s.log.Printf("pid %d", os.Getpid())
	}
	if cfg.stdio {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.serveStdio(ctx, stdin, stdout)
			if err == nil {
				err = errStdioClosed
			}
			errc <- err
		}()
		s.log.Printf("serving MCP on stdio (all tools)")
	}

	for stopping := false; !stopping; {
		stopping = true
		select {
		case <-ctx.Done():
			s.log.Printf("shutting down")
		case err = <-errc:
			if errors.Is(err, errStdioClosed) && cfg.http {
				// the stdio client is gone; the HTTP clients are not
				s.log.Printf("the stdio client closed its input: MCP on stdio ended; HTTP keeps serving until SIGINT or SIGTERM")
				err, stopping = nil, false
			}
		case err = <-s.fatal:
		}
	}
	cancel()
	if hs != nil {
		if serr := hs.shutdown(); serr != nil {
			s.log.Printf("http shutdown: %v", serr)
		}
	}
	wg.Wait()
	s.close()
	if errors.Is(err, errStdioClosed) || errors.Is(err, http.ErrServerClosed) || errors.Is(err, context.Canceled) {
		err = nil
	}
	s.log.Printf("stopped")
	return err
}

var errStdioClosed = errors.New("stdio client closed its input")

// pidFile holds the pid of the HTTP server of the vault (vault-relative),
// for `kill $(cat .synapse/serve.pid)`; it is removed when that server
// stops. With two HTTP servers on one vault it names the later one.
const pidFile = vault.StateDir + "/serve.pid"

// writePIDFile writes this process's pid to pidFile, atomically (a temp
// file renamed over it, so a symlink there is replaced, never followed).
func writePIDFile(v *vault.Vault) error {
	f, err := os.CreateTemp(v.Abs(vault.StateDir), ".serve.pid-*")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%d\n", os.Getpid())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), v.Abs(pidFile))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// removePIDFile removes pidFile if it still names this process.
func removePIDFile(v *vault.Vault) {
	path := v.Abs(pidFile)
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() || st.Size() > 32 {
		return
	}
	if data, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(data)) == strconv.Itoa(os.Getpid()) {
		os.Remove(path)
	}
}

func listen(addr string) (net.Listener, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, errs.E(errs.Invalid, "--addr %q: want host:port, e.g. %s", addr, defaultAddr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, errs.Wrap(errs.Unavailable, err, "listen on %s: %v", addr, err)
	}
	return ln, nil
}

func isLoopbackAddr(a net.Addr) bool {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	return false
}

// slogTo is a text logger for the MCP HTTP transport, on stderr.
func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
