package main

import (
	"fmt"
	"time"

	"github.com/synapse-wiki/synapse/embed"
	"github.com/synapse-wiki/synapse/embed/openai"
	"github.com/synapse-wiki/synapse/ops"
)

func init() {
	ops.NewEmbedProvider = func(url, model, apiKey string, timeout time.Duration) embed.Provider {
		return openai.New(url, model, apiKey, timeout)
	}
}

// embedSummary is the status line of the embeddings.
func embedSummary(s *ops.EmbedStatus) string {
	if s == nil || s.Provider == "" {
		if s != nil && s.State == "misconfigured" {
			return "misconfigured: " + s.Reason
		}
		return "off (lexical search only)"
	}
	line := fmt.Sprintf("%s at %s: %s", s.Model, s.Provider, s.State)
	if s.Reason != "" {
		line += " (" + s.Reason + ")"
	}
	line += fmt.Sprintf("; %d pages embedded, %d pending", s.Embedded, s.Pending)
	if s.StoredModel != "" {
		line += fmt.Sprintf("; stored vectors are of %s", s.StoredModel)
	}
	if s.LastRun != nil && s.LastRun.Error != "" {
		line += "; last run: " + s.LastRun.Error
	}
	return line
}

func renderEmbed(o *output, r *ops.EmbedOut) error {
	o.printf("embedded %d pages (%d chunks sent in %d requests, %d reused) in %d ms; %d pages were current, %d removed\n",
		r.Embedded, r.Chunks, r.Requests, r.Reused, r.DurationMS, r.Current, r.Removed)
	o.printf("model %s (%d dimensions) at %s\n", r.Model, r.Dim, r.Provider)
	return nil
}
