package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
)

func chunksOf(t *testing.T, title, doc string) []Chunk {
	t.Helper()
	return ChunkPage(title, markdown.Parse(title+".md", []byte(doc)))
}

// TestChunkPage: sections along headings with their heading path, the
// title first (once, when the first heading repeats it), headings inside
// code ignored, empty parents skipped, long sections cut, and keys that
// hold the heading path and text but not the title.
func TestChunkPage(t *testing.T) {
	doc := "---\ntags: [x]\n---\nIntro text with a [[Link|label]] and ![[img.png]].\n\n# Guide\n\n## Setup\n\nInstall it.\n\n```sh\n# not a heading\nrun it\n```\n\n## Empty parent\n\n### Child\n\nChild text.\n\n## Last\n"
	cs := chunksOf(t, "Guide", doc)
	var got []string
	for _, c := range cs {
		got = append(got, c.Text)
	}
	want := []string{
		"Guide\nIntro text with a label and .",
		"Guide > Setup\nInstall it.\n\nsh\n# not a heading\nrun it",
		"Guide > Empty parent > Child\nChild text.",
		"Guide > Last",
		"Guide\nTags: x\nSections: Guide; Setup; Empty parent; Child; Last",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("chunks:\n%q\nwant\n%q", got, want)
	}
	if cs[1].Heading != "Guide > Setup" {
		t.Errorf("heading path %q", cs[1].Heading)
	}
	// the title is not in the key: a renamed page keeps its keys
	re := chunksOf(t, "Renamed", doc)
	for i := range re {
		if re[i].Key != cs[i].Key && i > 0 {
			t.Errorf("chunk %d: key changed with the title", i)
		}
		if !strings.HasPrefix(re[i].Text, "Renamed") {
			t.Errorf("chunk %d of the renamed page: %q", i, re[i].Text)
		}
	}
	if re[0].Key != cs[0].Key {
		t.Error("intro chunk key changed with the title")
	}
	// a long section is cut into bounded pieces at paragraph breaks
	long := "# T\n\n" + strings.Repeat("A sentence of some length about things. ", 20) + "\n\n" + strings.Repeat("Another paragraph here with words. ", 30)
	for _, c := range chunksOf(t, "T", long) {
		if len(c.Text) > MaxChunkBytes+minPieceBytes+10 {
			t.Errorf("chunk of %d bytes", len(c.Text))
		}
	}
	// an empty page is one chunk of its title, keyed by the title
	a, b := chunksOf(t, "Alpha", ""), chunksOf(t, "Beta", "---\ntags: [x]\n---\n")
	if len(a) != 1 || len(b) != 1 || a[0].Text != "Alpha" || a[0].Key == b[0].Key {
		t.Errorf("empty pages: %+v %+v", a, b)
	}
}

func TestQueryText(t *testing.T) {
	for in, want := range map[string]string{
		`how do I sync type:concept -mobile`:  "how do I sync",
		`"remote vault" tag:project -"a b" x`: "remote vault x",
		`-type:note   hello`:                  "hello",
		`type:entity`:                         "",
	} {
		if got := QueryText(in); got != want {
			t.Errorf("QueryText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMatrixRank: the int8 scan ranks pages as exact float cosines do.
func TestMatrixRank(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	dim := 64
	s, err := store.Open(filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	vecs := map[uint32][][]float32{}
	err = s.Update(func(tx *store.Tx) error {
		if err := tx.SetVecModel("m", dim); err != nil {
			return err
		}
		for doc := uint32(1); doc <= 200; doc++ {
			vp := &store.VecPage{SHA256: "x"}
			for c := range 1 + int(doc%4) {
				v := make([]float32, dim)
				for i := range v {
					v[i] = float32(r.NormFloat64())
				}
				k := chunkKey(fmt.Sprint(doc), fmt.Sprint(c))
				if err := tx.PutVector(k, v); err != nil {
					return err
				}
				vecs[doc] = append(vecs[doc], normalize(v))
				vp.Chunks = append(vp.Chunks, store.VecChunk{Key: k})
			}
			if err := tx.PutVecPage(doc, vp); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float32, dim)
	for i := range y {
		y[i] = float32(r.NormFloat64())
	}
	y = normalize(y)
	type exact struct {
		doc uint32
		cos float64
	}
	var want []exact
	for doc, vs := range vecs {
		if doc%5 == 0 {
			continue // filtered out below
		}
		best := -2.0
		for _, v := range vs {
			d := 0.0
			for i := range v {
				d += float64(v[i]) * float64(y[i])
			}
			best = max(best, d)
		}
		want = append(want, exact{doc, best})
	}
	sort.Slice(want, func(i, j int) bool { return want[i].cos > want[j].cos })
	var got []semHit
	_ = s.View(func(tx *store.Tx) error {
		got, err = rank(tx, dim, y, func(d uint32) bool { return d%5 != 0 }, 10)
		if err != nil {
			t.Fatal(err)
		}
		return nil
	})
	if len(got) != 10 {
		t.Fatalf("%d hits", len(got))
	}
	for i, h := range got {
		if math.Abs(h.cos-want[i].cos) > 0.02 {
			t.Errorf("hit %d: cos %.4f, exact %.4f", i, h.cos, want[i].cos)
		}
		if h.doc%5 == 0 {
			t.Errorf("hit %d: doc %d is filtered out", i, h.doc)
		}
	}
	// the top hits agree (ties within quantization error aside)
	if got[0].doc != want[0].doc && math.Abs(want[0].cos-want[1].cos) > 0.01 {
		t.Errorf("best page %d, exact %d", got[0].doc, want[0].doc)
	}
	// a large matrix is prefiltered by sign bits: most of the exact top
	// ten survive a cut to a fifth of the chunks
	defer func(l, c int, sh float64) { exactLimit, candidates, candidateShare = l, c, sh }(exactLimit, candidates, candidateShare)
	exactLimit, candidates, candidateShare = 50, 100, 0.2
	var pre []semHit
	_ = s.View(func(tx *store.Tx) error {
		pre, _ = rank(tx, dim, y, func(d uint32) bool { return d%5 != 0 }, 10)
		return nil
	})
	found := 0
	for _, h := range pre {
		for _, g := range got {
			if g.doc == h.doc {
				found++
			}
		}
		if h.doc%5 == 0 {
			t.Errorf("prefiltered hit %d is filtered out", h.doc)
		}
	}
	if found < 7 {
		t.Errorf("prefilter kept %d of the exact top 10", found)
	}
}

// flaky fails the calls listed in fail (by call number from 1) with err.
type flaky struct {
	calls atomic.Int64
	fail  map[int64]error
	dim   int
	texts atomic.Int64
}

func (f *flaky) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	n := f.calls.Add(1)
	if err, ok := f.fail[n]; ok {
		return nil, err
	}
	f.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, f.dim)
		for j, c := range s {
			v[(j+int(c))%f.dim] += 1
		}
		out[i] = v
	}
	return out, nil
}

// TestRun_RetryAndResume: a retryable failure is retried with backoff; a
// failure that outlasts the retries stops the run with an unavailable
// error, keeping the batches already stored, and the next run sends only
// what is left.
func TestRun_RetryAndResume(t *testing.T) {
	s, err := store.Open(filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	files := map[string]string{}
	err = s.Update(func(tx *store.Tx) error {
		for i := range 20 {
			p := fmt.Sprintf("wiki/p%02d.md", i)
			doc, id, err := tx.NewPage(p)
			if err != nil {
				return err
			}
			files[p] = fmt.Sprintf("# Page %d\n\nText %d.\n\n## Part\n\nMore %d.\n", i, i, i)
			sum := sha256.Sum256([]byte(files[p]))
			if err := tx.PutPage(&store.PageRec{Doc: doc, ID: id, Path: p, Title: fmt.Sprintf("p%02d", i), Type: "note", SHA256: hex.EncodeToString(sum[:])}, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) ([]byte, error) { return []byte(files[p]), nil }
	down := &ProviderError{Reason: Down, Retry: true, Msg: "cannot reach it"}
	// call 1 fails once and is retried; calls 3..6 fail: batch 2 gives up
	p := &flaky{dim: 8, fail: map[int64]error{1: down, 3: down, 4: down, 5: down, 6: down}}
	o := RunOptions{Model: "m", Provider: p, ReadFile: read, Batch: 10, Concurrency: 1, Retries: 3, Backoff: 1}
	rep, err := Run(context.Background(), s, o)
	if err == nil || !strings.Contains(err.Error(), "cannot reach it") || !strings.Contains(err.Error(), "10 of 60 chunks") {
		t.Fatalf("run: %v", err)
	}
	if rep.Chunks != 10 || rep.Retries != 4 || rep.Complete {
		t.Errorf("report: %+v", rep)
	}
	_ = s.View(func(tx *store.Tx) error {
		st := tx.VecStats()
		if pages, vecs := st.Pages, st.Vectors; pages != 3 || vecs != 10 { // 3 chunks a page (two sections and the summary)
			t.Errorf("after the failed run: %d pages, %d vectors stored", pages, vecs)
		}
		if r, ok := tx.VecRun(); !ok || r.Complete || !strings.Contains(r.Error, "cannot reach it") {
			t.Errorf("run record %+v", r)
		}
		return nil
	})
	p.fail = nil
	before := p.texts.Load()
	rep, err = Run(context.Background(), s, o)
	if err != nil || !rep.Complete || rep.Chunks != 50 || rep.Embedded != 17 || rep.Current != 3 || p.texts.Load()-before != 50 {
		t.Fatalf("resumed run: %+v, %v", rep, err)
	}
	// a refusal is not retried
	// (and a rebuild refused from the start keeps what is stored)
	p.fail = map[int64]error{p.calls.Load() + 1: &ProviderError{Reason: Refused, Msg: "401 bad key"}}
	calls := p.calls.Load()
	o.Rebuild = true
	if _, err := Run(context.Background(), s, o); err == nil || !strings.Contains(err.Error(), "401") || p.calls.Load() != calls+1 {
		t.Errorf("refused: %v after %d calls", err, p.calls.Load()-calls)
	}
	_ = s.View(func(tx *store.Tx) error {
		if st := tx.VecStats(); st.Pages != 20 || st.Vectors != 60 {
			pages, vecs := st.Pages, st.Vectors
			t.Errorf("after a refused rebuild: %d pages, %d vectors", pages, vecs)
		}
		return nil
	})
}

// TestCheckVector: what no provider answer may hold (a JSON provider cannot
// send NaN, but another transport can): NaN, infinities, all zeros, the
// wrong dimension; each refused as a bad answer naming the problem.
func TestCheckVector(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, c := range []struct {
		v    []float32
		dim  int
		want string
	}{
		{[]float32{1, nan, 0}, 3, "NaN"},
		{[]float32{1, -inf, 0}, 3, "infinite"},
		{[]float32{0, 0, 0}, 3, "all-zero"},
		{[]float32{1, 2}, 3, "wrong dimension"},
		{[]float32{}, 0, "empty"},
	} {
		err := CheckVector(c.v, c.dim)
		pe, ok := Failure(err)
		if !ok || pe.Reason != BadAnswer || !strings.Contains(pe.Msg, c.want) {
			t.Errorf("CheckVector(%v, %d) = %v, want a bad answer naming %q", c.v, c.dim, err, c.want)
		}
	}
	if err := CheckVector([]float32{0, 0.5, -1}, 3); err != nil {
		t.Errorf("a good vector: %v", err)
	}
}
