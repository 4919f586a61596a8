package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/index"
	"github.com/synapse-wiki/synapse/internal/server/sock"
	"github.com/synapse-wiki/synapse/ops"
)

// call runs op for a transport: the one dispatch path of MCP, REST and the
// socket. The read-only guard, strict decoding and clamping are op.Call's;
// call adds write serialization, waits for the first index of a new vault,
// forwards when this service is a proxy and turns a panic into an internal
// error.
func (s *Service) call(ctx context.Context, env *ops.Env, op *ops.Op, raw []byte) (out any, err error) {
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
// up to sock.LockWait (as a verb alone waits for the lock a reindex holds);
// then it answers unavailable.
func (s *Service) waitRebuilt(ctx context.Context) error {
	deadline := time.Now().Add(sock.LockWait)
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
// index while the start-up reconciliation runs (docs/serving.md#start-up).
func (s *Service) waitIndexed(ctx context.Context, indexed <-chan struct{}) error {
	select {
	case <-indexed:
		return nil
	default:
	}
	var timeout <-chan time.Time
	if patient, _ := ctx.Value(patientKey{}).(bool); !patient {
		t := time.NewTimer(s.firstIndexWait)
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
