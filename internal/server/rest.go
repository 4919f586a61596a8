package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/ops"
)

// HTTP limits (the timeouts and connection caps are Limits').
const (
	maxBodyBytes   = 4 << 20 // write_page content is ≤ 1 MiB; JSON escaping may grow it
	maxHeaderBytes = 64 << 10
	writeTimeout   = 10 * time.Minute // bounds one response (a rescan of a big vault included)
)

// httpServer is the one HTTP server of `serve --http`: MCP streamable HTTP
// at /mcp, the REST routes, /openapi.json and /healthz, behind the Host and
// Origin check and the bearer token.
type httpServer struct {
	srv *http.Server
	mcp *mcpHTTP
	lim Limits
	log interface{ Printf(string, ...any) }
	// conns is the listener (set by serve): per-client caps, and the
	// connections a shutdown cuts off.
	conns *connLimiter
	// base is every request's context: cancelled when a shutdown has
	// waited long enough for the reads in flight.
	base       context.Context
	cancelBase context.CancelFunc
	active     atomic.Int64 // handlers running
}

func (s *Service) newHTTPServer(cfg Config, token string) *httpServer {
	hs := &httpServer{lim: defaultLimits, log: s.log}
	if cfg.Limits != nil {
		hs.lim = *cfg.Limits
	}
	hs.base, hs.cancelBase = context.WithCancel(context.Background())
	hs.srv = &http.Server{
		ReadHeaderTimeout: hs.lim.ReadHeader,
		IdleTimeout:       hs.lim.Idle,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          s.log,
		ConnState:         trackConn,
		ConnContext:       connContext,
		BaseContext:       func(net.Listener) context.Context { return hs.base },
	}
	hs.mcp = s.newMCPHTTP(!cfg.Write)
	hs.srv.Handler = hs.guard(s.httpHandler(cfg, token, hs.mcp))
	return hs
}

// listen puts the per-client connection caps around ln. It runs before
// serve starts in a goroutine of its own, so that a shutdown (or a test)
// running beside serve sees the caps (a data race otherwise).
func (hs *httpServer) listen(ln net.Listener) { hs.conns = newConnLimiter(ln, hs.lim) }

// serve serves on the listener listen wrapped.
func (hs *httpServer) serve() error { return hs.srv.Serve(hs.conns) }

// httpHandler composes the routes and the guards around them.
func (s *Service) httpHandler(cfg Config, token string, mcpHandler http.Handler) http.Handler {
	env := s.envFor(!cfg.Write)
	doc, _ := openAPIJSON(s.ops, s.version)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpHandler)
	mux.HandleFunc("/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, r.Method, r.URL.Path, []string{"GET"})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	})
	mux.Handle("/", s.restRouter(env))
	authed := requireToken(token, limitBody(mux))

	root := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				methodNotAllowed(w, r.Method, r.URL.Path, []string{"GET"})
				return
			}
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": s.version})
			return
		}
		if discovery(w, r) {
			return
		}
		authed.ServeHTTP(w, r)
	})
	var h http.Handler = root
	h = newHostGuard(cfg.AllowHosts).wrap(h)
	h = s.recoverHTTP(h)
	if cfg.LogRequests {
		h = s.logHTTP(h)
	}
	return h
}

// limitBody caps request bodies and reads them up front (under the
// deadline guard set), so that no handler waits on the network; then it
// sets the response deadline (none for the /mcp event stream).
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.Body != nil && r.Body != http.NoBody && r.Method != http.MethodGet && r.Method != http.MethodHead {
			data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
			if err != nil {
				var mbe *http.MaxBytesError
				if errors.As(err, &mbe) {
					writeError(w, http.StatusRequestEntityTooLarge, errs.E(errs.TooLarge, "request body is larger than %d bytes", maxBodyBytes))
					return
				}
				if errors.Is(err, os.ErrDeadlineExceeded) {
					err = errors.New("the client sent it too slowly")
				}
				writeError(w, http.StatusBadRequest, errs.E(errs.Invalid, "could not read the request body: %v", err))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(data))
			r.ContentLength = int64(len(data))
		}
		if !(r.Method == http.MethodGet && r.URL.Path == "/mcp") {
			_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Service) recoverHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Printf("panic serving %s %s: %v", r.Method, r.URL.Path, v)
				writeError(w, http.StatusInternalServerError, errs.E(errs.Internal, "internal error (logged by the server)"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// logHTTP logs one line per request: never headers, so never the token.
func (s *Service) logHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		s.log.Printf("%s %s %d %s", r.Method, r.URL.Path, sw.status, time.Since(t0).Round(time.Microsecond))
	})
}

// restRoute is one REST route of one operation.
type restRoute struct {
	op     *ops.Op
	route  ops.Route
	method string
	segs   []string // literal segments, or "{name}" for a parameter
	fields map[string]ops.Field
	body   map[string]bool // fields a JSON body may carry (body methods)
}

func (rr *restRoute) literals() int {
	n := 0
	for _, s := range rr.segs {
		if !isParam(s) {
			n++
		}
	}
	return n
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func hasBody(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
}

// restRoutes lists the REST routes of the operations.
func restRoutes(list []*ops.Op) []*restRoute {
	var out []*restRoute
	for _, op := range list {
		for _, rt := range op.REST {
			r := &restRoute{op: op, route: rt, method: strings.ToUpper(rt.Method), segs: splitPath(rt.Path),
				fields: map[string]ops.Field{}, body: map[string]bool{}}
			inPath := map[string]bool{}
			for _, s := range r.segs {
				if isParam(s) {
					inPath[s[1:len(s)-1]] = true
				}
			}
			var listed map[string]bool
			if rt.Body != "" && rt.Body != "*" {
				listed = map[string]bool{}
				for _, n := range strings.Split(rt.Body, ",") {
					listed[strings.TrimSpace(n)] = true
				}
			}
			for _, f := range ops.Fields(op.In) {
				if f.Name == op.WriteWith && !hasBody(r.method) {
					continue // a GET never writes
				}
				r.fields[f.Name] = f
				if hasBody(r.method) && !inPath[f.Name] && (listed == nil || listed[f.Name]) {
					r.body[f.Name] = true
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// restRouter serves the REST routes of the table: path parameters fill the
// input field of the same name, the query string the others (GET), a JSON
// body on POST, PUT and PATCH. Everything goes through service.call.
type restRouter struct {
	s      *Service
	env    *ops.Env
	routes []*restRoute
}

func (s *Service) restRouter(env *ops.Env) *restRouter {
	return &restRouter{s: s, env: env, routes: restRoutes(s.ops)}
}

func (rt *restRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	segs := splitPath(r.URL.EscapedPath())
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil {
			writeError(w, http.StatusBadRequest, errs.E(errs.Invalid, "bad escape in path segment %q", s))
			return
		}
		segs[i] = u
	}
	var (
		best   *restRoute
		params map[string]string
		allow  []string
	)
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet // net/http drops the body
	}
	for _, route := range rt.routes {
		p, ok := matchPath(route.segs, segs)
		if !ok {
			continue
		}
		if route.method != method {
			if !slices.Contains(allow, route.method) {
				allow = append(allow, route.method)
			}
			continue
		}
		if best == nil || route.literals() > best.literals() {
			best, params = route, p
		}
	}
	if best == nil {
		if len(allow) > 0 {
			methodNotAllowed(w, r.Method, r.URL.Path, allow)
			return
		}
		writeError(w, http.StatusNotFound, errs.E(errs.NotFound, "no route %s %s; the routes are listed at /openapi.json", r.Method, r.URL.Path))
		return
	}
	rt.serve(w, r, best, params)
}

func matchPath(pattern, segs []string) (map[string]string, bool) {
	if len(pattern) != len(segs) {
		return nil, false
	}
	var params map[string]string
	for i, p := range pattern {
		if isParam(p) {
			if params == nil {
				params = map[string]string{}
			}
			params[p[1:len(p)-1]] = segs[i]
			continue
		}
		if p != segs[i] {
			return nil, false
		}
	}
	return params, true
}

func methodNotAllowed(w http.ResponseWriter, method, path string, allow []string) {
	sort.Strings(allow)
	w.Header().Set("Allow", strings.Join(allow, ", "))
	writeError(w, http.StatusMethodNotAllowed, errs.E(errs.Invalid, "%s is not allowed on %s; use %s", method, path, strings.Join(allow, " or ")))
}

func (rt *restRouter) serve(w http.ResponseWriter, r *http.Request, route *restRoute, params map[string]string) {
	status := func(err error) int {
		code := errs.CodeOf(err)
		if st, ok := route.op.RESTStatus[code]; ok {
			return st
		}
		return errs.HTTPStatus(code)
	}
	fail := func(err error) {
		writeError(w, status(err), err)
	}
	// a read-only server refuses writes before looking at the input
	if err := route.op.Allowed(rt.env); err != nil {
		fail(err)
		return
	}
	raw, err := route.input(r, params)
	if err != nil {
		fail(err)
		return
	}
	out, err := rt.s.call(r.Context(), rt.env, route.op, raw)
	if err != nil {
		fail(err)
		return
	}
	data, err := ops.MarshalJSON(out)
	if err != nil {
		rt.s.log.Printf("%s: encode result: %v", route.op.Name, err)
		fail(errs.E(errs.Internal, "internal error: could not encode the result"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(restStatus(route.op, out))
	w.Write(data)
}

// restStatus is 201 Created for a result that created what it names (a
// new page on PUT /pages/{title}, a new item on POST /review/queue),
// else 200. A result forwarded by the server holding the vault comes as
// JSON and is decoded to tell.
func restStatus(op *ops.Op, out any) int {
	if raw, ok := out.(json.RawMessage); ok && op.Out != nil {
		v := reflect.New(op.Out).Interface()
		if _, isCreator := v.(ops.Creator); !isCreator || json.Unmarshal(raw, v) != nil {
			return http.StatusOK
		}
		out = v
	}
	if c, ok := out.(ops.Creator); ok && c.WasCreated() {
		return http.StatusCreated
	}
	return http.StatusOK
}

// input builds the operation's JSON input from the path, the query string
// and the body, rejecting parameters the operation does not have.
func (route *restRoute) input(r *http.Request, params map[string]string) ([]byte, error) {
	in := map[string]json.RawMessage{}
	from := map[string]string{}
	for name, v := range params {
		f, ok := route.fields[name]
		if !ok {
			return nil, errs.E(errs.Internal, "route %s names {%s}, which %s has no field for", route.route.Path, name, route.op.Name)
		}
		val, err := paramValue(f, []string{v}, "path parameter")
		if err != nil {
			return nil, err
		}
		in[name], from[name] = val, "path"
	}
	if err := route.query(r.URL.Query(), in, from); err != nil {
		return nil, err
	}
	if hasBody(route.method) {
		if err := route.readBody(r, in, from); err != nil {
			return nil, err
		}
	}
	return json.Marshal(in)
}

func (route *restRoute) query(q url.Values, in map[string]json.RawMessage, from map[string]string) error {
	byQuery := map[string]ops.Field{}
	var valid []string
	for _, f := range route.fields {
		if _, inPath := from[f.Name]; inPath || route.body[f.Name] {
			continue
		}
		byQuery[f.Query] = f
		valid = append(valid, f.Query)
	}
	sort.Strings(valid)
	var unknown []string
	for name := range q {
		if _, ok := byQuery[name]; !ok {
			unknown = append(unknown, strconv.Quote(name))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		msg := fmt.Sprintf("unknown query parameter %s", strings.Join(unknown, ", "))
		switch {
		case len(valid) > 0:
			msg += "; valid: " + strings.Join(valid, ", ")
		case hasBody(route.method):
			msg += "; send parameters in the JSON body"
		default:
			msg += "; this route takes none"
		}
		return errs.E(errs.Invalid, "%s", msg)
	}
	for name, vals := range q {
		f := byQuery[name]
		val, err := paramValue(f, vals, "query parameter")
		if err != nil {
			return err
		}
		in[f.Name], from[f.Name] = val, "query"
	}
	return nil
}

// paramValue converts string parameters to the field's JSON value.
func paramValue(f ops.Field, vals []string, what string) (json.RawMessage, error) {
	name := f.Query
	if what == "path parameter" {
		name = f.Name
	}
	for _, v := range vals {
		// checked here: the JSON built below would turn bad bytes into
		// U+FFFD, as a body's are refused by the operation
		if !utf8.ValidString(v) {
			return nil, errs.E(errs.Invalid, "%s %q is not valid UTF-8 once unescaped; percent-encode the UTF-8 bytes of the text", what, name)
		}
	}
	if f.Type.Kind() == reflect.Slice {
		return json.Marshal(vals)
	}
	if len(vals) > 1 {
		return nil, errs.E(errs.Invalid, "%s %q is given %d times; give it once", what, name, len(vals))
	}
	v := vals[0]
	switch f.Type.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, errs.E(errs.Invalid, "%s %q must be an integer, not %q", what, name, v)
		}
		return json.Marshal(n)
	case reflect.Bool:
		if v == "" {
			return json.Marshal(true) // ?flag
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, errs.E(errs.Invalid, "%s %q must be true or false, not %q", what, name, v)
		}
		return json.Marshal(b)
	case reflect.String:
		return json.Marshal(v)
	}
	return nil, errs.E(errs.Invalid, "%s %q cannot be given in the URL; send it in a JSON body", what, name)
}

func (route *restRoute) readBody(r *http.Request, in map[string]json.RawMessage, from map[string]string) error {
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errs.E(errs.TooLarge, "request body is larger than %d bytes", maxBodyBytes)
		}
		return errs.E(errs.Invalid, "could not read the request body: %v", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return errs.E(errs.Invalid, "the request body must be JSON (Content-Type: application/json), not %q", ct)
		}
	}
	if err := checkObject(data); err != nil {
		return err
	}
	// a repeated key would collapse in the map below: refuse it first
	if err := ops.CheckDuplicateKeys(data); err != nil {
		return err
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(data, &body); err != nil {
		return errs.E(errs.Invalid, "the request body is not valid JSON: %v", err)
	}
	for name, v := range body {
		if where, dup := from[name]; dup {
			if where == "path" {
				return errs.E(errs.Invalid, "%q is given in the path (%s); leave it out of the body", name, route.route.Path)
			}
			return errs.E(errs.Invalid, "%q is given both in the query string and in the body", name)
		}
		if _, known := route.fields[name]; known && !route.body[name] {
			return errs.E(errs.Invalid, "%q goes in the query string on %s %s, not in the body", name, route.method, route.route.Path)
		}
		// unknown names stay in: the strict decoder rejects them by name
		in[name] = v
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, _ := ops.MarshalJSON(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

// writeError writes the REST error envelope {"error":{"code","message"}}.
func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, ops.ErrorEnvelope(err, errs.REST))
}
