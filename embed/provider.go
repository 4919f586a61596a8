// Package embed is synapse's optional semantic search (docs/search.md): pages cut
// into chunks along their headings, each chunk embedded once per text and
// model by an OpenAI-compatible provider, vectors kept in the store
// (store/vectors.go), exact nearest-neighbour search over them, and a
// hybrid ranking that fuses BM25F with cosine similarity per page.
//
// The provider is off by default: with none configured nothing here runs
// and search is lexical. A provider that is down, slow or answers with the
// wrong dimension, NaN or garbage is refused with a message naming the
// problem; no answer of it reaches the store unchecked, and search then
// answers lexically and says why.
//
// The package does no network I/O itself: a Provider (package
// embed/openai speaks HTTP) is handed in. It never prints.
package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Provider turns texts into vectors, one per text, in order.
type Provider interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Reason classifies a provider failure.
type Reason string

// Failure reasons.
const (
	Down      Reason = "down"       // no connection, or a server error
	Slow      Reason = "slow"       // no answer within the timeout
	Refused   Reason = "refused"    // the provider said no (auth, bad request, unknown model)
	BadAnswer Reason = "bad answer" // an answer that is not vectors of the right shape
)

// ProviderError is a failed provider call.
type ProviderError struct {
	Reason Reason
	// Retry says whether trying again may help (Down, Slow, HTTP 429).
	Retry bool
	Msg   string
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("embedding provider %s: %s", e.Reason, e.Msg)
}

// Failure returns the ProviderError in err's chain, if any.
func Failure(err error) (*ProviderError, bool) {
	var pe *ProviderError
	ok := errors.As(err, &pe)
	return pe, ok
}

// badAnswer builds a BadAnswer failure.
func badAnswer(format string, args ...any) error {
	return &ProviderError{Reason: BadAnswer, Msg: fmt.Sprintf(format, args...)}
}

// checkVectors validates a provider's answer for n texts: n vectors, all of
// dimension dim (any one dimension when dim is 0), finite, not all zero.
// It returns the dimension.
func checkVectors(vs [][]float32, n, dim int) (int, error) {
	if len(vs) != n {
		return 0, badAnswer("%d vectors for %d texts", len(vs), n)
	}
	for i, v := range vs {
		if len(v) == 0 {
			return 0, badAnswer("an empty vector (text %d)", i)
		}
		if dim == 0 {
			dim = len(v)
		}
		if len(v) != dim {
			return 0, &ProviderError{Reason: BadAnswer, Msg: fmt.Sprintf("wrong dimension: a vector of %d, expected %d", len(v), dim)}
		}
		zero := true
		for _, f := range v {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return 0, badAnswer("a vector with NaN or infinite components (text %d)", i)
			}
			if f != 0 {
				zero = false
			}
		}
		if zero {
			return 0, badAnswer("an all-zero vector (text %d)", i)
		}
	}
	return dim, nil
}

// CheckVector validates one vector of a provider's answer (a query's, a
// status probe's): of dimension dim (any when dim is 0), finite, not all
// zero. The error is a BadAnswer ProviderError naming the problem.
func CheckVector(v []float32, dim int) error {
	_, err := checkVectors([][]float32{v}, 1, dim)
	return err
}

// normalize returns v scaled to unit length (as float32).
func normalize(v []float32) []float32 {
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	inv := 1 / math.Sqrt(n)
	out := make([]float32, len(v))
	for i, f := range v {
		out[i] = float32(float64(f) * inv)
	}
	return out
}
