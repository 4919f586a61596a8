// Package openai is an embed.Provider for the OpenAI-compatible
// `POST /v1/embeddings` endpoint that OpenAI, Ollama, llama.cpp's server,
// LM Studio, vLLM and synapse's test server (e2e/embed-server) speak.
//
// Every failure is an *embed.ProviderError: Down (no connection, 5xx),
// Slow (no answer within the timeout), Refused (4xx: auth, unknown model,
// bad request; 429 is Refused but worth retrying) or BadAnswer (not JSON,
// not one vector per input).
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/synapse-wiki/synapse/embed"
)

// maxAnswer bounds the answer read (a batch of 64 vectors of 4096
// dimensions as JSON stays well below it).
const maxAnswer = 64 << 20

// transport is shared by every client: connections to a local provider
// are kept alive between requests.
var transport = &http.Transport{
	Proxy:               http.ProxyFromEnvironment,
	DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	MaxIdleConnsPerHost: 8,
	IdleConnTimeout:     90 * time.Second,
}

// Client calls one endpoint with one model.
type Client struct {
	URL     string // e.g. http://127.0.0.1:11434/v1/embeddings
	Model   string
	APIKey  string        // sent as a bearer token when set
	Timeout time.Duration // per request; 0 = the context's deadline only
}

var _ embed.Provider = (*Client)(nil)

// New returns a client.
func New(url, model, apiKey string, timeout time.Duration) *Client {
	return &Client{URL: url, Model: model, APIKey: apiKey, Timeout: timeout}
}

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

type answer struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Embed sends one request for texts.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	body, err := json.Marshal(request{Model: c.Model, Input: texts, EncodingFormat: "float"})
	if err != nil {
		return nil, err
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, &embed.ProviderError{Reason: embed.Refused, Msg: fmt.Sprintf("url %q: %v", c.URL, err)}
	}
	req.Header.Set("Content-Type", "application/json")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	if len(data) > maxAnswer {
		return nil, &embed.ProviderError{Reason: embed.BadAnswer, Msg: fmt.Sprintf("%s answered more than %d MiB", c.URL, maxAnswer>>20)}
	}
	var a answer
	jsonErr := json.Unmarshal(data, &a)
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(data))
		if jsonErr == nil && a.Error != nil && a.Error.Message != "" {
			msg = a.Error.Message
		}
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		pe := &embed.ProviderError{Reason: embed.Refused, Msg: fmt.Sprintf("%s answered %s: %s", c.URL, resp.Status, msg)}
		switch {
		case resp.StatusCode >= 500:
			pe.Reason, pe.Retry = embed.Down, true
		case resp.StatusCode == http.StatusTooManyRequests:
			pe.Retry = true
		}
		return nil, pe
	}
	if jsonErr != nil {
		return nil, &embed.ProviderError{Reason: embed.BadAnswer, Msg: fmt.Sprintf("%s answered something that is not embeddings JSON: %v", c.URL, jsonErr)}
	}
	out := make([][]float32, len(texts))
	if len(a.Data) != len(texts) {
		return nil, &embed.ProviderError{Reason: embed.BadAnswer, Msg: fmt.Sprintf("%s answered %d embeddings for %d inputs", c.URL, len(a.Data), len(texts))}
	}
	for i, d := range a.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= len(out) || out[at] != nil {
			return nil, &embed.ProviderError{Reason: embed.BadAnswer, Msg: fmt.Sprintf("%s answered embedding index %d twice or out of range", c.URL, at)}
		}
		if d.Embedding == nil {
			d.Embedding = []float32{}
		}
		out[at] = d.Embedding
	}
	return out, nil
}

// transportError classifies a failed request: Slow when the deadline
// passed, Down otherwise.
func (c *Client) transportError(ctx context.Context, err error) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded || (errors.As(err, &ne) && ne.Timeout()) {
		wait := "in time"
		if c.Timeout > 0 {
			wait = "within " + c.Timeout.String()
		}
		return &embed.ProviderError{Reason: embed.Slow, Retry: true, Msg: fmt.Sprintf("%s did not answer %s", c.URL, wait)}
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	msg := err.Error()
	var oe *net.OpError
	if errors.As(err, &oe) {
		msg = oe.Err.Error()
	}
	return &embed.ProviderError{Reason: embed.Down, Retry: true, Msg: fmt.Sprintf("cannot reach %s: %s", c.URL, msg)}
}
