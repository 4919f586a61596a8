package ops

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/store"
)

// fillQueue enqueues n pending items of mixed types, 10,000 per
// transaction, and returns their ids in queue order.
func fillQueue(b testing.TB, e *Env, from, n int) []string {
	b.Helper()
	ids := make([]string, 0, n)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for start := from; start < from+n; start += 10000 {
		err := e.Store.Update(func(tx *store.Tx) error {
			for i := start; i < min(start+10000, from+n); i++ {
				p := &Proposal{Type: ReviewTypes[i%len(ReviewTypes)], Title: fmt.Sprintf("Proposal number %d", i),
					Rationale: "A generated proposal with a sentence of rationale.", Origin: OriginAgent,
					ReferencedPages: []string{"Some page", "Another page"}}
				if err := p.clean(); err != nil {
					return err
				}
				r, _, err := enqueue(tx, p, now)
				if err != nil {
					return err
				}
				ids = append(ids, r.ID)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return ids
}

// BenchmarkReview_Queue100k measures list_reviews and bulk-resolve with
// 100,000 items in the queue (targets: list under 10 ms,
// bulk-resolve of 200 under 50 ms). Both go through op.Call, as every
// adapter does; bulk-resolve includes its commit (fsync).
//
//	go test ./ops -run '^$' -bench Review_Queue100k -benchtime 2s
func BenchmarkReview_Queue100k(b *testing.B) {
	const n = 100000
	e, err := OpenEnv(context.Background(), testvault.New(b), OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	pool := fillQueue(b, e, 0, n)
	ctx := context.Background()
	list := func(params string) func(b *testing.B) {
		return func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				out, err := opListReviews.Call(ctx, e, []byte(params))
				if err != nil {
					b.Fatal(err)
				}
				if l := out.(*ListReviewsOut); len(l.Items) == 0 || l.Total < 1000 {
					b.Fatalf("%s: %d items of %d", params, len(l.Items), l.Total)
				}
			}
		}
	}
	b.Run("list-100-oldest", list(`{"limit":100}`))
	b.Run("list-100-at-offset-99900", list(`{"limit":100,"offset":99900}`))
	b.Run("list-100-of-one-type", list(`{"limit":100,"type":"confirm","status":"all"}`))
	b.Run("list-200-as-two-pages", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			for _, p := range []string{`{"limit":100}`, `{"limit":100,"offset":100}`} {
				if _, err := opListReviews.Call(ctx, e, []byte(p)); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("bulk-resolve-200", func(b *testing.B) {
		next := n
		for i := 0; i < b.N; i++ {
			if len(pool) < 200 {
				b.StopTimer()
				pool = fillQueue(b, e, next, 20000)
				next += 20000
				b.StartTimer()
			}
			batch := pool[:200]
			pool = pool[200:]
			out, err := opBulkResolve.Call(ctx, e, mustJSON(b, obj{"ids": batch, "action": "skip"}))
			if err != nil {
				b.Fatal(err)
			}
			if r := out.(*BulkResolveOut); r.Count != 200 {
				b.Fatalf("resolved %d of 200", r.Count)
			}
		}
	})
}

// replayBenchItems is the queue BenchmarkReview_Replay100k replays (a
// variable, to profile a smaller one).
var replayBenchItems = 100000

// BenchmarkReview_Replay100k measures a replay of the journal of 100,000
// items (what the first command after a lost store, or reindex, pays) and
// a compaction of it after every item was refreshed once.
//
//	go test ./ops -run '^$' -bench Review_Replay100k -benchtime 3x
func BenchmarkReview_Replay100k(b *testing.B) {
	n := replayBenchItems
	e, err := OpenEnv(context.Background(), testvault.New(b), OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	fillQueue(b, e, 0, n)
	b.Run("replay", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rep, err := e.replayQueue(true)
			if err != nil || rep.Items != n {
				b.Fatalf("%+v %v", rep, err)
			}
		}
		st, _ := e.files().Stat("reviews.jsonl")
		b.ReportMetric(float64(st.Size())/(1<<20), "journal-MiB")
	})
	b.Run("compact", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			fillQueue(b, e, 0, n) // every item refreshed: one more line each
			b.StartTimer()
			out, err := opCompactReviews.Call(context.Background(), e, []byte(`{}`))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(out.(*CompactReviewsOut).Bytes)/(1<<20), "compacted-MiB")
		}
	})
}

// BenchmarkReview_JournalCheck measures what every command pays to know
// that the queue is the journal's: the store's mark against one stat and
// one read of the journal's end.
//
//	go test ./ops -run '^$' -bench Review_JournalCheck
func BenchmarkReview_JournalCheck(b *testing.B) {
	e, err := OpenEnv(context.Background(), testvault.New(b), OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	fillQueue(b, e, 0, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := e.syncQueue(); err != nil {
			b.Fatal(err)
		}
	}
}
