package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/urfave/cli/v2"
)

// defaultAddr is where `serve --http` listens unless --addr says otherwise.
const defaultAddr = "127.0.0.1:7411"

// shutdownGrace bounds how long in-flight requests may take to finish after
// SIGINT or SIGTERM.
const shutdownGrace = 30 * time.Second

func init() {
	extraCommands = append(extraCommands, &cli.Command{
		Name:      "serve",
		Usage:     "serve MCP (stdio, streamable HTTP) and REST over the vault",
		UsageText: "synapse serve --mcp-stdio | --http [--addr 127.0.0.1:7411] [--write]",
		Description: "--mcp-stdio serves every MCP tool, read and write, on standard input and output.\n" +
			"--http serves MCP at /mcp, the REST routes, /openapi.json and /healthz on one loopback\n" +
			"address. HTTP is read-only unless --write: the write tools are not listed and are refused,\n" +
			"and write routes answer 403. Every route but /healthz needs 'Authorization: Bearer TOKEN';\n" +
			"the token is $SYNAPSE_TOKEN, else .synapse/token (created 0600 on first serve).\n" +
			"Both transports may run at once. Logs go to standard error. SIGINT or SIGTERM stop the\n" +
			"server after in-flight requests finish.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "mcp-stdio", Usage: "serve MCP over standard input and output (all tools)"},
			&cli.BoolFlag{Name: "http", Usage: "serve MCP at /mcp, REST, /openapi.json and /healthz over HTTP"},
			&cli.StringFlag{Name: "addr", Value: defaultAddr, Usage: "HTTP listen address (host:port; port 0 picks a free one)"},
			&cli.BoolFlag{Name: "write", Usage: "allow write tools and write routes over HTTP"},
			&cli.StringSliceFlag{Name: "allow-host", Usage: "extra DNS name accepted in the Host and Origin headers (repeatable)"},
			&cli.BoolFlag{Name: "log-requests", Usage: "log one line per HTTP request on standard error"},
			&cli.StringFlag{Name: "vault", Usage: "vault folder"},
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
	var tok string
	if cfg.http {
		// resolve the token before taking the store, so a bad token file
		// fails fast without touching anything
		if tok, err = loadToken(v, logger); err != nil {
			return err
		}
	}
	env, err := ops.OpenEnv(c.Context, v, ops.OpenOptions{Timeout: 2 * time.Second, Holder: serveHolder(cfg)})
	if err != nil {
		return err
	}
	svc := newService(ops.Table(), env, logger)
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

// service is one running `synapse serve`: the open environment and the
// operations every transport dispatches through call. Transports are thin:
// stdio MCP, HTTP (MCP, REST, OpenAPI); a local socket for CLI verbs
// (SPEC §7, issue 8) is one more transport over call.
type service struct {
	ops []*ops.Op
	env *ops.Env // read-write; the HTTP transport gets a read-only copy unless --write
	log *log.Logger

	// writeMu serializes write operations and scans; reads run
	// concurrently against bbolt snapshots.
	writeMu sync.Mutex
	// lastScan is the most recent scan (guarded by writeMu): a rescan
	// request that arrived before it started shares its report.
	lastScan struct {
		started time.Time
		report  *index.Report
	}
	closeOnce sync.Once
}

func newService(list []*ops.Op, env *ops.Env, logger *log.Logger) *service {
	s := &service{ops: list, env: env, log: logger}
	env.Rescan = s.rescan
	return s
}

// envFor returns the environment a transport dispatches to: read-only
// refuses every write operation in op.Run.
func (s *service) envFor(readOnly bool) *ops.Env {
	e := *s.env
	e.ReadOnly = readOnly
	return &e
}

// close closes the store once in-flight writes are done.
func (s *service) close() {
	s.closeOnce.Do(func() {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		if err := s.env.Close(); err != nil {
			s.log.Printf("close store: %v", err)
		}
	})
}

type requestedAtKey struct{}

// call runs op for a transport: the one dispatch path of MCP and REST. The
// read-only guard, strict decoding and clamping are op.Call's; call adds
// write serialization and turns a panic into an internal error.
func (s *service) call(ctx context.Context, env *ops.Env, op *ops.Op, raw []byte) (out any, err error) {
	if err := checkObject(raw); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Printf("panic in %s: %v\n%s", op.Name, r, debug.Stack())
			out, err = nil, errs.E(errs.Internal, "internal error in %s (logged by the server)", op.Name)
		}
	}()
	if op.Access == ops.Write && !env.ReadOnly {
		// a write that has started runs to completion: neither a client
		// that goes away nor a shutdown signal cuts it short
		ctx = context.WithValue(context.WithoutCancel(ctx), requestedAtKey{}, time.Now())
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
	}
	out, err = op.Call(ctx, env, raw)
	if err != nil && errs.CodeOf(err) == errs.Internal {
		s.log.Printf("%s: %v", op.Name, errDetail(err))
	}
	return out, err
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

// rescan is Env.Rescan in serve. It runs with writeMu held (call holds it
// for write operations); a request that arrived before the last scan began
// is answered by that scan, so bursts of requests coalesce.
func (s *service) rescan(ctx context.Context) (*index.Report, error) {
	if at, ok := ctx.Value(requestedAtKey{}).(time.Time); ok && s.lastScan.report != nil && s.lastScan.started.After(at) {
		return s.lastScan.report, nil
	}
	started := time.Now()
	rep, err := s.env.Index.Scan(ctx, index.ScanOptions{})
	if err == nil {
		s.lastScan.started, s.lastScan.report = started, rep
	}
	return rep, err
}

// reconcile brings the index up to date with the files in the background
// while the transports already answer from the persisted index (SPEC §3).
func (s *service) reconcile(ctx context.Context) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if ctx.Err() != nil {
		return
	}
	rep, err := s.rescan(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		s.log.Printf("start-up scan: %s", errDetail(err))
	case err == nil && rep.NewCount+rep.ChangedCount+rep.DeletedCount > 0:
		s.log.Printf("start-up scan: %d new, %d changed, %d deleted in %d ms", rep.NewCount, rep.ChangedCount, rep.DeletedCount, rep.DurationMS)
	}
}

// run serves the configured transports until ctx is cancelled (SIGINT,
// SIGTERM), the stdio client closes its input, or a transport fails; then
// it shuts everything down, letting in-flight requests finish.
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
	errc := make(chan error, 2)
	var wg sync.WaitGroup
	var hs *httpServer
	if cfg.http {
		hs = s.newHTTPServer(cfg, token)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- hs.serve(ln)
		}()
		mode := "read-only (restart with --write to allow writes)"
		if cfg.write {
			mode = "read-write"
		}
		s.log.Printf("serving http://%s: MCP at /mcp, REST, /openapi.json, /healthz; %s", ln.Addr(), mode)
		if !isLoopbackAddr(ln.Addr()) {
			s.log.Printf("warning: %s is not a loopback address; anyone who can reach it and holds the token can use the vault", ln.Addr())
		}
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
	go s.reconcile(ctx)

	select {
	case <-ctx.Done():
		s.log.Printf("shutting down")
	case err = <-errc:
	}
	cancel()
	if hs != nil {
		sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
		if serr := hs.shutdown(sctx); serr != nil {
			s.log.Printf("http shutdown: %v", serr)
		}
		scancel()
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
