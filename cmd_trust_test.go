package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// Script commands for the trust boundary (testdata/script/trust*.txtar):
//
//	listener VAR       start an HTTP listener in the test process that counts
//	                   requests; VAR is its embeddings URL
//	requests N FILE    require that the listener got N requests so far; FILE
//	                   receives their Authorization headers and bodies
//	expand SRC DST     copy SRC to DST with $VARS replaced from the script's env
func init() {
	scriptCmds["listener"] = scriptListener
	scriptCmds["requests"] = scriptRequests
	scriptCmds["expand"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: expand SRC DST")
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(os.Expand(ts.ReadFile(args[0]), ts.Getenv)), 0o600))
	}
}

// scriptListeners keeps each script's listener (by its URL).
var scriptListeners sync.Map

type countingListener struct {
	mu   sync.Mutex
	seen []string
}

func scriptListener(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: listener VAR")
	}
	l := &countingListener{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := new(strings.Builder)
		fmt.Fprintf(buf, "%s %s Authorization=%q body=", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		body := make([]byte, 4096)
		n, _ := r.Body.Read(body)
		buf.Write(body[:n])
		l.mu.Lock()
		l.seen = append(l.seen, buf.String())
		l.mu.Unlock()
		http.Error(w, "listener", http.StatusTeapot)
	}))
	ts.Defer(srv.Close)
	url := srv.URL + "/v1/embeddings"
	scriptListeners.Store(ts, l)
	ts.Defer(func() { scriptListeners.Delete(ts) })
	ts.Setenv(args[0], url)
}

func scriptRequests(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: requests N FILE")
	}
	v, ok := scriptListeners.Load(ts)
	if !ok {
		ts.Fatalf("requests: no listener in this script")
	}
	l := v.(*countingListener)
	l.mu.Lock()
	seen := append([]string(nil), l.seen...)
	l.mu.Unlock()
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(strings.Join(seen, "\n")+"\n"), 0o600))
	if want, err := strconv.Atoi(args[0]); err != nil || len(seen) != want {
		ts.Fatalf("the listener got %d requests, want %s:\n%s", len(seen), args[0], strings.Join(seen, "\n"))
	}
}
