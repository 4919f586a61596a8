package embed

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
)

// Defaults of a run.
const (
	DefaultBatch       = 32
	DefaultConcurrency = 2
	DefaultRetries     = 3
	DefaultBackoff     = 500 * time.Millisecond
	// pagesPerCommit bounds the chunk lists written in one transaction
	// when nothing needs embedding.
	pagesPerCommit = 500
)

// RunOptions configure an embedding run.
type RunOptions struct {
	Model    string   // recorded with the vectors; a change re-embeds everything
	Provider Provider // required
	// ReadFile reads a page by vault path.
	ReadFile func(vaultPath string) ([]byte, error)
	// Batch is the number of texts per request, Concurrency the number of
	// requests in flight, Retries how often a failed request is tried
	// again (Down, Slow and 429 only), each after Backoff·2^attempt.
	Batch, Concurrency, Retries int
	Backoff                     time.Duration
	// Rebuild drops every vector first.
	Rebuild bool
	// Progress receives the chunks done of the chunks to embed.
	Progress func(done, total int)
	Now      func() time.Time
	// What names the command running (for a second run's refusal).
	What string
}

// Report is the result of a run (the `embed` operation's output).
type Report struct {
	Model    string `json:"model"`
	Dim      int    `json:"dim"`
	Pages    int    `json:"pages"`    // pages in the vault
	Embedded int    `json:"embedded"` // pages whose chunk list this run (re)wrote
	Current  int    `json:"current"`  // pages already current
	Removed  int    `json:"removed"`  // chunk lists of pages that are gone
	Chunks   int    `json:"chunks"`   // chunks sent to the provider
	Reused   int    `json:"reused"`   // chunks of changed pages whose vector was stored already
	Swept    int    `json:"swept"`    // vectors no page refers to any more, removed
	Requests int    `json:"requests"`
	Retries  int    `json:"retries"`
	// Complete says every page is embedded; a run cut short by a
	// provider failure keeps what it stored (the next run resumes).
	Complete   bool  `json:"complete"`
	DurationMS int64 `json:"duration_ms"`
}

// pageWork is a page whose chunk list must be (re)written.
type pageWork struct {
	doc     uint32
	path    string
	sha     string
	chunks  []Chunk
	missing int // chunks whose vector is not stored yet
}

// DB is what a run needs of the store: read and write transactions. A
// *store.Store is one; ops hands the CLI's run one that opens the store for
// each transaction only, so that other processes can use it while the
// provider works.
type DB interface {
	View(fn func(tx *store.Tx) error) error
	Update(fn func(tx *store.Tx) error) error
}

// Run brings the vectors in step with the pages: pages whose file changed
// since they were embedded are cut into chunks again; chunks whose text
// already has a vector are reused, the others are sent to the provider in
// batches, with bounded concurrency and retries. Results are committed as
// they arrive, so a run that stops (a provider failure, ctx) keeps what
// it stored and the next one resumes. A provider answer is checked before
// it is stored: the right number of vectors, one dimension (the one the
// store holds for this model), finite and non-zero.
//
// One run at a time per store: a run started while another process's is
// in progress is unavailable (naming that process).
//
// Errors: unavailable when the provider fails (the message names why) or
// another run is in progress; internal for store failures.
func Run(ctx context.Context, s DB, o RunOptions) (rep *Report, err error) {
	start := time.Now()
	r := &runner{s: s, o: o.withDefaults(), rep: &Report{Model: o.Model}}
	mark, err := r.begin()
	if err != nil {
		return r.rep, err
	}
	defer func() { err = r.end(mark, start, err) }()
	if err := r.findStale(); err != nil { // 1. what is stale
		return r.rep, err
	}
	needs, err := r.chunkStale(ctx) // 2. chunks, and those that need the provider
	if err != nil {
		return r.rep, err
	}
	if err := r.embedMissing(ctx, needs); err != nil { // 3. the provider
		return r.rep, err
	}
	return r.rep, r.sweep() // 4. vectors no page refers to
}

// withDefaults fills the options left zero.
func (o RunOptions) withDefaults() RunOptions {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	return o
}

// runner is one embedding run, step by step (Run).
type runner struct {
	s   DB
	o   RunOptions
	rep *Report
	// storedModel and storedDim are what the store held when the run
	// began; fresh says nothing stored is of use (a rebuild, another
	// model)
	storedModel string
	storedDim   int
	fresh       bool
	work        []*pageWork // pages whose chunk list must be (re)written
}

// need is a chunk text the provider must embed, and the pages waiting
// for its vector.
type need struct {
	key   store.ChunkKey
	text  string
	pages []*pageWork
}

// begin marks the store as embedding (one run at a time) and drops the
// vector records of an older layout.
func (r *runner) begin() (*store.VecRunning, error) {
	mark := &store.VecRunning{PID: os.Getpid(), Token: runToken(), Since: r.o.Now().UTC(), What: r.o.What}
	return mark, r.s.Update(func(tx *store.Tx) error {
		if cur, ok := tx.VecRunning(); ok && cur.Token != mark.Token {
			return errs.E(errs.Unavailable, "an embedding run is in progress (pid %d, %s, since %s); wait for it to finish",
				cur.PID, cur.What, cur.Since.Local().Format(time.DateTime))
		}
		if _, err := tx.DropOldVecPages(); err != nil {
			return err
		}
		return tx.SetVecRunning(mark)
	})
}

// end records the run and removes its mark; it returns err, or the
// error of that record when err is nil.
func (r *runner) end(mark *store.VecRunning, start time.Time, err error) error {
	rep := r.rep
	rep.DurationMS = time.Since(start).Milliseconds()
	rec := store.VecRun{At: r.o.Now().UTC(), Model: r.o.Model, Complete: rep.Complete && err == nil,
		Embedded: rep.Chunks, Reused: rep.Reused, DurationM: rep.DurationMS}
	if err != nil {
		rec.Error = errs.Message(err)
	}
	werr := r.s.Update(func(tx *store.Tx) error {
		if cur, ok := tx.VecRunning(); ok && cur.Token == mark.Token {
			if err := tx.SetVecRunning(nil); err != nil {
				return err
			}
		}
		return tx.SetVecRun(rec)
	})
	if werr != nil && err == nil {
		return werr
	}
	return err
}

// findStale lists the pages whose chunk list is missing or stale (one
// read transaction, no file contents) and removes the chunk lists of
// pages that are gone.
func (r *runner) findStale() error {
	rep := r.rep
	var gone []uint32
	err := r.s.View(func(tx *store.Tx) error {
		r.storedModel, r.storedDim = tx.VecModel()
		embedded := map[uint32]string{} // "" for a stale record
		if err := tx.ScanVecPages(func(doc uint32, v *store.VecView) error {
			embedded[doc] = v.SHA256
			if v.Stale {
				embedded[doc] = ""
			}
			return nil
		}); err != nil {
			return err
		}
		r.fresh = r.o.Rebuild || r.storedModel != r.o.Model
		live := map[uint32]bool{}
		err := tx.EachPage(func(p *store.PageRec) bool {
			if p.Reserved {
				return true
			}
			rep.Pages++
			live[p.Doc] = true
			if sha, ok := embedded[p.Doc]; ok && sha == p.SHA256 && !r.fresh {
				rep.Current++
				return true
			}
			r.work = append(r.work, &pageWork{doc: p.Doc, path: p.Path, sha: p.SHA256})
			return true
		})
		for doc := range embedded {
			if !live[doc] {
				gone = append(gone, doc)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	// a model change or a rebuild: nothing stored is of use; what is
	// stored is dropped with the first good answer (a provider that fails
	// from the start leaves the store as it was)
	if r.fresh {
		rep.Current = 0
	}
	if len(gone) > 0 {
		if err := r.s.Update(func(tx *store.Tx) error { return tx.DeleteVecPages(gone) }); err != nil {
			return err
		}
		rep.Removed = len(gone)
	}
	return nil
}

// chunkStale cuts the stale pages into chunks (files read outside any
// transaction), returns the chunks that need the provider, and links at
// once the pages that need nothing new.
func (r *runner) chunkStale(ctx context.Context) ([]*need, error) {
	for _, w := range r.work {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, rerr := r.o.ReadFile(w.path)
		if rerr != nil {
			continue // gone since the scan: the next scan removes it
		}
		sum := sha256.Sum256(data)
		w.sha = hex.EncodeToString(sum[:])
		pg := markdown.Parse(w.path, data)
		w.chunks = ChunkPage(pg.Title, pg)
	}
	var needs []*need
	byKey := map[store.ChunkKey]*need{}
	err := r.s.View(func(tx *store.Tx) error {
		for _, w := range r.work {
			for _, c := range w.chunks {
				if n, ok := byKey[c.Key]; ok {
					n.pages = append(n.pages, w)
					w.missing++
					continue
				}
				if !r.fresh && tx.HasVector(c.Key) {
					r.rep.Reused++
					continue
				}
				n := &need{key: c.Key, text: c.Text, pages: []*pageWork{w}}
				byKey[c.Key] = n
				needs = append(needs, n)
				w.missing++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var ready []*pageWork
	for _, w := range r.work {
		if w.chunks != nil && w.missing == 0 {
			ready = append(ready, w)
		}
	}
	for i := 0; i < len(ready); i += pagesPerCommit {
		part := ready[i:min(i+pagesPerCommit, len(ready))]
		if err := r.s.Update(func(tx *store.Tx) error { return linkPages(tx, part, r.rep) }); err != nil {
			return nil, err
		}
	}
	return needs, nil
}

// answer is the provider's answer to one batch.
type answer struct {
	batch []*need
	vecs  [][]float32
	err   error
	tries int
}

// embedMissing embeds what is missing: batches in flight on Concurrency
// workers, results checked and committed in arrival order. The first
// failure stops the run; what was committed stays.
func (r *runner) embedMissing(ctx context.Context, needs []*need) error {
	total := len(needs)
	if r.o.Progress != nil {
		r.o.Progress(0, total)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	answers := r.ask(ctx, needs)
	dim := r.storedDim
	if r.fresh {
		dim = 0
	}
	cleared := !r.fresh
	done := 0
	var runErr error
	for a := range answers {
		if runErr != nil {
			continue // drain
		}
		r.rep.Requests += a.tries
		r.rep.Retries += a.tries - 1
		if a.err == nil {
			var d int
			if d, a.err = checkVectors(a.vecs, len(a.batch), dim); a.err == nil {
				dim = d
			}
		}
		if a.err == nil {
			a.err = r.store(a, dim, &cleared)
		}
		if a.err != nil {
			runErr = a.err
			cancel()
			continue
		}
		done += len(a.batch)
		r.rep.Chunks += len(a.batch)
		if r.o.Progress != nil {
			r.o.Progress(done, total)
		}
	}
	r.rep.Dim = dim
	if runErr != nil {
		if pe, ok := Failure(runErr); ok {
			return errs.Wrap(errs.Unavailable, runErr, "%s; %d of %d chunks embedded, the rest next time", pe.Error(), done, total)
		}
		return runErr
	}
	return ctx.Err()
}

// ask sends needs in batches to the provider on Concurrency workers and
// returns their answers, closed when every worker is done. A worker stops
// after a failed batch, and all stop when ctx ends.
func (r *runner) ask(ctx context.Context, needs []*need) <-chan answer {
	total := len(needs)
	jobs := make(chan []*need)
	answers := make(chan answer)
	var wg sync.WaitGroup
	for range min(r.o.Concurrency, max(1, (total+r.o.Batch-1)/r.o.Batch)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range jobs {
				texts := make([]string, len(b))
				for i, n := range b {
					texts[i] = n.text
				}
				if ctx.Err() != nil {
					return
				}
				vecs, tries, err := embedRetry(ctx, r.o, texts)
				select {
				case answers <- answer{b, vecs, err, tries}:
				case <-ctx.Done():
					return
				}
				if err != nil {
					return // the run stops: no more calls from this worker
				}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for i := 0; i < total; i += r.o.Batch {
			select {
			case jobs <- needs[i:min(i+r.o.Batch, total)]:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(answers) }()
	return answers
}

// store commits one checked answer: its vectors, and the chunk lists of
// the pages it completes. The first answer of a fresh run clears what the
// store held (cleared records that it did).
func (r *runner) store(a answer, dim int, cleared *bool) error {
	model := r.o.Model
	return r.s.Update(func(tx *store.Tx) error {
		m, d := tx.VecModel()
		switch {
		case !*cleared:
			if err := tx.ClearVectors(); err != nil {
				return err
			}
			if err := tx.SetVecModel(model, dim); err != nil {
				return err
			}
			*cleared = true
		case m == model && d != dim:
			// another run stored this model at another dimension
			return &ProviderError{Reason: BadAnswer, Msg: fmt.Sprintf("wrong dimension: %d, the store holds %d for %s", dim, d, model)}
		case m != model:
			if err := tx.SetVecModel(model, dim); err != nil {
				return err
			}
		}
		var linked []*pageWork
		for i, n := range a.batch {
			if err := tx.PutVector(n.key, normalize(a.vecs[i])); err != nil {
				return err
			}
			for _, w := range n.pages {
				if w.missing--; w.missing == 0 {
					linked = append(linked, w)
				}
			}
		}
		return linkPages(tx, linked, r.rep)
	})
}

// sweep ends a complete run: the vectors no page refers to are removed.
func (r *runner) sweep() error {
	return r.s.Update(func(tx *store.Tx) error {
		st := tx.VecStats()
		r.rep.Complete = st.Pages-st.Stale >= r.rep.Pages
		if m, d := tx.VecModel(); m == r.o.Model {
			r.rep.Dim = d
		}
		if !r.rep.Complete {
			return nil
		}
		n, err := tx.SweepVectors()
		r.rep.Swept = n
		return err
	})
}

// runToken tells this run's mark from another's.
func runToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// linkPages writes the chunk lists of pages whose vectors are all stored,
// unless the page's doc now names another file (a reindex renumbered the
// pages while the run was embedding).
func linkPages(tx *store.Tx, pages []*pageWork, rep *Report) error {
	for _, w := range pages {
		p, err := tx.Page(w.doc)
		if err != nil || p == nil || p.Path != w.path {
			continue
		}
		// the file may have changed again since it was read: then the
		// record is stale from the start
		vp := &store.VecPage{SHA256: w.sha, Stale: w.sha != p.SHA256, Chunks: make([]store.VecChunk, len(w.chunks))}
		for i, c := range w.chunks {
			vp.Chunks[i] = store.VecChunk{Key: c.Key, Heading: c.Heading}
		}
		if err := tx.PutVecPage(w.doc, vp); err != nil {
			return err
		}
		rep.Embedded++
	}
	return nil
}

// embedRetry calls the provider, trying again after a retryable failure.
func embedRetry(ctx context.Context, o RunOptions, texts []string) ([][]float32, int, error) {
	tries := 0
	for {
		tries++
		vecs, err := o.Provider.Embed(ctx, texts)
		if err == nil {
			return vecs, tries, nil
		}
		pe, ok := Failure(err)
		if !ok {
			if ctx.Err() != nil {
				return nil, tries, ctx.Err()
			}
			pe = &ProviderError{Reason: Down, Retry: true, Msg: err.Error()}
		}
		if !pe.Retry || tries > o.Retries {
			return nil, tries, pe
		}
		select {
		case <-time.After(o.Backoff << (tries - 1)):
		case <-ctx.Done():
			return nil, tries, errors.Join(pe, ctx.Err())
		}
	}
}
