//go:build linux

package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMonitor_AskOp: a verb handed to the monitor reaches its Serve with
// the request as sent and a view of the change log that already holds
// an edit finished just before (the flush); the reply comes back as is,
// a decline as ErrDeclined with its reason, and a client of another
// version gets ErrVersion. A monitor without Serve declines.
func TestMonitor_AskOp(t *testing.T) {
	root := newVault(t)
	var tok string
	serve := func(_ context.Context, req json.RawMessage, v View) (json.RawMessage, string) {
		if string(req) == `"decline"` {
			return nil, "not today"
		}
		next, paths, full := v.Since(tok)
		tok = next
		out, _ := json.Marshal(map[string]any{"req": req, "paths": paths, "full": full, "answered": v.Answered(), "pid": v.PID()})
		return out, ""
	}
	tok, _ = startWith(t, root, Options{Version: "test", Idle: time.Minute, CheckPeer: anyPeer, Serve: serve})
	for i := range 20 {
		rel := "wiki/concepts/p" + strconv.Itoa(i) + ".md"
		write(t, root, rel, "edit")
		reply, err := AskOp(context.Background(), root, json.RawMessage(`{"n":`+strconv.Itoa(i)+`}`), testClient)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Req      json.RawMessage
			Paths    []string
			Full     bool
			Answered int
			PID      int
		}
		if err := json.Unmarshal(reply, &got); err != nil {
			t.Fatal(err)
		}
		if string(got.Req) != `{"n":`+strconv.Itoa(i)+`}` || got.Full || !slices.Equal(got.Paths, []string{rel}) || got.Answered != i || got.PID == 0 {
			t.Fatalf("edit %d: the verb saw %+v (req %s)", i, got, got.Req)
		}
	}
	_, err := AskOp(context.Background(), root, json.RawMessage(`"decline"`), testClient)
	if !errors.Is(err, ErrDeclined) || !strings.Contains(err.Error(), "not today") {
		t.Fatalf("a declined verb: %v", err)
	}
	other := testClient
	other.Version = "other"
	if _, err := AskOp(context.Background(), root, json.RawMessage(`{}`), other); !errors.Is(err, ErrVersion) {
		t.Fatalf("another version: %v", err)
	}

	plain := newVault(t)
	start(t, plain, time.Minute)
	if _, err := AskOp(context.Background(), plain, json.RawMessage(`{}`), testClient); !errors.Is(err, ErrDeclined) {
		t.Fatalf("a monitor that runs no verbs: %v", err)
	}
	if _, err := AskOp(context.Background(), newVault(t), json.RawMessage(`{}`), testClient); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("no monitor: %v", err)
	}
}
