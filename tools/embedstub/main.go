// Command embedstub is an OpenAI-compatible /v1/embeddings endpoint that
// answers at once with pseudo-random unit vectors (seeded by each text's
// hash, so a text always gets the same vector): for measuring synapse's own
// cost of semantic and hybrid search without a model's time, e.g. on a
// generated vault whose vectors the embed benchmark stored (model
// "synthetic", 512 dimensions):
//
//	go run ./tools/embedstub -addr 127.0.0.1:7499 -dim 512 &
//	SYNAPSE_EMBED_URL=http://127.0.0.1:7499/v1/embeddings SYNAPSE_EMBED_MODEL=synthetic \
//	  synapse --vault /tmp/g10k search --mode hybrid 'how do I use it with my notes?'
//
// It listens on loopback only and prints "listening URL" once it is ready.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"log"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	dim := flag.Int("dim", 512, "vector dimension")
	flag.Parse()
	if host, _, err := net.SplitHostPort(*addr); err != nil || !net.ParseIP(host).IsLoopback() {
		log.Fatalf("embedstub: -addr %q: only a loopback address is served", *addr)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening http://%s\n", ln.Addr())
	os.Stdout.Sync()
	log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			http.Error(w, `{"error":{"message":"POST /v1/embeddings only"}}`, http.StatusNotFound)
			return
		}
		var req struct {
			Model string          `json:"model"`
			Input json.RawMessage `json:"input"`
		}
		var texts []string
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&req); err != nil ||
			(json.Unmarshal(req.Input, &texts) != nil && json.Unmarshal(req.Input, new(string)) != nil) {
			http.Error(w, `{"error":{"message":"body: want {model, input}"}}`, http.StatusBadRequest)
			return
		}
		if texts == nil {
			var s string
			json.Unmarshal(req.Input, &s)
			texts = []string{s}
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Object string `json:"object"`
			Model  string `json:"model"`
			Data   []item `json:"data"`
		}{Object: "list", Model: req.Model}
		for i, t := range texts {
			out.Data = append(out.Data, item{"embedding", i, vector(t, *dim)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})))
}

// vector is a unit vector drawn from a generator seeded by the text.
func vector(text string, dim int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	r := rand.New(rand.NewPCG(h.Sum64(), 1))
	v := make([]float32, dim)
	n := 0.0
	for i := range v {
		x := r.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}
