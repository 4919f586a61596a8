package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/synapse-wiki/synapse/embed"
	"github.com/synapse-wiki/synapse/embed/openai"
	"github.com/synapse-wiki/synapse/errs"
	"github.com/synapse-wiki/synapse/internal/testvault"
	"github.com/synapse-wiki/synapse/markdown"
	"github.com/synapse-wiki/synapse/store"
	"github.com/synapse-wiki/synapse/vault"
)

func init() {
	NewEmbedProvider = func(url, model, apiKey string, timeout time.Duration) embed.Provider {
		return openai.New(url, model, apiKey, timeout)
	}
}

// fakeProvider is an OpenAI-compatible embeddings endpoint on httptest: a
// bag of words hashed into 64 dimensions, with a few words mapped to one
// concept so that a query and a page can match without sharing a word.
// Its behaviour can be switched to fail the ways real providers do.
type fakeProvider struct {
	srv      *httptest.Server
	dim      atomic.Int32
	mode     atomic.Value // "", "down", "slow", "nan", "garbage", "count", "500"
	texts    atomic.Int64 // texts embedded
	requests atomic.Int64
	mu       sync.Mutex
	seen     []string
	apiKey   atomic.Value
}

var concepts = map[string]string{
	"colored": "callout", "coloured": "callout", "box": "callout", "warning": "callout", "callout": "callout", "callouts": "callout",
	"admonition": "callout", "puppy": "dog", "dog": "dog", "dogs": "dog", "hound": "dog", "canine": "dog",
}

func fakeVector(text string, dim int) []float32 {
	v := make([]float32, dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if c, ok := concepts[w]; ok {
			w = c
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%uint32(dim)] += 1
	}
	v[0] += 0.01 // never all zero
	return v
}

func newFakeProvider(t *testing.T) *fakeProvider {
	f := &fakeProvider{}
	f.dim.Store(64)
	f.mode.Store("")
	f.apiKey.Store("")
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		mode := f.mode.Load().(string)
		if k := f.apiKey.Load().(string); k != "" && r.Header.Get("Authorization") != "Bearer "+k {
			http.Error(w, `{"error":{"message":"bad api key"}}`, http.StatusUnauthorized)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad json", 400)
			return
		}
		switch mode {
		case "slow":
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
				return
			}
		case "500":
			http.Error(w, `{"error":{"message":"model crashed"}}`, 500)
			return
		case "garbage":
			w.Write([]byte("<html>not embeddings</html>"))
			return
		}
		f.mu.Lock()
		f.seen = append(f.seen, req.Input...)
		f.mu.Unlock()
		f.texts.Add(int64(len(req.Input)))
		var data []string
		for i, in := range req.Input {
			v := fakeVector(in, int(f.dim.Load()))
			vals := make([]string, len(v))
			for j, x := range v {
				vals[j] = fmt.Sprint(x)
			}
			if mode == "nan" && i == 0 {
				vals[3] = "NaN"
			}
			if mode == "zero" {
				for j := range vals {
					vals[j] = "0"
				}
			}
			data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%s]}`, i, strings.Join(vals, ",")))
		}
		if mode == "count" {
			data = data[:len(data)-1]
		}
		fmt.Fprintf(w, `{"object":"list","model":%q,"data":[%s]}`, req.Model, strings.Join(data, ","))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProvider) url() string { return f.srv.URL + "/v1/embeddings" }

func (f *fakeProvider) takeSeen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var s []string
	for _, t := range f.seen {
		if t != "synapse status" { // status probes
			s = append(s, t)
		}
	}
	f.seen = nil
	return s
}

// embedVault is a vault configured with the fake provider and opened.
func embedVault(t *testing.T, f *fakeProvider, pages map[string]string) (*vault.Vault, *Env) {
	t.Helper()
	v := testvault.New(t)
	for p, c := range pages {
		testvault.Write(t, v, p, c)
	}
	writeEmbedConfig(t, v, f.url(), "fake-64")
	e, err := OpenEnv(context.Background(), v, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return v, e
}

func writeEmbedConfig(t *testing.T, v *vault.Vault, url, model string) {
	t.Helper()
	testvault.TrustedConfig(t, v, fmt.Sprintf("embeddings:\n  url: %s\n  model: %s\n  query_timeout: 500ms\n  timeout: 1s\n", url, model))
}

func callEmbed(t *testing.T, e *Env, in string) (*EmbedOut, error) {
	t.Helper()
	out, err := Lookup("embed").Call(context.Background(), e, []byte(in))
	if err != nil {
		return nil, err
	}
	return out.(*EmbedOut), nil
}

func mustEmbed(t *testing.T, e *Env) *EmbedOut {
	t.Helper()
	out, err := callEmbed(t, e, `{}`)
	if err != nil {
		t.Fatalf("embed: %v", err)
	}
	return out
}

func callSearch(t *testing.T, e *Env, in string) *SearchOut {
	t.Helper()
	out, err := opSearch.Call(context.Background(), e, []byte(in))
	if err != nil {
		t.Fatalf("search %s: %v", in, err)
	}
	return out.(*SearchOut)
}

func callStatus(t *testing.T, e *Env) *EmbedStatus {
	t.Helper()
	out, err := opStatus.Call(context.Background(), e, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	return out.(*StatusOut).Embeddings
}

func rescanEnv(t *testing.T, e *Env) {
	t.Helper()
	if _, err := opRescan.Call(context.Background(), e, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
}

// checkVectorStore verifies the store's embedding invariants: every chunk
// list belongs to a live page and lists only stored vectors of the
// recorded dimension. It returns the fingerprint of what is stored.
func checkVectorStore(t *testing.T, s *store.Store) string {
	t.Helper()
	var b strings.Builder
	err := s.View(func(tx *store.Tx) error {
		model, dim := tx.VecModel()
		fmt.Fprintf(&b, "model %s %d\n", model, dim)
		return tx.EachVecPage(func(doc uint32, p *store.VecPage) error {
			rec, err := tx.Page(doc)
			if err != nil || rec == nil {
				t.Errorf("chunk list of doc %d: no such page (%v)", doc, err)
				return nil
			}
			fmt.Fprintf(&b, "%s %s", rec.Path, p.SHA256)
			for _, c := range p.Chunks {
				v, ok := tx.Vector(c.Key)
				if !ok || len(v.Q) != dim || math.IsNaN(float64(v.Scale)) || v.Scale <= 0 {
					t.Errorf("%s: chunk %x has no valid vector", rec.Path, c.Key)
				}
				fmt.Fprintf(&b, " %x", c.Key[:4])
			}
			b.WriteString("\n")
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

var dogPages = map[string]string{
	"wiki/concepts/callouts.md": "# Callouts\n\nUse an admonition block to highlight text.\n\n## Types\n\nnote, tip, danger.\n\n## Folding\n\nA plus sign makes it foldable.\n",
	"wiki/concepts/pets.md":     "---\ntags: [animals]\n---\n# Pets\n\nA hound is a loyal companion.\n\n## Food\n\nFeed it twice a day.\n",
	"wiki/entities/rex.md":      "---\ntype: entity\ntags: [animals]\n---\n# Rex\n\nRex is a canine who likes the park.\n",
	"wiki/concepts/gardens.md":  "# Gardens\n\nRoses and tulips grow in spring.\n",
}

// TestEmbed_Incremental: the first run embeds every chunk once; a second
// run sends nothing; an edit re-embeds only the changed section; a
// rename, a reindex and an unchanged rescan send nothing; a deleted page
// loses its chunk list at once and its vectors at the next run.
func TestEmbed_Incremental(t *testing.T) {
	f := newFakeProvider(t)
	v, e := embedVault(t, f, dogPages)
	first := mustEmbed(t, e)
	if first.Embedded != 4 || first.Pages != 4 || !first.Complete || first.Dim != 64 || first.Model != "fake-64" {
		t.Fatalf("first run: %+v", first)
	}
	if int64(first.Chunks) != f.texts.Load() || first.Chunks < 7 {
		t.Fatalf("first run sent %d chunks, provider saw %d", first.Chunks, f.texts.Load())
	}
	for _, s := range f.takeSeen() {
		if l := strings.ToLower(s); !strings.HasPrefix(l, "callouts") && !strings.HasPrefix(l, "pets") && !strings.HasPrefix(l, "rex") && !strings.HasPrefix(l, "gardens") {
			t.Errorf("chunk text without its title first: %q", s)
		}
	}
	if again := mustEmbed(t, e); again.Chunks != 0 || again.Embedded != 0 || again.Current != 4 {
		t.Fatalf("second run: %+v", again)
	}
	st := callStatus(t, e)
	if st.State != "ok" || st.Embedded != 4 || st.Pending != 0 || st.Provider != f.url() || st.Model != "fake-64" || st.Dim != 64 {
		t.Fatalf("status: %+v", st)
	}

	// an edit of one section: one chunk
	testvault.Write(t, v, "wiki/concepts/pets.md", strings.Replace(dogPages["wiki/concepts/pets.md"], "twice a day", "three times a day", 1))
	rescanEnv(t, e)
	if st := callStatus(t, e); st.Pending != 1 {
		t.Errorf("after an edit: %d pages pending, want 1", st.Pending)
	}
	edit := mustEmbed(t, e)
	seen := f.takeSeen()
	if edit.Chunks != 1 || edit.Embedded != 1 || len(seen) != 1 || !strings.HasPrefix(seen[0], "Pets > Food\nFeed it three times") {
		t.Fatalf("after an edit: %+v, sent %q", edit, seen)
	}

	// a rename (the title comes from frontmatter-less file name): nothing
	if err := os.Rename(v.Abs("wiki/concepts/gardens.md"), v.Abs("wiki/concepts/garden-notes.md")); err != nil {
		t.Fatal(err)
	}
	rescanEnv(t, e)
	if rn := mustEmbed(t, e); rn.Chunks != 0 || rn.Embedded != 1 || rn.Removed != 0 {
		t.Fatalf("after a rename: %+v (sent %q)", rn, f.takeSeen())
	}

	// reindex keeps the vectors: nothing is sent again
	before := checkVectorStore(t, e.Store)
	if _, err := opReindex.Call(context.Background(), e, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if st := callStatus(t, e); st.Embedded != 0 || st.Vectors == 0 {
		t.Errorf("after reindex: %+v (chunk lists dropped, vectors kept)", st)
	}
	ri := mustEmbed(t, e)
	if ri.Chunks != 0 || ri.Embedded != 4 || ri.Reused == 0 {
		t.Fatalf("after reindex: %+v", ri)
	}
	if after := checkVectorStore(t, e.Store); after != before {
		t.Errorf("vectors after reindex differ:\n%s\nwas\n%s", after, before)
	}

	// a deleted page: its chunk list goes with the rescan, its vectors
	// with the next run
	_, vecsBefore := vecCounts(e.Store)
	if err := os.Remove(v.Abs("wiki/entities/rex.md")); err != nil {
		t.Fatal(err)
	}
	rescanEnv(t, e)
	if pages, _ := vecCounts(e.Store); pages != 3 {
		t.Errorf("after a delete: %d chunk lists, want 3", pages)
	}
	del := mustEmbed(t, e)
	if _, vecs := vecCounts(e.Store); del.Swept != 2 || vecs != vecsBefore-2 { // rex: its section and its summary
		t.Errorf("after a delete: swept %d, %d vectors (was %d)", del.Swept, vecs, vecsBefore)
	}
	checkVectorStore(t, e.Store)
}

func vecCounts(s *store.Store) (pages, vectors int) {
	_ = s.View(func(tx *store.Tx) error { st := tx.VecStats(); pages, vectors = st.Pages, st.Vectors; return nil })
	return
}

// TestEmbed_ModelChange: another model (here from the environment) re-embeds
// everything, with its own dimension; status says the stored vectors are
// of the old model until then, and search does not compare vectors of two
// models.
func TestEmbed_ModelChange(t *testing.T) {
	f := newFakeProvider(t)
	_, e := embedVault(t, f, dogPages)
	first := mustEmbed(t, e)
	f.dim.Store(32)
	ctx := WithEnviron(context.Background(), append(os.Environ(), EnvEmbedModel+"=fake-32"))
	out, err := opStatus.Call(ctx, e, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if st := out.(*StatusOut).Embeddings; st.StoredModel != "fake-64" || st.Embedded != 0 || st.Pending != 4 || st.Model != "fake-32" {
		t.Errorf("status after a model change: %+v", st)
	}
	sr, err := opSearch.Call(ctx, e, []byte(`{"query":"puppy","mode":"semantic"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := sr.(*SearchOut); r.Mode != "lexical" || !strings.Contains(r.Note, `model "fake-64"`) {
		t.Errorf("search across models: mode %s, note %q", r.Mode, r.Note)
	}
	o2, err := opEmbed.Call(ctx, e, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := o2.(*EmbedOut); r.Chunks != first.Chunks || r.Dim != 32 || r.Model != "fake-32" || r.Embedded != 4 {
		t.Errorf("run after a model change: %+v", r)
	}
	if m := checkVectorStore(t, e.Store); !strings.Contains(m, "model fake-32 32\n") {
		t.Errorf("store: %s", m)
	}
}

// TestSearch_Modes: semantic search finds a page by meaning, hybrid fuses
// both signals and says which found each hit, lexical is unchanged, and
// the filters (type:, tag:, -word, phrases) hold in every mode.
func TestSearch_Modes(t *testing.T) {
	f := newFakeProvider(t)
	_, e := embedVault(t, f, dogPages)
	// before anything is embedded the default is lexical, with a note
	if r := callSearch(t, e, `{"query":"puppy"}`); r.Mode != "lexical" || !strings.Contains(r.Note, "embed") {
		t.Errorf("before embedding: mode %s note %q", r.Mode, r.Note)
	}
	mustEmbed(t, e)
	paths := func(r *SearchOut) []string {
		var out []string
		for _, h := range r.Hits {
			out = append(out, h.Path)
		}
		return out
	}
	r := callSearch(t, e, `{"query":"puppy","mode":"semantic"}`)
	if r.Mode != "semantic" || len(r.Hits) < 2 || r.Hits[0].Signals[0] != "semantic" {
		t.Fatalf("semantic puppy: %+v", r)
	}
	if got := paths(r)[:2]; !(got[0] == "wiki/concepts/pets.md" && got[1] == "wiki/entities/rex.md" || got[1] == "wiki/concepts/pets.md" && got[0] == "wiki/entities/rex.md") {
		t.Errorf("semantic puppy: %v", got)
	}
	if lx := callSearch(t, e, `{"query":"puppy","mode":"lexical"}`); lx.Mode != "lexical" || len(lx.Hits) != 0 {
		t.Errorf("lexical puppy: %+v", lx)
	}
	// default: hybrid once pages are embedded
	h := callSearch(t, e, `{"query":"colored box with a warning"}`)
	if h.Mode != "hybrid" || h.Note != "" || len(h.Hits) == 0 || h.Hits[0].Path != "wiki/concepts/callouts.md" {
		t.Fatalf("hybrid callout: %+v", h)
	}
	both := callSearch(t, e, `{"query":"canine park","mode":"hybrid"}`)
	if len(both.Hits) == 0 || both.Hits[0].Path != "wiki/entities/rex.md" || strings.Join(both.Hits[0].Signals, ",") != "lexical,semantic" {
		t.Errorf("hybrid rex: %+v", both.Hits)
	}
	if both.Hits[0].Snippet == "" {
		t.Errorf("hybrid hit without a snippet")
	}
	// a query that is a section heading or a title keeps its page first
	for q, want := range map[string]string{"Food": "wiki/concepts/pets.md", "Gardens": "wiki/concepts/gardens.md"} {
		if r := callSearch(t, e, fmt.Sprintf(`{"query":%q,"mode":"hybrid"}`, q)); len(r.Hits) == 0 || r.Hits[0].Path != want {
			t.Errorf("hybrid %q: %v, want %s first", q, paths(r), want)
		}
	}
	// filters in every mode
	for _, mode := range []string{"semantic", "hybrid", "lexical"} {
		for _, c := range []struct {
			q    string
			want []string // paths allowed
		}{
			{"dog type:entity", []string{"wiki/entities/rex.md"}},
			{"dog -park", []string{"wiki/concepts/pets.md", "wiki/concepts/callouts.md", "wiki/concepts/gardens.md"}},
			{"dog tag:animals -type:entity", []string{"wiki/concepts/pets.md"}},
			{`"loyal companion" dog`, []string{"wiki/concepts/pets.md"}},
			{`dog -"loyal companion"`, []string{"wiki/entities/rex.md", "wiki/concepts/callouts.md", "wiki/concepts/gardens.md"}},
		} {
			r := callSearch(t, e, fmt.Sprintf(`{"query":%q,"mode":%q,"k":10}`, c.q, mode))
			for _, p := range paths(r) {
				ok := false
				for _, w := range c.want {
					ok = ok || p == w
				}
				if !ok {
					t.Errorf("%s %q: hit %s breaks the filter", mode, c.q, p)
				}
			}
			if mode != "lexical" && len(r.Hits) == 0 {
				t.Errorf("%s %q: no hits", mode, c.q)
			}
		}
	}
	if _, err := opSearch.Call(context.Background(), e, []byte(`{"query":"x","mode":"fuzzy"}`)); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("unknown mode: %v", err)
	}
}

// TestEmbed_ProviderFailures: a provider that is down, slow, or answers
// with the wrong dimension, NaN, the wrong number of vectors or garbage:
// the embed run is refused with a message naming the problem and stores
// nothing of that answer; search still answers lexically with a note;
// status says why.
func TestEmbed_ProviderFailures(t *testing.T) {
	for _, c := range []struct {
		name, mode string
		dim        int
		state      string // status state
		msg        string // in the embed error, the note and the status reason
	}{
		{"down", "down", 64, "down", "cannot reach"},
		{"server error", "500", 64, "down", "model crashed"},
		{"slow", "slow", 64, "slow", "did not answer"},
		{"wrong dimension", "", 48, "bad answer", "wrong dimension"},
		{"nan", "nan", 64, "bad answer", "not embeddings JSON"},
		{"wrong count", "count", 64, "bad answer", "embeddings for"},
		{"garbage", "garbage", 64, "bad answer", "not embeddings JSON"},
		{"all-zero vectors", "zero", 64, "bad answer", "all-zero vector"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeProvider(t)
			v, e := embedVault(t, f, dogPages)
			mustEmbed(t, e)
			before := checkVectorStore(t, e.Store)
			// a new page for the failing run to try
			testvault.Write(t, v, "wiki/concepts/birds.md", "# Birds\n\nA finch sings.\n")
			rescanEnv(t, e)
			f.dim.Store(int32(c.dim))
			f.mode.Store(c.mode)
			if c.mode == "down" {
				f.srv.Close()
			}
			_, err := callEmbed(t, e, `{}`)
			if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(errs.Message(err), c.msg) {
				t.Fatalf("embed: %v (code %s), want unavailable naming %q", err, errs.CodeOf(err), c.msg)
			}
			if after := checkVectorStore(t, e.Store); after != before {
				t.Errorf("the failed run changed the store:\n%s\nwas\n%s", after, before)
			}
			start := time.Now()
			r := callSearch(t, e, `{"query":"loyal hound"}`)
			if r.Mode != "lexical" || !strings.Contains(r.Note, c.msg) || !strings.Contains(r.Note, "lexical results") || len(r.Hits) == 0 || r.Hits[0].Path != "wiki/concepts/pets.md" {
				t.Errorf("search: mode %s, note %q, hits %v", r.Mode, r.Note, r.Hits)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("search waited %v for the provider (query timeout 500ms)", d)
			}
			// the breaker: the next search does not wait for the provider
			n := f.requests.Load()
			r2 := callSearch(t, e, `{"query":"loyal hound","mode":"hybrid"}`)
			if r2.Mode != "lexical" || !strings.Contains(r2.Note, "not retried") || f.requests.Load() != n {
				t.Errorf("second search: mode %s, note %q, %d more requests", r2.Mode, r2.Note, f.requests.Load()-n)
			}
			st := callStatus(t, e)
			if st.State != c.state || !strings.Contains(st.Reason, c.msg) || st.LastRun == nil || !strings.Contains(st.LastRun.Error, c.msg) {
				t.Errorf("status: %+v (last run %+v), want state %q naming %q", st, st.LastRun, c.state, c.msg)
			}
			if st.Embedded != 4 || st.Pending != 1 {
				t.Errorf("status counts: %+v", st)
			}
		})
	}
}

// TestEmbed_Config: no provider means lexical search without a note and an
// embed verb that says how to configure one; a broken configuration is
// named; the API key comes from the variable the configuration names and
// is never stored.
func TestEmbed_Config(t *testing.T) {
	v := testvault.New(t)
	for p, c := range dogPages {
		testvault.Write(t, v, p, c)
	}
	e, err := OpenEnv(context.Background(), v, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if r := callSearch(t, e, `{"query":"hound"}`); r.Mode != "lexical" || r.Note != "" || len(r.Hits) == 0 || r.Hits[0].Signals[0] != "lexical" {
		t.Errorf("no provider: %+v", r)
	}
	if r := callSearch(t, e, `{"query":"hound","mode":"semantic"}`); r.Mode != "lexical" || !strings.Contains(r.Note, "no embedding provider") {
		t.Errorf("semantic without a provider: %+v", r)
	}
	if _, err := callEmbed(t, e, `{}`); errs.CodeOf(err) != errs.Unavailable || !strings.Contains(errs.Message(err), "embeddings.url") {
		t.Errorf("embed without a provider: %v", err)
	}
	if st := callStatus(t, e); st.State != "off" || st.Provider != "" {
		t.Errorf("status without a provider: %+v", st)
	}
	testvault.TrustedConfig(t, v, "embeddings:\n  url: http://127.0.0.1:1/v1/embeddings\n")
	if st := callStatus(t, e); st.State != "misconfigured" || !strings.Contains(st.Reason, "model") {
		t.Errorf("status with a url and no model: %+v", st)
	}
	if r := callSearch(t, e, `{"query":"hound"}`); r.Mode != "lexical" || !strings.Contains(r.Note, "model") {
		t.Errorf("search with a broken configuration: %+v", r)
	}
	f := newFakeProvider(t)
	f.apiKey.Store("s3cret")
	testvault.TrustedConfig(t, v, "embeddings:\n  url: "+f.url()+"\n  model: m\n  api_key_env: TEST_SYNAPSE_KEY\n")
	if _, err := callEmbed(t, e, `{}`); errs.CodeOf(err) != errs.Unavailable || !strings.Contains(errs.Message(err), "401") {
		t.Errorf("embed without the key: %v", err)
	}
	ctx := WithEnviron(context.Background(), append(os.Environ(), "TEST_SYNAPSE_KEY=s3cret"))
	if _, err := opEmbed.Call(ctx, e, []byte(`{}`)); err != nil {
		t.Errorf("embed with the key: %v", err)
	}
	data, _ := os.ReadFile(v.Abs(vault.DBFile))
	if strings.Contains(string(data), "s3cret") {
		t.Error("the API key is in the store")
	}
	// SYNAPSE_EMBED_URL=off turns a configured provider off
	ctx = WithEnviron(context.Background(), append(os.Environ(), EnvEmbedURL+"=off"))
	if out, err := opSearch.Call(ctx, e, []byte(`{"query":"hound"}`)); err != nil || out.(*SearchOut).Mode != "lexical" || out.(*SearchOut).Note != "" {
		t.Errorf("SYNAPSE_EMBED_URL=off: %+v %v", out, err)
	}
}

// TestEmbed_ChangedPageLosesItsOldText: while a changed page waits for its
// next embedding run, semantic search does not rank it by text it no
// longer has: its record keeps only the chunks whose text is unchanged
// (stale until the run), and status counts it pending.
func TestEmbed_ChangedPageLosesItsOldText(t *testing.T) {
	f := newFakeProvider(t)
	v, e := embedVault(t, f, dogPages)
	mustEmbed(t, e)
	const rex = "wiki/entities/rex.md"
	if r := callSearch(t, e, `{"query":"canine park","mode":"semantic"}`); len(r.Hits) == 0 || r.Hits[0].Path != rex {
		t.Fatalf("before the edit: %+v", r.Hits)
	}
	testvault.Write(t, v, rex, "---\ntype: entity\ntags: [animals]\n---\n# Rex\n\nRex is a cat who sleeps in boxes.\n")
	rescanEnv(t, e)
	r := callSearch(t, e, `{"query":"canine park","mode":"semantic"}`)
	if len(r.Hits) == 0 || r.Hits[0].Path == rex {
		t.Errorf("semantic search ranks the edited page by its old text: %+v", r.Hits)
	}
	h := callSearch(t, e, `{"query":"canine park","mode":"hybrid"}`)
	for _, hit := range h.Hits {
		if hit.Path == rex && strings.Contains(strings.Join(hit.Signals, ","), "semantic") && hit.Score >= h.Hits[0].Score && h.Hits[0].Path == rex {
			t.Errorf("hybrid ranks the edited page first by its old text: %+v", h.Hits)
		}
	}
	data, _ := os.ReadFile(v.Abs(rex))
	now := map[store.ChunkKey]bool{}
	for _, c := range embed.ChunkPage("Rex", markdown.Parse(rex, data)) {
		now[c.Key] = true
	}
	_ = e.Store.View(func(tx *store.Tx) error {
		p, ok, err := tx.VecPage(tx.DocByPath(rex))
		if err != nil || !ok || !p.Stale || len(p.Chunks) == 0 {
			t.Errorf("record of the edited page: %+v %v %v (want stale, with its unchanged chunks)", p, ok, err)
			return nil
		}
		for _, c := range p.Chunks {
			if !now[c.Key] {
				t.Errorf("the edited page's record keeps chunk %x (%q), whose text is gone", c.Key[:4], c.Heading)
			}
		}
		return nil
	})
	if st := callStatus(t, e); st.Embedded != 3 || st.Pending != 1 {
		t.Errorf("status after the edit: %+v", st)
	}
	run := mustEmbed(t, e)
	if run.Embedded != 1 || run.Chunks != 1 {
		t.Errorf("the run after the edit: %+v", run)
	}
	if r := callSearch(t, e, `{"query":"cat boxes","mode":"semantic"}`); len(r.Hits) == 0 || r.Hits[0].Path != rex {
		t.Errorf("after the run: %+v", r.Hits)
	}
	if st := callStatus(t, e); st.Embedded != 4 || st.Pending != 0 {
		t.Errorf("status after the run: %+v", st)
	}
}

// TestEmbed_StatusCounts: status counts embedded and pending pages from
// counts the store keeps (it reads no page record, so it stays cheap at
// 100,000 pages), and reports nothing pending when embeddings are off.
func TestEmbed_StatusCounts(t *testing.T) {
	f := newFakeProvider(t)
	v, e := embedVault(t, f, dogPages)
	mustEmbed(t, e)
	testvault.Write(t, v, "wiki/concepts/birds.md", "# Birds\n\nA finch sings.\n")
	testvault.Write(t, v, "wiki/concepts/gardens.md", "# Gardens\n\nRoses grow in June.\n")
	rescanEnv(t, e)
	before := store.VecRecordsRead()
	st := callStatus(t, e)
	if n := store.VecRecordsRead() - before; n != 0 {
		t.Errorf("status read %d page records", n)
	}
	var chunks int
	_ = e.Store.View(func(tx *store.Tx) error {
		return tx.EachVecPage(func(_ uint32, p *store.VecPage) error { chunks += len(p.Chunks); return nil })
	})
	if st.Embedded != 3 || st.Pending != 2 || st.Chunks != chunks || st.Vectors == 0 {
		t.Errorf("status: %+v (chunks in the records: %d)", st, chunks)
	}
	off := WithEnviron(context.Background(), append(os.Environ(), EnvEmbedURL+"=off"))
	out, err := opStatus.Call(off, e, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if st := out.(*StatusOut).Embeddings; st.State != "off" || st.Pending != 0 || st.Embedded != 3 {
		t.Errorf("status with embeddings off: %+v", st)
	}
	data, _ := MarshalJSON(out)
	if strings.Contains(string(data), `"pending":2`) {
		t.Errorf("status --json with embeddings off: %s", data)
	}
}

// TestSearch_HybridNamedPage: a query that names a page (here one of its
// section headings) is ranked as lexical search ranks it, though another
// page is closer by meaning; a question that names no page is decided by
// meaning too.
func TestSearch_HybridNamedPage(t *testing.T) {
	f := newFakeProvider(t)
	_, e := embedVault(t, f, map[string]string{
		"wiki/concepts/pets.md":    "# Pets\n\nA loyal companion at home.\n\n## Hound\n\nTwice daily, never chocolate; fresh water in its bowl beside our kitchen door, walks after breakfast.\n",
		"wiki/concepts/kennels.md": "# Kennels\n\nPuppy, dog, canine: dogs everywhere, fed by the staff.\n",
		"wiki/concepts/gardens.md": "# Gardens\n\nRoses and tulips grow in spring.\n",
	})
	mustEmbed(t, e)
	first := func(q, mode string) string {
		r := callSearch(t, e, fmt.Sprintf(`{"query":%q,"mode":%q}`, q, mode))
		if len(r.Hits) == 0 {
			return ""
		}
		return r.Hits[0].Path
	}
	const q = "Hound"
	if l, s := first(q, "lexical"), first(q, "semantic"); l != "wiki/concepts/pets.md" || s != "wiki/concepts/kennels.md" {
		t.Fatalf("%q: lexical %s, semantic %s (the test needs them to differ)", q, l, s)
	}
	if h := first(q, "hybrid"); h != "wiki/concepts/pets.md" {
		t.Errorf("hybrid %q: %s first, want the page with that heading", q, h)
	}
	if h := first("which canine staff?", "hybrid"); h != "wiki/concepts/kennels.md" {
		t.Errorf("hybrid question: %s first, want kennels.md", h)
	}
}
