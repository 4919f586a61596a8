// Package server is `synapse serve`: one process that owns a vault's store
// and serves the operation table (package ops) over every transport. A
// Service opens the store (or, when another serve holds it, forwards to
// that one), watches the vault, and dispatches every call through one path
// (call): MCP over stdio and streamable HTTP, the REST routes and their
// OpenAPI document, and the local socket that CLI verbs hand their
// operations to (its protocol and client are package sock). HTTP sits
// behind a bearer token, a Host and Origin check and per-client limits.
//
// The server knows nothing of the CLI: main builds a Config from its flags
// (and its build facts) and calls New and Run.
package server

import (
	"context"
	"io"
	"log"
	"net/http"
	"sort"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/synapse-wiki/synapse/ops"
	"github.com/synapse-wiki/synapse/vault"
)

// Run serves the transports of the service's Config until ctx is
// cancelled (SIGINT, SIGTERM), a transport fails, or the stdio client
// closes its input when stdio is the only transport; then it shuts
// everything down, letting in-flight requests finish, and closes the
// store. token is the bearer token HTTP requires (LoadToken).
func (s *Service) Run(ctx context.Context, token string, stdin io.Reader, stdout io.Writer) error {
	return s.run(ctx, s.cfg, token, stdin, stdout)
}

// Call runs op as a transport does: readOnly refuses writes, as HTTP
// without --write does.
func (s *Service) Call(ctx context.Context, readOnly bool, op *ops.Op, raw []byte) (any, error) {
	return s.call(ctx, s.envFor(readOnly), op, raw)
}

// Close stops the socket and the watcher and closes the store once
// in-flight writes are done (Run does it when it returns).
func (s *Service) Close() { s.close() }

// Ready is closed once the store is open here or a server that holds it
// answers.
func (s *Service) Ready() <-chan struct{} { return s.ready }

// Primary tells a service that holds the store from a proxy of another
// serve.
func (s *Service) Primary() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.env != nil
}

// Listening tells whether CLI verbs can reach this service over its
// socket.
func (s *Service) Listening() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sock != nil
}

// Reconciled is closed once the watcher's start-up scan has brought the
// index up to date with the files (never, while no watcher runs).
func (s *Service) Reconciled() <-chan struct{} {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.watcher == nil {
		return nil
	}
	return s.watcher.Ready()
}

// MCPServer is the MCP server of this service (for an in-process client):
// readOnly lists and serves only the read tools.
func (s *Service) MCPServer(readOnly bool) *mcpserver.MCPServer { return s.newMCPServer(readOnly) }

// Handler is the whole HTTP stack of `serve --http` with cfg's guards
// (MCP, REST, /openapi.json, /healthz behind the token), for a server the
// caller runs (tests use httptest); shutdown ends its MCP sessions and
// cuts off slow clients.
func (s *Service) Handler(cfg Config, token string) (h http.Handler, shutdown func() error) {
	hs := s.newHTTPServer(cfg, token)
	return hs.srv.Handler, hs.shutdown
}

// MCPTool is an operation described as an MCP tool, as tools/list shows
// it.
func MCPTool(op *ops.Op) mcp.Tool { return mcpTool(op) }

// RESTRoute is one REST route as the surface lists it.
type RESTRoute struct {
	Op     *ops.Op
	Method string
	Path   string
	// Query and Body are the parameters read from the query string (by
	// their query names) and from a JSON body, sorted; path parameters
	// are in neither.
	Query, Body []string
}

// RESTRoutes lists the REST routes of the operations.
func RESTRoutes(list []*ops.Op) []RESTRoute {
	var out []RESTRoute
	for _, r := range restRoutes(list) {
		inPath := map[string]bool{}
		for _, s := range r.segs {
			if isParam(s) {
				inPath[s[1:len(s)-1]] = true
			}
		}
		rr := RESTRoute{Op: r.op, Method: r.method, Path: r.route.Path}
		for name, f := range r.fields {
			switch {
			case inPath[name]:
			case r.body[name]:
				rr.Body = append(rr.Body, name)
			default:
				rr.Query = append(rr.Query, f.Query)
			}
		}
		sort.Strings(rr.Query)
		sort.Strings(rr.Body)
		out = append(out, rr)
	}
	return out
}

// OpenAPIJSON is the OpenAPI 3.1 document of the REST routes, as
// /openapi.json serves it: indented, with a final newline.
func OpenAPIJSON(list []*ops.Op, version string) ([]byte, error) { return openAPIJSON(list, version) }

// LoadToken returns the bearer token HTTP needs: $SYNAPSE_TOKEN, else the
// vault's .synapse/token, created on first use (see loadToken).
func LoadToken(v *vault.Vault, logger *log.Logger) (string, error) { return loadToken(v, logger) }
