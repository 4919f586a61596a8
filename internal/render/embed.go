package render

import (
	"fmt"

	"github.com/synapse-wiki/synapse/ops"
)

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

func Embed(o *Output, r *ops.EmbedOut) error {
	o.Printf("embedded %d pages (%d chunks sent in %d requests, %d reused) in %d ms; %d pages were current, %d removed\n",
		r.Embedded, r.Chunks, r.Requests, r.Reused, r.DurationMS, r.Current, r.Removed)
	o.Printf("model %s (%d dimensions) at %s\n", r.Model, r.Dim, r.Provider)
	return nil
}
