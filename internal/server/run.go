package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/vault"
)

// run serves the configured transports until ctx is cancelled (SIGINT,
// SIGTERM), a transport fails, or the stdio client closes its input when
// stdio is the only transport (with HTTP beside it, that ends only the
// stdio session); then it shuts everything down, letting in-flight
// requests finish. An HTTP server writes its pid to .synapse/serve.pid
// while it runs.
func (s *Service) run(ctx context.Context, cfg Config, token string, stdin io.Reader, stdout io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		ln  net.Listener
		err error
	)
	if cfg.HTTP {
		if ln, err = listen(cfg.Addr); err != nil {
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
	if cfg.HTTP {
		hs = s.newHTTPServer(cfg, token)
		hs.listen(ln)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- hs.serve()
		}()
		mode := "read-only (restart with --write to allow writes)"
		if cfg.Write {
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
	if cfg.Stdio {
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
			if errors.Is(err, errStdioClosed) && cfg.HTTP {
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
		return nil, errs.E(errs.Invalid, "--addr %q: want host:port, e.g. %s", addr, DefaultAddr)
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
