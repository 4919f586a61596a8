package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/ops"
)

// TestErrors_SurfaceVocabulary: one domain error reads in the words of the
// surface that shows it. The CLI names --if-match and `synapse review list
// --status all` (review-resolve.txtar, write-invalid.txtar); MCP names
// if_match and the tool list_reviews; REST names if_match and GET
// /review/queue. Before, every surface got the CLI's hints and the MCP
// wording alike (a REST 404 said "see `synapse review list`").
func TestErrors_SurfaceVocabulary(t *testing.T) {
	s, _ := newTestService(t, ops.Table())
	ts := newTestHTTP(t, s, true)

	rest := func(method, path, body string) (int, string) {
		r := doREST(t, ts, method, path, body)
		e, _ := r.body["error"].(map[string]any)
		msg, _ := e["message"].(string)
		return r.status, msg
	}
	st, msg := rest("POST", "/review/queue/nope42/skip", "")
	if st != 404 || !strings.Contains(msg, "see `GET /review/queue?status=all`") || strings.Contains(msg, "synapse ") {
		t.Errorf("REST 404: %d %q", st, msg)
	}
	st, msg = rest("PUT", "/pages/Home", `{"content":"x","if_match":"abc"}`)
	if st != 400 || !strings.HasPrefix(msg, "if_match must be the sha256") || !strings.Contains(msg, "GET /pages/{title}") || strings.Contains(msg, "--") {
		t.Errorf("REST bad if_match: %d %q", st, msg)
	}
	st, msg = rest("PUT", "/pages/Home", `{"content":"x","if_match":"`+strings.Repeat("0", 64)+`"}`)
	if st != 409 || !strings.Contains(msg, "changed since it was read: if_match 000000000000…") {
		t.Errorf("REST stale if_match: %d %q", st, msg)
	}

	p := startStdioPeer(t, s)
	p.initialize("2025-06-18")
	toolError := func(id int, tool, args string) string {
		t.Helper()
		p.send(callMsg(id, tool, args))
		var r struct {
			Result struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(p.next()), &r); err != nil || !r.Result.IsError || len(r.Result.Content) == 0 {
			t.Fatalf("%s: not a tool error: %+v %v", tool, r, err)
		}
		var body struct{ Error string }
		json.Unmarshal([]byte(r.Result.Content[0].Text), &body)
		return body.Error
	}
	if msg := toolError(1, "resolve_review", `{"id":"nope42","action":"skip"}`); !strings.Contains(msg, "see `list_reviews {\"status\":\"all\"}`") || strings.Contains(msg, "synapse ") {
		t.Errorf("MCP not found: %q", msg)
	}
	if msg := toolError(2, "write_page", `{"title":"Home","content":"x","if_match":"abc"}`); !strings.HasPrefix(msg, "invalid: if_match must be the sha256") || !strings.Contains(msg, "as get_page gives it") || strings.Contains(msg, "--") {
		t.Errorf("MCP bad if_match: %q", msg)
	}
	p.close()

	// a message built from another keeps its references for the edge
	inner := errs.E(errs.Invalid, "%s is wrong", errs.Param("if_match"))
	outer := errs.E(errs.Internal, "writing failed: %s; run `%s`", errs.Raw(inner), errs.Cmd("source.rescan"))
	for sf, want := range map[errs.Surface]string{
		errs.CLI:   "writing failed: --if-match is wrong; run `synapse source rescan`",
		errs.MCP:   "writing failed: if_match is wrong; run `trigger_source_rescan`",
		errs.REST:  "writing failed: if_match is wrong; run `POST /sources/rescan`",
		errs.Plain: "writing failed: if_match is wrong; run `synapse source rescan`",
	} {
		if got := errs.MessageFor(outer, sf); got != want {
			t.Errorf("surface %d: %q, want %q", sf, got, want)
		}
	}
	if outer.Error() != errs.MessageFor(outer, errs.Plain) || strings.ContainsAny(outer.Error(), "\uE000\uE001\uE002") {
		t.Errorf("Error() = %q", outer.Error())
	}
}
